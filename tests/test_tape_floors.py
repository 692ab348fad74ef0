"""Issue 13, the Tensor / tape / dispatch floors: methods bound once from the top, the tape's
bookkeeping in ``autograd/_tape.py`` (CopySlices as a node), one record-if-grad rule."""

import inspect

import pytest

import sparsetorch as st
from sparsetorch import _dispatch, _ops, _tensor_methods
from sparsetorch.autograd import _tape
from sparsetorch.autograd.grad_mode import no_grad

torch = pytest.importorskip("torch")


def test_operators_and_same_signature_forwards_are_the_op_functions():
    assert st.Tensor.__add__ is _ops.pointwise._add
    assert st.Tensor.__getitem__ is _ops.getitem
    assert st.Tensor.t is _ops.t
    named = [n for n in _tensor_methods.DIRECT if not n.startswith("__")]
    assert len(named) >= 30
    for name in named:  # the forward it replaced had exactly the op's parameters after ``self``
        fwd = (vars(_tensor_methods.TensorMethods).get(name)
               or vars(_tensor_methods._DataModelForwards)[name])
        mine = list(inspect.signature(fwd).parameters.values())[1:]
        theirs = list(inspect.signature(getattr(st.Tensor, name)).parameters.values())[1:]
        assert mine == theirs, name


def test_methods_whose_signature_differs_keep_torchs_signature():
    x = st.ones(2)
    assert st.Tensor.mul is not _ops.mul  # _ops.mul takes out=, torch's Tensor.mul does not
    for lib in (st, torch):
        with pytest.raises(TypeError):
            lib.ones(2).mul(lib.ones(2), out=lib.empty(2))
    with pytest.raises(TypeError):
        pow(x, 2, 3)  # __pow__ stays an adapter: pow's third argument is refused, as torch
    assert st.Tensor.mul.__doc__ and st.Tensor.t.__doc__


@pytest.mark.parametrize("part", ["real", "imag", "slice"])
def test_inplace_through_a_view_rebases_with_copyslices_as_torch(part):
    grads, names = [], []
    for lib in (st, torch):
        z = lib.tensor([1 + 2j, 3 - 1j, 0.5 + 0.5j], requires_grad=True)
        w = z * 1
        v = w.real if part == "real" else w.imag if part == "imag" else w[1:]
        v.mul_(3)
        (w * lib.tensor([1 - 1j, 2 + 1j, 1j])).abs().sum().backward()
        grads.append(z.grad.detach().numpy())
        names.append(type(w.grad_fn).__name__)
    assert names == ["CopySlices", "CopySlices"]
    assert grads[0] == pytest.approx(grads[1], abs=1e-5)


def test_copyslices_real_base_and_second_backward():
    a = st.randn(4, 3, requires_grad=True)
    b = a.clone()
    b[1].mul_(3)
    assert isinstance(b.grad_fn, _tape.CopySlices)
    b.sum().backward()
    assert a.grad.tolist()[1] == [3.0, 3.0, 3.0] and a.grad.tolist()[0] == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        b.sum().backward()


def test_record_if_grad_is_the_one_rule():
    op = _dispatch.defop("twice_for_test", {(st.strided,): lambda be, x: x * 2},
                         grads={"input": lambda grad: grad * 2})
    x = st.ones(3, requires_grad=True)

    def result():
        return _dispatch.wrap(x._data * 2, x.dtype, x.device, x.layout)

    r = result()
    _dispatch.record_if_grad(op, r, (x,), ())
    assert type(r.grad_fn).__name__ == "TwiceForTestBackward0" and r.requires_grad
    r.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    with no_grad():
        r = result()
        _dispatch.record_if_grad(op, r, (x,), ())
        assert r.grad_fn is None
        assert (x * 2).grad_fn is None and x.sum().grad_fn is None and (x @ x).grad_fn is None
    r = result()
    _dispatch.record_if_grad(op, r, (st.ones(3),), ())  # no input needs a gradient
    assert r.grad_fn is None
    assert (x * 2).grad_fn is not None and x.sum().grad_fn is not None  # the fast paths record
    assert (x == 1).grad_fn is None  # bool results are never recorded


def test_engine_without_ops_sparse_roots_and_materialized_grads():
    i = st.tensor([[0, 0, 1], [1, 1, 0]])
    s = st.sparse_coo_tensor(i, st.tensor([1.0, 2.0, 3.0]), (2, 2)).requires_grad_(True)
    st.sparse.mm(s, st.ones(2, 2)).sum().backward()  # uncoalesced input: masked, coalesced grad
    assert s.grad.layout is st.sparse_coo and s.grad.is_coalesced()
    assert s.grad.to_dense().tolist() == [[0.0, 2.0], [2.0, 0.0]]
    x = st.ones(3, requires_grad=True)
    gx, gs = st.autograd.grad((x * 2).sum(), [x, s], materialize_grads=True)
    assert gs.layout is st.sparse_coo and gs._nnz() == 0 and tuple(gs.shape) == (2, 2)
    root = st.sparse_coo_tensor(st.tensor([[0], [0]]), st.tensor([2.0]), (1, 1), requires_grad=True)
    with pytest.raises(NotImplementedError, match="ones_like"):
        (root * 2).backward()
