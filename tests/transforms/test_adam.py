"""`transforms.adam.Adam` steps a model exactly as `torch.optim.Adam` does."""

from __future__ import annotations

import copy

import torch
from torch import nn

from transforms.adam import Adam


def test_the_weights_equal_torch_adam_bit_for_bit_over_two_groups() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    twin = copy.deepcopy(model)
    inputs, targets = torch.randn(32, 8), torch.randn(32, 4)

    def groups(m: nn.Sequential) -> list[dict]:
        return [
            {"params": list(m[0].parameters())},
            {"params": list(m[2].parameters()), "lr": 1e-3},
        ]

    ours, theirs = Adam(groups(model), lr=0.01), torch.optim.Adam(groups(twin), lr=0.01)
    for step in range(25):
        for m, optimizer in ((model, ours), (twin, theirs)):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(m(inputs), targets)
            if step % 5 == 3:  # a step where one layer gets no gradient
                loss = m[2](torch.ones(1, 16)).sum()
            loss.backward()
            optimizer.step()
    for a, b in zip(model.parameters(), twin.parameters(), strict=True):
        assert torch.equal(a, b)
    assert all(p.grad is not None for p in model.parameters())
    ours.zero_grad()
    assert all(p.grad is None for p in model.parameters())
