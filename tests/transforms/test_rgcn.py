"""The KGERMAR R-GCN on small hand-built graphs: determinism, training, basis decomposition,
link prediction, the eq. 5 neighbourhood normaliser, fusion and the structural rows."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.import_probe import loaded_after
from transforms.rgcn import RelationWeights, RGCNConfig, RGCNLayer, message_edges, train_rgcn
from transforms.structural_bank import graph_hash, structural_rows

N, D = 30, 16


def _text(n: int = N, dim: int = D, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _ring() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two relations with clear structure: i -next-> i+1 and i -skip-> i+5 (mod N)."""
    nodes = np.arange(N)
    heads = np.concatenate([nodes, nodes])
    relations = np.repeat([0, 1], N)
    tails = np.concatenate([(nodes + 1) % N, (nodes + 5) % N])
    return heads, relations, tails


FAST = RGCNConfig(dim=16, epochs=80)


def test_same_seed_same_embeddings_and_a_different_seed_differs() -> None:
    heads, relations, tails = _ring()
    first = train_rgcn(heads, relations, tails, N, _text(), FAST)
    second = train_rgcn(heads, relations, tails, N, _text(), FAST)
    np.testing.assert_array_equal(first.structural, second.structural)
    np.testing.assert_array_equal(first.fused, second.fused)
    assert first.losses == second.losses
    other = train_rgcn(heads, relations, tails, N, _text(), RGCNConfig(dim=16, epochs=80, seed=1))
    assert not np.array_equal(first.structural, other.structural)
    assert not torch.are_deterministic_algorithms_enabled(), "global torch flag restored"


def _random_graph(n: int = 300, facts: int = 900, relations: int = 12):
    rng = np.random.default_rng(0)
    picks = (rng.integers(0, k, facts) for k in (n, relations, n))
    return (*picks, n, _text(n, 32))


def test_one_thread_is_deterministic_without_the_global_switch() -> None:
    """One CPU thread leaves torch's deterministic switch alone and gets the same weights
    as with it on; two threads switch it on for the run (index_add_ in parallel otherwise
    sums in a varying order) and get the same weights twice."""
    config = RGCNConfig(dim=16, epochs=15)
    plain = train_rgcn(*_random_graph(), config)
    torch.use_deterministic_algorithms(True)
    try:
        switched = train_rgcn(*_random_graph(), config)
    finally:
        torch.use_deterministic_algorithms(False)
    np.testing.assert_array_equal(plain.fused, switched.fused)
    assert plain.losses == switched.losses
    two = RGCNConfig(dim=16, epochs=15, threads=2)
    first, second = (train_rgcn(*_random_graph(), two) for _ in range(2))
    np.testing.assert_array_equal(first.fused, second.fused)
    assert not torch.are_deterministic_algorithms_enabled(), "global torch flag restored"


def test_training_loads_neither_dynamo_nor_inductor() -> None:
    """torch.optim's Adam and torch's deterministic switch import torch._dynamo and
    torch._inductor, about 1 s each process: the default training needs neither."""
    code = (
        "import numpy as np\n"
        "from transforms.rgcn import RGCNConfig, train_rgcn\n"
        "t = np.eye(4, dtype=np.float32)\n"
        "facts = np.array([0, 1]), np.array([0, 0]), np.array([1, 2])\n"
        "train_rgcn(*facts, 4, t, RGCNConfig(epochs=2))"
    )
    assert loaded_after(code, ("torch", "torch._dynamo", "torch._inductor")) == ["torch"]


def test_loss_decreases() -> None:
    result = train_rgcn(*_ring(), N, _text(), FAST)
    assert len(result.losses) == FAST.epochs
    assert np.mean(result.losses[-5:]) < 0.7 * np.mean(result.losses[:5])


def test_basis_decomposition_only_above_the_threshold() -> None:
    rng = np.random.default_rng(3)
    heads, tails = rng.integers(0, N, 60), rng.integers(0, N, 60)
    many = train_rgcn(heads, np.arange(60) % 10, tails, N, _text(), RGCNConfig(epochs=2))
    assert many.uses_bases and many.n_relations == 10
    assert many.decoder_coeff.shape == (10, 4) and many.decoder_bases.shape == (4, D, D)
    few = train_rgcn(heads, np.arange(60) % 3, tails, N, _text(), RGCNConfig(epochs=2))
    assert not few.uses_bases
    np.testing.assert_array_equal(few.decoder_coeff, np.eye(3))
    inverse = RGCNConfig(epochs=2, separate_inverse=True)  # 5 relations + 5 inverses > 8
    assert train_rgcn(heads, np.arange(60) % 5, tails, N, _text(), inverse).uses_bases


@pytest.mark.parametrize("threshold", [8, 1])  # full matrices, then bases
def test_link_prediction_ranks_true_tails_above_random(threshold: int) -> None:
    heads, relations, tails = _ring()
    config = RGCNConfig(dim=16, epochs=150, basis_threshold=threshold)
    result = train_rgcn(heads, relations, tails, N, _text(), config)
    true = {(h, r, t) for h, r, t in zip(heads, relations, tails, strict=True)}
    rng = np.random.default_rng(7)
    corrupt = rng.integers(0, N, (len(heads), 10))
    positive = result.score(heads, relations, tails)
    wins = []
    for j in range(corrupt.shape[1]):
        keep = [
            (h, r, t) not in true for h, r, t in zip(heads, relations, corrupt[:, j], strict=True)
        ]
        negative = result.score(heads, relations, corrupt[:, j])
        wins.append((positive > negative)[keep])
    assert np.mean(np.concatenate(wins)) > 0.85


def test_neighbourhood_is_a_set_in_both_directions_with_mean_normaliser() -> None:
    # 0 -r0-> 1, 2 -r0-> 0 (0 has two r0 neighbours), 1 -r0-> 0 (same pair reversed), and
    # the first fact twice: N_0^r0 = {1, 2}, N_1^r0 = {0}, N_2^r0 = {0}.
    heads, relations, tails = np.array([0, 2, 1, 0]), np.zeros(4, int), np.array([1, 0, 0, 1])
    edges = message_edges(heads, relations, tails, 1, False, torch.device("cpu"))
    found = {
        (int(d), int(s)): float(n) for d, s, n in zip(edges.dst, edges.src, edges.norm, strict=True)
    }
    assert found == {(0, 1): 0.5, (0, 2): 0.5, (1, 0): 1.0, (2, 0): 1.0}
    separate = message_edges(
        np.array([0]), np.array([0]), np.array([1]), 1, True, torch.device("cpu")
    )
    assert sorted(zip(separate.dst.tolist(), separate.rel.tolist(), strict=True)) == [
        (0, 1),
        (1, 0),
    ]


def _matrices(weights: RelationWeights) -> torch.Tensor:
    """Every relation's W_r = Σ_b coeff[r, b] V_b, written out per relation."""
    return torch.stack(
        [
            sum(c * basis for c, basis in zip(row, weights.bases, strict=True))
            for row in weights.coeff
        ]
    )


@pytest.mark.parametrize("bases", [None, 3])
@pytest.mark.parametrize(("d_in", "d_out"), [(12, 5), (5, 12)])
def test_a_layer_is_eq_5_edge_by_edge_whichever_order_it_sums_in(bases, d_in, d_out) -> None:
    """Both orders of the layer's sums (senders summed then projected, for a layer that
    widens; projected then weighed, for one that narrows) give eq. 5 computed edge by edge
    with each relation's matrix written out, and so does the decoder's per-relation
    product."""
    torch.manual_seed(0)
    n, n_relations = 9, 4
    rng = np.random.default_rng(0)
    heads, tails = rng.integers(0, n, 25), rng.integers(0, n, 25)
    relations = rng.integers(0, n_relations, 25)
    edges = message_edges(heads, relations, tails, n_relations, False, torch.device("cpu"))
    layer = RGCNLayer(n_relations, bases, d_in, d_out)
    x = torch.randn(n, d_in)
    with torch.no_grad():
        matrices = _matrices(layer.relations)
        want = layer.self_loop(x).clone()
        for s, d, r, norm in zip(edges.src, edges.dst, edges.rel, edges.norm, strict=True):
            want[d] += norm * (x[s] @ matrices[r])
        torch.testing.assert_close(layer(x, edges), torch.relu(want), rtol=1e-5, atol=1e-6)
        rows = torch.as_tensor(relations)
        by_row = torch.stack([x[i % n] @ matrices[r] for i, r in enumerate(rows.tolist())])
        got = layer.relations.transform(x[torch.arange(25) % n], rows)
        torch.testing.assert_close(got, by_row, rtol=1e-5, atol=1e-6)


def test_the_layers_gradients_are_eq_5s() -> None:
    """The reordered sums carry the same gradients to the bases and coefficients."""
    torch.manual_seed(1)
    heads, relations, tails = _ring()
    edges = message_edges(heads, relations, tails, 2, False, torch.device("cpu"))
    for d_in, d_out in ((12, 5), (5, 12)):
        layer = RGCNLayer(2, 2, d_in, d_out)
        x = torch.randn(N, d_in)
        layer(x, edges).square().sum().backward()
        fast = [p.grad.clone() for p in layer.parameters()]
        layer.zero_grad()
        matrices = _matrices(layer.relations)
        out = layer.self_loop(x)
        messages = torch.einsum("ed,edf->ef", x[edges.src], matrices[edges.rel])
        out = out.index_add(0, edges.dst, messages * edges.norm.unsqueeze(1))
        torch.relu(out).square().sum().backward()
        for got, param in zip(fast, layer.parameters(), strict=True):
            torch.testing.assert_close(got, param.grad, rtol=1e-4, atol=1e-5)


def test_fused_vectors_are_normalised_and_gated() -> None:
    result = train_rgcn(*_ring(), N, _text(), FAST)
    assert result.structural.shape == (N, D) and result.fused.shape == (N, D)
    np.testing.assert_allclose(np.linalg.norm(result.fused, axis=1), 1.0, rtol=1e-5)
    assert ((result.gate > 0) & (result.gate < 1)).all()
    assert (result.structural >= 0).all()  # ReLU on every layer (eq. 5)


def test_entities_without_facts_still_get_embeddings() -> None:
    empty = np.zeros(0, dtype=np.int64)
    result = train_rgcn(empty, empty, empty, 5, _text(5), RGCNConfig(epochs=3))
    assert result.n_relations == 0 and np.isfinite(result.fused).all()
    assert result.fused.shape == (5, D)


def test_structural_rows_and_hash() -> None:
    ids = [f"{i:04x}" for i in range(6)]
    facts = [
        {"head_entity_id": "0000", "relation": "works_at", "tail_entity_id": "0001"},
        {"head_entity_id": "0001", "relation": "located_in", "tail_entity_id": "0002"},
        {"head_entity_id": "0001", "relation": "located_in", "tail_entity_id": "0002"},
        {"head_entity_id": "0003", "relation": "works_at", "tail_entity_id": "ffff"},  # unknown
    ]
    config = RGCNConfig(epochs=3)
    bank = structural_rows(ids, _text(6), facts, config)
    assert bank.n_facts == 2 and bank.relations == ["located_in", "works_at"]
    assert bank.rows.column_names == ["entity_id", "structural", "vector", "gate", "graph_hash"]
    assert bank.rows.schema.field("vector").type.list_size == D
    assert set(bank.rows.column("graph_hash").to_pylist()) == {bank.graph_hash}
    triples = [("0000", "works_at", "0001"), ("0001", "located_in", "0002")]
    assert graph_hash(ids, _text(6), triples, config) == bank.graph_hash
    assert graph_hash(ids, _text(6), triples[:1], config) != bank.graph_hash
    assert graph_hash(ids, _text(6, seed=1), triples, config) != bank.graph_hash
    assert graph_hash(ids, _text(6), triples, RGCNConfig(epochs=4)) != bank.graph_hash
