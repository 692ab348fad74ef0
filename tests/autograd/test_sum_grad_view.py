"""A sum's gradient is a stride-0 broadcast view, as torch's expand: nothing written, in-place
writes refused with torch's message, a leaf's .grad and a sparse gradient's values own memory."""

import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("lib", [st, torch], ids=["sparsetorch", "torch"])
def test_sum_grad_is_an_expanded_view(lib):
    # (ours from 65,536 elements: below, writing the small array beats the leaf's copy of a view)
    x = lib.ones(256, 256, requires_grad=True)
    g, = lib.autograd.grad(x.sum(), x)
    assert g.stride() == (0, 0) and bool((g == 1).all())
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        g.add_(1)
    x.sum().backward()
    assert x.grad.stride() == (256, 1)
    x.grad.add_(1)  # the leaf's gradient owns its memory
    assert bool((x.grad == 2).all())
    s = lib.ones(3, 4, requires_grad=True)
    s.sum().backward()
    s.grad.add_(1)
    assert s.grad.tolist() == [[2.0] * 4] * 3


def test_sum_dim_grad_and_sparse_embedding_values_own_memory():
    x = st.ones(300, 400, requires_grad=True)
    x.sum(dim=1, keepdim=False).sum().backward()
    assert x.grad._data.flags.writeable and bool((x.grad == 1).all())
    e = st.nn.Embedding(10, 3, sparse=True)
    e(st.zeros(30000, dtype=st.int64)).sum().backward()
    v = e.weight.grad._values()
    assert v.stride() == (3, 1) and v._data.flags.writeable
    v.mul_(2)  # clip_grad_norm_ and optimizers write into the values
    assert bool((v == 2).all())
