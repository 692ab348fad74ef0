"""axis= / keepdims= spellings of dim= / keepdim=: the ops torch's parser accepts them for (native
callables with a dim/keepdim parameter) accept them too, with the same results and the same
TypeError when both spellings are passed; the Python-level ones (norm, split, F.softmax) refuse."""

import inspect
import types

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch._numpy_kwargs import FUNCTIONS, METHODS

torch = pytest.importorskip("torch")

A = np.arange(12.0).reshape(3, 4) - 5.0

CASES = [
    "L.sum(x, axis=1)", "x.sum(axis=0)", "x.sum(1, keepdims=True)", "L.sum(x, axis=(0, 1))",
    "x.mean(axis=0)", "L.mean(x, axis=1, keepdims=True)", "x.amax(axis=1, keepdims=True)",
    "L.amin(x, axis=0)", "x.argmax(axis=1)", "L.argmin(x, axis=0, keepdims=True)",
    "x.std(axis=1)", "L.var(x, axis=0, keepdims=True)", "x.prod(axis=1)", "(x > 0).any(axis=1)",
    "L.all(x > -6, axis=0)", "x.cumsum(axis=1)", "L.cumprod(x, axis=0)", "x.max(axis=1)",
    "L.min(x, axis=1, keepdims=True)", "L.logsumexp(x, axis=1)", "x.logsumexp(axis=0, keepdims=True)",
    "x.median(axis=1)", "x.unsqueeze(axis=0)", "L.squeeze(x.unsqueeze(0), axis=0)",
    "L.cat([x, x], axis=1)", "L.stack([x, x], axis=1)", "x.softmax(axis=1)",
    "L.log_softmax(x, axis=0)", "x.index_select(axis=0, index=L.tensor([2, 0]))",
    "L.gather(x, axis=1, index=L.tensor([[0], [1], [3]]))", "L.count_nonzero(x, axis=1)",
    "x.nansum(axis=1)", "L.topk(x, 2, axis=1)", "x.sort(axis=1, descending=True)",
    "x.argsort(axis=0)", "x.chunk(2, axis=1)", "L.diff(x, axis=1)", "L.var_mean(x, axis=1)",
    "L.std_mean(x, axis=0, keepdims=True)", "x.narrow(axis=1, start=1, length=2)",
    "x.select(axis=1, index=2)", "L.unbind(x, axis=1)", "x.kthvalue(2, axis=1)",
    "L.nanmean(x, axis=0)", "x.cummax(axis=1)", "L.quantile(x, 0.5, axis=1, keepdims=True)",
]


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [v for item in r for v in _flat(item)]
    return [np.asarray(r.detach().numpy() if hasattr(r, "detach") else r, dtype=np.float64)]


@pytest.mark.parametrize("expr", CASES)
def test_alias_matches_torch(expr):
    got = eval(expr, {"L": st, "x": st.tensor(A)})  # noqa: S307 - our own table
    want = eval(expr, {"L": torch, "x": torch.tensor(A)})  # noqa: S307
    g, w = _flat(got), _flat(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("expr,word", [
    ("L.sum(x, dim=1, axis=1)", "axis"), ("L.sum(x, 1, axis=1)", "axis"),
    ("x.sum(keepdim=True, keepdims=True, dim=0)", "keepdims"), ("x.mean(0, axis=0)", "axis"),
    ("L.amax(x, 1, False, keepdims=True)", "keepdims"), ("x.norm(axis=1)", "axis"),
    ("x.split(1, axis=1)", "axis"), ("L.nn.functional.softmax(x, axis=1)", "axis"),
    ("x.roll(1, axis=1)", "axis"),
])
def test_both_spellings_or_python_level_ops_refuse(expr, word):
    for lib in (st, torch):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{word}'"):
            eval(expr, {"L": lib, "x": lib.tensor(A)})  # noqa: S307


def test_missing_dim_still_a_type_error():
    with pytest.raises(TypeError):
        st.cumsum(st.tensor(A))
    with pytest.raises(TypeError):
        st.tensor(A).gather(index=st.tensor([[0]]))


def _has_dim(fn):
    try:
        return bool({"dim", "keepdim"} & set(inspect.signature(fn).parameters))
    except (TypeError, ValueError):
        return False


def test_name_lists_follow_torch():
    """Our lists = the torch-native callables whose sparsetorch signature has dim/keepdim."""
    want_f = {n for n in dir(st) if not n.startswith("_") and hasattr(torch, n)
              and callable(getattr(st, n)) and not isinstance(getattr(st, n), type)
              and isinstance(getattr(torch, n), types.BuiltinFunctionType)
              and _has_dim(getattr(st, n))}
    assert want_f == set(FUNCTIONS) & set(dir(st))
    want_m = {n for n in dir(st.Tensor) if not n.startswith("_") and hasattr(torch.Tensor, n)
              and n in st._tensor_methods.TensorMethods.__dict__
              and type(getattr(torch.Tensor, n)).__name__ == "method_descriptor"
              and _has_dim(getattr(st.Tensor, n))}
    assert want_m == set(METHODS)


def test_signatures_and_docs_kept():
    assert "dim" in inspect.signature(st.sum).parameters
    assert st.sum.__doc__ and st.Tensor.sum.__doc__ == st._tensor_methods.TensorMethods.sum.__doc__
    assert st.Tensor.sum.__name__ == "sum"
