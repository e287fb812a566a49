"""Adam for the R-GCN: `torch.optim.Adam`'s update, without `torch.optim`'s first-use cost.

`torch.optim.Adam` imports `torch._dynamo` when it is constructed (its step is wrapped for
`torch.compile`), which costs about 1.1 s of CPU in every process that trains the R-GCN:
each `kgmem build` and each worker of the test suite, for a model that trains in about
0.4 s on the sample corpus. This is the same arithmetic as torch's default CPU path,
`torch.optim.adam._single_tensor_adam` with `amsgrad`, `maximize`, weight decay and
`capturable` off, operation for operation, so the weights it produces are bit-identical
(tests/transforms/test_adam.py steps both side by side). Parameter groups with their own
`lr` are supported, as the R-GCN's fusion matrix needs; nothing else of torch.optim is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

BETAS = (0.9, 0.999)
EPS = 1e-8


class Adam:
    """Adam (Kingma & Ba) over parameter groups: each a mapping with "params" and an
    optional "lr" (default `lr`), betas `BETAS` and eps `EPS` as torch's defaults."""

    def __init__(self, groups: Sequence[Mapping[str, Any]], lr: float) -> None:
        self.groups: list[tuple[list[torch.Tensor], float]] = [
            (list(group["params"]), float(group.get("lr", lr))) for group in groups
        ]
        self.state: dict[torch.Tensor, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}

    def parameters(self) -> Iterable[torch.Tensor]:
        return (p for params, _ in self.groups for p in params)

    def zero_grad(self) -> None:
        """Drop the gradients (torch's default `set_to_none=True`)."""
        for param in self.parameters():
            param.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One update of every parameter that has a gradient."""
        beta1, beta2 = BETAS
        for params, lr in self.groups:
            for param in params:
                if param.grad is None:
                    continue
                step_t, exp_avg, exp_avg_sq = self._state_of(param)
                grad = param.grad
                step_t += 1
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step = step_t.item()
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                denom = (exp_avg_sq.sqrt() / bias_correction2**0.5).add_(EPS)
                param.addcdiv_(exp_avg, denom, value=-step_size)

    def _state_of(self, param: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(step count, first moment, second moment), created as torch creates them: a
        float32 CPU step tensor and zero moments shaped like the parameter."""
        if param not in self.state:
            self.state[param] = (
                torch.tensor(0.0, dtype=torch.float32),
                torch.zeros_like(param, memory_format=torch.preserve_format),
                torch.zeros_like(param, memory_format=torch.preserve_format),
            )
        return self.state[param]
