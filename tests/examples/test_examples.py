"""The smaller examples: quickstart.py, gcn_karate.py, ctr_embeddingbag.py and lenet.py run in quick
mode, learn (lenet's 20 quick steps only run: it learns later) and write their PNG into --out and
nothing else; their helpers (rank AUC, normalised adjacency) are checked against direct formulas.
tutorial.py runs in quick mode and writes nothing."""

import itertools

import numpy as np
import pytest

pytest.importorskip("tqdm")

from ._util import example_env, load_example, run_example, run_quick, summary_value


def test_quickstart(tmp_path):
    out = run_quick("quickstart", tmp_path, "--quick")
    assert summary_value(out, "autograd d(out)/dx") == 4.5
    assert summary_value(out, "SGD steps") == 30
    assert summary_value(out, "final loss") < summary_value(out, "first loss")


def test_gcn_karate_separates_the_factions(tmp_path):
    pytest.importorskip("networkx")
    env = example_env()  # quick mode from the environment variable alone, no --quick flag
    out = run_quick("gcn_karate", tmp_path, env=env)
    assert summary_value(out, "epochs") == 100
    assert "sparse_csr" in out
    assert summary_value(out, "final train loss") < summary_value(out, "first train loss")
    # two labelled nodes; a GCN usually gets 30-32 of the other 32 right
    assert summary_value(out, "test accuracy") >= 0.9


def test_gcn_normalized_adjacency_matches_the_dense_formula():
    nx = pytest.importorskip("networkx")
    import sparsetorch as torch

    gcn = load_example("gcn_karate")
    graph = nx.karate_club_graph()
    a_hat = gcn.normalized_adjacency(graph)
    a = nx.to_numpy_array(graph, nodelist=range(34), weight=None) + np.eye(34)
    d = a.sum(1) ** -0.5
    assert a_hat.layout == torch.sparse_csr
    np.testing.assert_allclose(a_hat.to_dense().numpy(), d[:, None] * a * d[None, :], rtol=1e-6)


def test_ctr_embeddingbag_beats_chance(tmp_path):
    out = run_quick("ctr_embeddingbag", tmp_path, "--quick")
    assert summary_value(out, "final train BCE") < summary_value(out, "first train BCE")
    auc, best = summary_value(out, "final test AUC"), summary_value(out, "planted-model AUC")
    assert 0.65 < auc <= best + 0.02  # chance is 0.5; the planted model bounds what is learnable


def test_lenet_quick_run(tmp_path):
    out = run_quick("lenet", tmp_path, "--quick")
    assert summary_value(out, "SGD steps") == 20
    losses = (summary_value(out, "first loss"), summary_value(out, "final loss"))
    assert all(1.0 < x < 4.0 for x in losses)  # ~log(10) = 2.3 before it learns
    assert 0 <= summary_value(out, "accuracy") <= 1


def test_tutorial_quick_run_writes_nothing(tmp_path):
    out = run_example("tutorial", "--quick", cwd=tmp_path)
    assert "Tutorial done" in out
    assert list(tmp_path.iterdir()) == []


def test_ctr_auc_matches_pairwise_counting():
    import sparsetorch as torch

    ctr = load_example("ctr_embeddingbag")
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 6, 300).astype(np.float64)  # many ties
    labels = (rng.random(300) < 0.2 + 0.1 * scores).astype(np.float32)
    pos, neg = scores[labels == 1], scores[labels == 0]
    pairs = [(p > n) + 0.5 * (p == n) for p, n in itertools.product(pos, neg)]
    expected = sum(pairs) / len(pairs)
    got = ctr.auc(torch.from_numpy(scores), torch.from_numpy(labels))
    assert got == pytest.approx(expected, abs=1e-12)


def test_ctr_collate_gives_embeddingbag_inputs():
    import sparsetorch as torch

    ctr = load_example("ctr_embeddingbag")
    truth = ctr.planted_truth(np.random.default_rng(0))
    data = ctr.ClickLog(5, np.random.default_rng(1), truth)
    fields, labels = ctr.collate([data[i] for i in range(5)])
    assert len(fields) == len(ctr.VOCABS) and labels.dtype == torch.float32
    for f, (ids, offsets) in enumerate(fields):
        lengths = [len(data[i][0][f]) for i in range(5)]
        assert offsets.tolist() == np.concatenate([[0], np.cumsum(lengths)[:-1]]).tolist()
        assert ids.tolist() == np.concatenate([data[i][0][f] for i in range(5)]).tolist()
