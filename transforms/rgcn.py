"""KGERMAR structural entity embeddings: an R-GCN trained by link prediction, fused with
text embeddings (paper §2.3, eqs. 5–7 and the L_KG / L_alignment terms of eq. 13).

Inputs are plain arrays (head, relation and tail indices of the facts, the number of
entities, the entities' text embedding matrix), so the module knows nothing of the
warehouse. Message passing is a gather and an `index_add_` into the receiving nodes, in
the order that moves fewer numbers per edge (`RGCNLayer.forward`); there is no Python loop
over edges. The decoder multiplies each relation's facts by that relation's matrix
(`RelationWeights.transform`). Both replaced batched products of one tiny matrix per
edge or fact, which took 70 % of an epoch on the CPU: at 13k entities and 23k facts (the
10,000-document bench's graph), one thread, 2.9 -> 1.35 s an epoch with 20 relation types
(bases) and 4.1 -> 1.8 s with 6 (a matrix each). The same function: trained vectors
differ from before only as rounding differences grow over the epochs.

Encoder (eq. 5): ``h_i' = ReLU(W_0 h_i + Σ_r Σ_{j∈N_i^r} 1/|N_i^r| · W_r h_j)`` with
``N_i^r`` the neighbours through relation r in *both* directions. As the paper says,
incoming and outgoing edges share one ``W_r``; ``separate_inverse=True`` gives inverse
relations their own matrices (Schlichtkrull et al.'s original R-GCN) instead. ``N_i^r``
is a set: duplicate facts, and a pair related both ways, count once.

Decoder and loss (eq. 13): the bilinear scorer ``σ(h_h^T W_r h_t)`` with a full matrix per
relation (RESCAL form, as the paper writes it, not DistMult's diagonal), binary cross
entropy on every current fact against ``negatives`` corruptions per fact whose tail is
replaced by a uniformly drawn entity, plus the text–graph alignment MSE
``||h_e − e_text||²``. The paper weights L_KG by 0.1 and L_alignment by 0.01 inside its LM
loss; without the LM term we keep their ratio (alignment weight 0.1 relative to L_KG)
and average the BCE over triples rather than summing it (a scale Adam is insensitive to).

Choices where the paper is silent:
- two layers (``layers``), hidden width ``dim`` (64); the last layer outputs the text
  dimension, because eq. 7 adds ``h + e_text`` and L_alignment subtracts them, which
  only type-checks when d_kg = d_text = d_final;
- initial features ``h^(0)`` are the entities' text embeddings (an entity without facts
  then still gets an embedding, and the encoder is inductive);
- basis decomposition ``W_r = Σ_b a_rb V_b`` (Schlichtkrull et al.) with ``bases`` = 4
  bases, used for both the encoder and the decoder whenever the number of relation
  types (counting inverses when separate) exceeds ``basis_threshold`` = 8; below that a
  full matrix per relation is cheap and the facts per relation are enough to fit it;
- the confidence weight w of a triple is a filter only (eq. 5 does not use it);
- full-batch Adam, lr 0.01, ``epochs`` = 60, fresh negatives every epoch.

Fusion (eqs. 6–7): ``e_i = W_fusion [h_i ; e_text_i] + a_i (h_i + e_text_i)``. The paper's
``a_i = softmax(h_i · e_text_i / √d_kg)`` is a softmax over one scalar, identically 1.
We read it as a softmax over two logits, the scaled agreement and a null logit 0 (the
"attend to the cross-modal sum or not" choice), which equals ``sigmoid(h_i·e_text_i/√d)``:
a per-entity gate in (0, 1) that grows with text–graph agreement. A softmax over all
entities would shrink every gate to about 1/N and make the term vanish on large graphs.
``W_fusion`` starts as ``[0 | I]`` (the fused vector begins at the text embedding plus the
gated sum) and is trained by the paper's margin ranking loss L_retrieval (ε = 0.1, weight
0.05 relative to 0.1 for L_KG, so 0.5 here) with pseudo-queries, since a build has no
query log: an entity's text embedding (what the query encoder produces for its name and
description) must score its own fused vector above a random other entity's by ε. That
keeps the fused space comparable with query vectors, which is how the structural bank
is searched. The fused vectors are returned L2-normalised.

Determinism: ``torch.manual_seed(seed)``, the CPU thread count fixed (``threads``, default
1) for the run and restored after (with deterministic algorithms switched on as well on
CUDA and on more than one CPU thread), a seeded generator for negatives. Adam is
`transforms.adam.Adam`: torch's update, without torch.optim's import of ``torch._dynamo``.
CPU unless ``device`` asks for CUDA ("cuda", or "auto" when one is present). The sample
corpus (about 60 entities, 40 facts) trains in about 2 s.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from transforms.adam import Adam


@dataclass(frozen=True)
class RGCNConfig:
    """Hyperparameters of the encoder, decoder, fusion and training run."""

    dim: int = 64
    layers: int = 2
    epochs: int = 60
    lr: float = 0.01
    fusion_lr: float = 0.001
    """Adam moves every weight by about lr per step whatever its gradient's scale, so the
    fusion matrix, which starts at a good point ([0 | I]), takes smaller steps."""
    negatives: int = 4
    bases: int = 4
    basis_threshold: int = 8
    separate_inverse: bool = False
    alignment_weight: float = 0.1
    retrieval_weight: float = 0.5
    margin: float = 0.1
    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    """CPU threads for the run: small graphs train several times faster on one thread than
    on contended cores, and a fixed count keeps float summation order, hence results."""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class RGCNResult:
    """Trained embeddings, the decoder needed to score triples, and the training record."""

    structural: np.ndarray
    """n_entities x d_kg: the R-GCN output h^(L)."""
    fused: np.ndarray
    """n_entities x d_text: eq. 7, L2-normalised."""
    gate: np.ndarray
    """n_entities: the fusion gate a_i."""
    decoder_coeff: np.ndarray
    """n_relations x n_bases (identity without basis decomposition)."""
    decoder_bases: np.ndarray
    """n_bases x d_kg x d_kg: W_r = Σ_b coeff[r, b] · bases[b]."""
    losses: list[float]
    uses_bases: bool
    n_relations: int
    seconds: float
    device: str
    state: dict[str, np.ndarray]
    """The trained weights (encoder, decoder, fusion), for a later warm start."""
    warm_started: bool = False

    def score(self, heads: np.ndarray, relations: np.ndarray, tails: np.ndarray) -> np.ndarray:
        """Link-prediction logits h_h^T W_r h_t of the given triples."""
        h, t = self.structural[heads], self.structural[tails]
        projected = np.einsum("ed,bdf->ebf", h, self.decoder_bases)
        weights = self.decoder_coeff[relations]
        return np.einsum("eb,ebf,ef->e", weights, projected, t)


class RelationWeights(nn.Module):
    """Per-relation matrices, stored whole or as a basis decomposition."""

    def __init__(self, n_relations: int, n_bases: int | None, d_in: int, d_out: int) -> None:
        super().__init__()
        count = n_bases if n_bases else n_relations
        bound = math.sqrt(6.0 / (d_in + d_out))  # Glorot-uniform per matrix
        self.bases = nn.Parameter(torch.empty(count, d_in, d_out).uniform_(-bound, bound))
        if n_bases:
            self.coeff = nn.Parameter(torch.empty(n_relations, n_bases))
            nn.init.xavier_uniform_(self.coeff)
        else:
            self.register_buffer("coeff", torch.eye(n_relations))

    def transform(self, x: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
        """Row e of the result is W_{relations[e]} applied to x[e] (x: E x d_in): the rows
        of each relation multiplied by its matrix W_r = Σ_b coeff[r, b] V_b, made for that
        relation alone. Multiplying every row by every basis and contracting per row (a
        batched product of E 1 x count matrices) took most of an epoch on the CPU."""
        order = torch.argsort(relations, stable=True)
        kinds, counts = torch.unique_consecutive(relations[order], return_counts=True)
        flat = self.bases.reshape(len(self.bases), -1)
        groups = torch.split(x[order], counts.tolist())
        parts = [
            rows @ (self.coeff[kind] @ flat).reshape(self.bases.shape[1:])
            for kind, rows in zip(kinds.tolist(), groups, strict=True)
        ]
        out = torch.cat(parts) if parts else x.new_zeros(0, self.bases.shape[2])
        return out[torch.argsort(order)]

    def apply_all(self, x: torch.Tensor) -> torch.Tensor:
        """N x count x d_out: every node through every basis (or relation) matrix."""
        return torch.einsum("nd,bdf->nbf", x, self.bases)


class RGCNLayer(nn.Module):
    """One eq. 5 layer: self-connection plus the per-relation mean of neighbour messages."""

    def __init__(self, n_relations: int, n_bases: int | None, d_in: int, d_out: int) -> None:
        super().__init__()
        self.self_loop = nn.Linear(d_in, d_out, bias=False)
        self.relations = RelationWeights(n_relations, n_bases, d_in, d_out)

    def forward(self, x: torch.Tensor, edges: EdgeIndex) -> torch.Tensor:
        """self_loop(x) + Σ over each node's messages norm · Σ_b coeff[rel, b] V_b x_src,
        in whichever order moves fewer numbers per edge: a layer that widens (d_in <
        d_out) adds up each node's senders per basis first and projects the sums once;
        one that narrows projects every node by every basis first and weighs the senders'
        projections. Both are eq. 5; they differ only in rounding."""
        out = self.self_loop(x)
        if edges.size:
            weight = self.relations.coeff[edges.rel] * edges.norm.unsqueeze(1)  # E x count
            count, d_in, d_out = self.relations.bases.shape
            if d_in < d_out:
                senders = x[edges.src].unsqueeze(1) * weight.unsqueeze(2)  # E x count x d_in
                summed = x.new_zeros(len(x), count, d_in).index_add(0, edges.dst, senders)
                out = out + summed.reshape(len(x), -1) @ self.relations.bases.reshape(-1, d_out)
            else:
                projected = self.relations.apply_all(x)[edges.src]  # E x count x d_out
                out = out.index_add(0, edges.dst, (projected * weight.unsqueeze(2)).sum(1))
        return F.relu(out)


@dataclass(frozen=True)
class EdgeIndex:
    """Directed message edges src -> dst with relation and 1/|N_dst^rel| normaliser."""

    src: torch.Tensor
    dst: torch.Tensor
    rel: torch.Tensor
    norm: torch.Tensor

    @property
    def size(self) -> int:
        return int(self.src.numel())


def message_edges(
    heads: np.ndarray,
    relations: np.ndarray,
    tails: np.ndarray,
    n_relations: int,
    separate_inverse: bool,
    device: torch.device,
) -> EdgeIndex:
    """Both directions of every fact, deduplicated per (receiver, relation, sender), with
    the mean normaliser 1/|N_i^r| of eq. 5."""
    inverse = relations + n_relations if separate_inverse else relations
    triples = np.stack(
        [np.concatenate([tails, heads]), np.concatenate([relations, inverse]),
         np.concatenate([heads, tails])],
        axis=1,
    ).astype(np.int64)  # fmt: skip
    triples = np.unique(triples, axis=0) if len(triples) else triples.reshape(0, 3)
    dst, rel, src = triples[:, 0], triples[:, 1], triples[:, 2]
    _, group, counts = np.unique(triples[:, :2], axis=0, return_inverse=True, return_counts=True)
    norm = 1.0 / counts[group.reshape(-1)] if len(triples) else np.zeros(0)
    as_long = {"dtype": torch.long, "device": device}
    return EdgeIndex(
        src=torch.as_tensor(src, **as_long),
        dst=torch.as_tensor(dst, **as_long),
        rel=torch.as_tensor(rel, **as_long),
        norm=torch.as_tensor(norm, dtype=torch.float32, device=device),
    )


def uses_bases(n_relations: int, config: RGCNConfig) -> tuple[bool, bool]:
    """Whether the layers and the decoder use basis decomposition for `n_relations` types."""
    message_relations = max(1, n_relations * (2 if config.separate_inverse else 1))
    return message_relations > config.basis_threshold, n_relations > config.basis_threshold


class KgermarEncoder(nn.Module):
    """R-GCN encoder, bilinear link-prediction decoder and cross-modal fusion."""

    def __init__(self, d_text: int, n_relations: int, config: RGCNConfig) -> None:
        super().__init__()
        message_relations = max(1, n_relations * (2 if config.separate_inverse else 1))
        self.uses_bases, decoder_uses_bases = uses_bases(n_relations, config)
        layer_bases = config.bases if self.uses_bases else None
        widths = [d_text] + [config.dim] * (config.layers - 1) + [d_text]
        self.layers = nn.ModuleList(
            RGCNLayer(message_relations, layer_bases, d_in, d_out)
            for d_in, d_out in itertools.pairwise(widths)
        )
        decoder_bases = config.bases if decoder_uses_bases else None
        self.decoder = RelationWeights(max(n_relations, 1), decoder_bases, d_text, d_text)
        self.fusion = nn.Linear(2 * d_text, d_text, bias=False)
        with torch.no_grad():
            self.fusion.weight.zero_()
            self.fusion.weight[:, d_text:] = torch.eye(d_text)

    def encode(self, text: torch.Tensor, edges: EdgeIndex) -> torch.Tensor:
        h = text
        for layer in self.layers:
            h = layer(h, edges)
        return h

    def fuse(self, h: torch.Tensor, text: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Eq. 7 with the eq. 6 gate read as sigmoid (see the module docstring)."""
        gate = torch.sigmoid((h * text).sum(1) / math.sqrt(h.shape[1]))
        fused = self.fusion(torch.cat([h, text], dim=1)) + gate.unsqueeze(1) * (h + text)
        return fused, gate


def train_rgcn(
    heads: np.ndarray,
    relations: np.ndarray,
    tails: np.ndarray,
    n_entities: int,
    text: np.ndarray,
    config: RGCNConfig | None = None,
    n_relations: int | None = None,
    warm_start: dict[str, np.ndarray] | None = None,
    epochs: int | None = None,
    relation_map: np.ndarray | None = None,
) -> RGCNResult:
    """Train the encoder on the facts (index arrays into the entities and relation types)
    and return structural and fused embeddings for all `n_entities` rows of `text`.

    `warm_start` (a previous result's `state`, for the same widths) starts from those
    weights instead of a fresh initialisation, with `relation_map` giving each relation
    type's index in that state (-1: a type it did not have; None: the same types);
    `epochs` overrides the configured count (a warm start needs fewer)."""
    config = config or RGCNConfig()
    heads, relations, tails = (np.asarray(a, dtype=np.int64) for a in (heads, relations, tails))
    if text.shape[0] != n_entities:
        raise ValueError(f"text has {text.shape[0]} rows for {n_entities} entities")
    if len(heads) and (max(heads.max(), tails.max()) >= n_entities or min(heads.min(), 0) < 0):
        raise ValueError("fact indices out of range of the entities")
    n_relations = n_relations or (int(relations.max()) + 1 if len(relations) else 0)
    device = _device(config.device)
    started = time.perf_counter()
    with _deterministic(config.seed, device, config.threads):
        model = KgermarEncoder(text.shape[1], n_relations, config).to(device)
        if warm_start is not None:
            _load_state(model, warm_start, relation_map, config.separate_inverse)
        features = torch.as_tensor(np.asarray(text, np.float32), device=device)
        edges = message_edges(heads, relations, tails, n_relations, config.separate_inverse, device)
        facts = tuple(torch.as_tensor(a, device=device) for a in (heads, relations, tails))
        generator = torch.Generator(device=device).manual_seed(config.seed)
        fusion = list(model.fusion.parameters())
        others = [p for n, p in model.named_parameters() if not n.startswith("fusion.")]
        optimizer = Adam(
            [{"params": others}, {"params": fusion, "lr": config.fusion_lr}], lr=config.lr
        )
        losses = []
        for _ in range(config.epochs if epochs is None else epochs):
            optimizer.zero_grad()
            loss = _loss(model, features, edges, facts, n_entities, config, generator)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
        model.eval()
        with torch.no_grad():
            h = model.encode(features, edges)
            fused, gate = model.fuse(h, features)
            fused = F.normalize(fused, dim=1)
        decoder = model.decoder
        return RGCNResult(
            structural=h.cpu().numpy(),
            fused=fused.cpu().numpy(),
            gate=gate.cpu().numpy(),
            decoder_coeff=decoder.coeff.detach().cpu().numpy(),
            decoder_bases=decoder.bases.detach().cpu().numpy(),
            losses=losses,
            uses_bases=model.uses_bases,
            n_relations=n_relations,
            seconds=round(time.perf_counter() - started, 3),
            device=str(device),
            state={k: v.detach().cpu().numpy() for k, v in model.state_dict().items()},
            warm_started=warm_start is not None,
        )


def _load_state(
    model: KgermarEncoder,
    state: dict[str, np.ndarray],
    relation_map: np.ndarray | None,
    separate_inverse: bool,
) -> None:
    """Load `state` into `model`. Tensors indexed by relation type (the per-relation rows
    of the layers' and decoder's weights) are carried over row by row through
    `relation_map` (new relation index -> previous index, -1 for a new type, which keeps
    its fresh initialisation); None means the same relation types in the same order.
    Weights of another shape (another width, or the basis decomposition switched on or
    off) are refused: a warm start would be meaningless."""
    current = model.state_dict()
    unknown = sorted(set(current) ^ set(state))
    if unknown:
        raise ValueError(f"warm-start weights do not fit this model: {', '.join(unknown)}")
    parameters = dict(model.named_parameters())
    loaded = {}
    for name, tensor in current.items():
        old = torch.as_tensor(state[name])
        if name.endswith(".coeff") and name not in parameters:
            loaded[name] = tensor  # no basis decomposition: a fixed identity, rebuilt
            continue
        rows = _relation_rows(name, parameters, relation_map, separate_inverse)
        if rows is None:
            if old.shape != tensor.shape:
                raise ValueError(f"warm-start weights do not fit this model: {name}")
            loaded[name] = old
            continue
        if old.shape[1:] != tensor.shape[1:]:
            raise ValueError(f"warm-start weights do not fit this model: {name}")
        carried = tensor.clone()
        kept = np.flatnonzero(rows >= 0)
        carried[torch.as_tensor(kept)] = old[torch.as_tensor(rows[kept])]
        loaded[name] = carried
    model.load_state_dict(loaded)


def _relation_rows(
    name: str,
    parameters: dict[str, nn.Parameter],
    relation_map: np.ndarray | None,
    separate_inverse: bool,
) -> np.ndarray | None:
    """For a tensor whose first axis is the relation type, the previous row of each of
    its rows; None for any other tensor (or when the relation types are unchanged)."""
    if relation_map is None:
        return None
    module = name.rsplit(".", 1)[0]
    by_relation = (
        name.endswith(".coeff")
        if f"{module}.coeff" in parameters  # basis decomposition: coefficients per relation
        else name.endswith(".bases")  # a whole matrix per relation
    )
    if not by_relation or not (module.endswith("relations") or module == "decoder"):
        return None
    if module == "decoder" or not separate_inverse:
        return relation_map
    n_old = int(relation_map.max(initial=-1)) + 1
    inverse = np.where(relation_map >= 0, relation_map + n_old, -1)
    return np.concatenate([relation_map, inverse])


def _loss(
    model: KgermarEncoder,
    text: torch.Tensor,
    edges: EdgeIndex,
    facts: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    n_entities: int,
    config: RGCNConfig,
    generator: torch.Generator,
) -> torch.Tensor:
    """L_KG + alignment_weight · L_alignment + retrieval_weight · L_retrieval."""
    h = model.encode(text, edges)
    loss = config.alignment_weight * (h - text).pow(2).sum(1).mean()
    heads, relations, tails = facts
    if heads.numel():
        query = model.decoder.transform(h[heads], relations)  # P x d: h_h^T W_r
        positive = (query * h[tails]).sum(1)
        corrupt = torch.randint(
            n_entities, (heads.numel(), config.negatives), generator=generator,
            device=text.device,
        )  # fmt: skip
        negative = (query.unsqueeze(1) * h[corrupt]).sum(2)  # P x negatives
        logits = torch.cat([positive, negative.reshape(-1)])
        labels = torch.cat([torch.ones_like(positive), torch.zeros_like(negative.reshape(-1))])
        loss = loss + F.binary_cross_entropy_with_logits(logits, labels)
    if n_entities > 1 and config.retrieval_weight:
        fused = F.normalize(model.fuse(h, text)[0], dim=1)
        queries = F.normalize(text, dim=1)
        offset = torch.randint(
            1, n_entities, (n_entities,), generator=generator, device=text.device
        )
        other = (torch.arange(n_entities, device=text.device) + offset) % n_entities
        own = (queries * fused).sum(1)
        rival = (queries * fused[other]).sum(1)
        loss = loss + config.retrieval_weight * F.relu(config.margin + rival - own).mean()
    return loss


def _device(requested: str) -> torch.device:
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {requested!r} requested but CUDA is not available")
    return torch.device(requested)


@contextlib.contextmanager
def _deterministic(seed: int, device: torch.device, threads: int) -> Iterator[None]:
    """Seed torch and fix the CPU thread count for the block, and switch deterministic
    algorithms on where they make a difference; the previous settings are restored after.

    The switch matters on CUDA, and on the CPU with more than one thread: `index_add_`
    then accumulates in parallel, in an order that varies from run to run. On one CPU
    thread (the default) every operation of the encoder is deterministic without it (the
    same weights, bit for bit: tests/transforms/test_rgcn.py), and the switch is left
    alone, because `torch.use_deterministic_algorithms` imports `torch._inductor`: about
    1 s of CPU in every process that trains."""
    previous_threads = torch.get_num_threads()
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    switch = device.type == "cuda" or threads > 1
    if device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if switch:
        enabled = torch.are_deterministic_algorithms_enabled()
        warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
        torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        if switch:
            torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
        torch.set_num_threads(previous_threads)
