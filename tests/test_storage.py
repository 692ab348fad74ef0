"""Tensor.storage() / untyped_storage() (read-only views of the memory behind a dense tensor) and
torch.is_storage, against torch where they overlap."""

import warnings

import numpy as np
import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


def _both(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(torch), fn(st)


def test_untyped_storage_reports_as_torch():
    t, s = _both(lambda lib: lib.arange(6.0).reshape(2, 3).untyped_storage())
    assert (s.nbytes(), s.size(), s.element_size(), len(s)) == \
        (t.nbytes(), t.size(), t.element_size(), len(t))
    assert s.tolist() == t.tolist() and s[4] == t[4]
    assert str(s.device) == "cpu" and not s.is_cuda and not s.is_sparse


def test_typed_storage_reports_as_torch():
    for dt in ("float32", "float64", "int64", "bool", "bfloat16"):
        t, s = _both(lambda lib: lib.arange(5).to(getattr(lib, dt))[1:].storage())
        assert (s.size(), s.element_size(), s.nbytes(), s.tolist()) == \
            (t.size(), t.element_size(), t.nbytes(), t.tolist())
        assert s.dtype is getattr(st, dt)
        assert s.untyped().nbytes() == t.untyped().nbytes()


def test_data_ptr_tells_sharing():
    x = st.arange(12.0).reshape(3, 4)
    base = x.untyped_storage().data_ptr()
    assert base == x.data_ptr()
    for view in (x[1], x.t(), x[:, 2], x.view(12), x.detach()):
        assert view.untyped_storage().data_ptr() == base
    assert x.clone().untyped_storage().data_ptr() != base
    a = np.zeros(4, np.float32)
    assert st.from_numpy(a).untyped_storage().data_ptr() == a.ctypes.data


def test_is_storage():
    x = st.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = x.storage()
    assert st.is_storage(x.untyped_storage()) and st.is_storage(typed)
    assert not any(st.is_storage(o) for o in (x, x.numpy(), [1.0], None, 3))
    assert torch.is_storage(torch.ones(3).untyped_storage())


def test_sparse_has_no_storage_as_in_torch():
    with pytest.raises(NotImplementedError, match="Cannot access storage of SparseTensorImpl"):
        st.ones(2).to_sparse().untyped_storage()
    with pytest.raises(NotImplementedError, match="Cannot access storage of SparseCsrTensorImpl"):
        st.ones(2, 2).to_sparse_csr().storage()


def test_storage_is_read_only_and_not_constructible():
    s = st.ones(2).untyped_storage()
    assert not hasattr(s, "fill_") and not hasattr(s, "resize_")
    with pytest.raises(RuntimeError, match="read-only"):
        type(s)()
    with pytest.raises(AttributeError):
        s.extra = 1
