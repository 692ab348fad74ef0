"""EmbeddingBag on a bfloat16 table (SciPy has no bfloat16: the sums run in float32 and round once),
forward and table gradient against torch's bfloat16 results, dense and sparse gradients."""

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


# torch refuses sparse gradients in max mode (our extension is tested in tests/nn/test_embedding.py)
@pytest.mark.parametrize("mode,weighted,sparse", [
    (m, w, s) for m, w in [("sum", False), ("sum", True), ("mean", False), ("max", False)]
    for s in (False, True) if not (s and m == "max")])
def test_embedding_bag_bfloat16_as_torch(mode, weighted, sparse):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((8, 3)).astype(np.float32)
    p0 = rng.random(5).astype(np.float32)
    ids, offs = [1, 2, 4, 5, 1], [0, 2]
    outs, grads = [], []
    for lib in (st, torch):
        w = lib.tensor(w0).to(lib.bfloat16).requires_grad_()
        psw = lib.tensor(p0).to(lib.bfloat16) if weighted else None
        y = lib.nn.functional.embedding_bag(lib.tensor(ids), w, lib.tensor(offs), mode=mode,
                                            sparse=sparse, per_sample_weights=psw)
        y.pow(2).sum().backward()
        assert y.dtype == lib.bfloat16 and w.grad.dtype == lib.bfloat16
        assert w.grad.is_sparse == sparse
        outs.append(y.detach().float().numpy())
        grads.append(w.grad.to_dense().float().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=2 ** -7, atol=2 ** -7)
    np.testing.assert_allclose(grads[0], grads[1], rtol=2 ** -7, atol=2 ** -7)
