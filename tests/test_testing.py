"""sparsetorch.testing: assert_close (messages as torch.testing's) and make_tensor."""

import re

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.testing import assert_close, make_tensor

T = st.tensor


def _message(fn, *args, **kwargs):
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return type(info.value), str(info.value)


# ---- passing comparisons ----

@pytest.mark.parametrize("actual,expected,kwargs", [
    (T([1.0, 2.0]), T([1.0, 2.0 + 1e-6]), {}),
    (T([1.0, 2.0], dtype=st.float64), T([1.0, 2.0 + 1e-8], dtype=st.float64), {}),
    (T([1, 2]), T([1, 2]), {}),
    (T([1.0, 2.0]), T([1.0, 2.0], dtype=st.float64), {"check_dtype": False}),
    (T([1, 2]), T([1.0, 2.0]), {"check_dtype": False}),
    (T([float("nan")]), T([float("nan")]), {"equal_nan": True}),
    (T([1.0, float("inf")]), T([1.0, float("inf")]), {}),
    (T([1.0]), T([1.1]), {"rtol": 0.2, "atol": 0.0}),
    (T([1.0, 2.0]), T([1.0, 2.0]).requires_grad_(), {}),
    (T([], dtype=st.float32), T([]), {}),
    (1.0, 1.0 + 1e-9, {}),
    (np.float64(1.0), 1.0, {}),
    (np.array([1.0, 2.0]), np.array([1.0, 2.0]), {}),
    ((1, 2), [1, 2], {}),
    ({"a": T(1.0), "b": [T([2.0])]}, {"a": T(1.0), "b": [T([2.0])]}, {}),
    (None, None, {}),
    (T([1 + 1j]), T([1 + 1j]), {}),
])
def test_close_inputs_pass(actual, expected, kwargs):
    assert_close(actual, expected, **kwargs)


# ---- failure messages (torch.testing's wording) ----

def test_tensor_mismatch_message():
    err, msg = _message(assert_close, T([1.0, 2.0, 3.0]), T([1.0, 2.5, 3.0]))
    assert err is AssertionError
    assert msg == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)"
    )


def test_integer_mismatch_message():
    _, msg = _message(assert_close, T([1, 2, 3]), T([1, 4, 3]))
    assert msg == (
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 2 at index (1,)\n"
        "Greatest relative difference: 0.5 at index (1,)"
    )


def test_two_dim_index_and_zero_expected():
    _, msg = _message(assert_close, T([[0.0, 0.0], [0.0, 5.0]]), T([[0.0, 0.0], [0.0, 0.0]]))
    assert "Mismatched elements: 1 / 4 (25.0%)" in msg
    assert "Greatest absolute difference: 5.0 at index (1, 1)" in msg
    assert "Greatest relative difference: inf at index (1, 1)" in msg


def test_scalar_tensor_message():
    _, msg = _message(assert_close, T(1.0), T(2.0))
    assert msg == (
        "Scalars are not close!\n\nExpected 2.0 but got 1.0.\n"
        "Absolute difference: 1.0 (up to 1e-05 allowed)\n"
        "Relative difference: 0.5 (up to 1.3e-06 allowed)"
    )


def test_python_number_messages():
    assert _message(assert_close, 1, 2)[1] == (
        "Scalars are not equal!\n\nExpected 2 but got 1.\nAbsolute difference: 1\n"
        "Relative difference: 0.5"
    )
    assert "up to 1e-07 allowed" in _message(assert_close, 1.0, 1.1)[1]
    assert _message(assert_close, 1, 1.0) == (
        AssertionError, "The (d)types do not match: <class 'int'> != <class 'float'>."
    )
    assert _message(assert_close, True, False) == (
        AssertionError, "Booleans mismatch: True is not False"
    )


@pytest.mark.parametrize("actual,expected,attr", [
    (T([1.0, 2.0]), T([1.0, 2.0, 3.0]), "shape"),
    (T([1.0, 2.0]), T([1.0, 2.0], dtype=st.float64), "dtype"),
    (T([1, 2], dtype=st.int32), T([1, 2]), "dtype"),
])
def test_attribute_mismatch(actual, expected, attr):
    err, msg = _message(assert_close, actual, expected)
    assert err is AssertionError
    assert msg.startswith(f"The values for attribute '{attr}' do not match: ")


def test_nan_handling():
    _, msg = _message(assert_close, T([float("nan")]), T([float("nan")]))
    assert "Greatest absolute difference: nan at index (0,)" in msg
    _, msg = _message(assert_close, T([1.0, float("inf")]), T([1.0, float("-inf")]))
    assert "Greatest absolute difference: inf at index (1,)" in msg


def test_type_mismatch_is_type_error():
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
        assert_close(T(1.0), 1.0)
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(np.array([1.0]), T([1.0]))
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close("a", "a")


def test_containers():
    _, msg = _message(assert_close, [T(1.0), T(2.0)], [T(1.0), T(3.0)])
    assert msg.endswith("\n\nThe failure occurred for item [1]")
    _, msg = _message(assert_close, [1, 2], [1, 2, 3])
    assert msg == "The length of the sequences mismatch: 2 != 3"
    _, msg = _message(assert_close, {"a": T(1.0)}, {"a": T(1.0), "b": 2})
    assert msg == ("The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                   "['b']\nAdditional keys in the actual mapping: []")
    _, msg = _message(assert_close, {"a": [T(1.0)]}, {"a": [T(2.0)]})
    assert msg.endswith("The failure occurred for item ['a'][0]")


def test_tolerance_arguments():
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified"):
        assert_close(T([1.0]), T([1.0]), rtol=1.0)
    with pytest.raises(AssertionError):
        assert_close(T([1.0]), T([1.2]), rtol=0.1, atol=0.0)


def test_custom_msg():
    assert _message(assert_close, T([1.0]), T([1.1]), msg="custom")[1] == "custom"
    _, msg = _message(assert_close, T([1.0]), T([1.1]), msg=lambda m: "X" + m)
    assert msg.startswith("XTensor-likes are not close!")


def test_default_tolerances_per_dtype():
    assert_close(T([1.0], dtype=st.float16), T([1.0009765625], dtype=st.float16))
    with pytest.raises(AssertionError):
        assert_close(T([1.0], dtype=st.float64), T([1.0 + 1e-6], dtype=st.float64))
    assert_close(T([1.0], dtype=st.float32), T([1.0 + 1e-6], dtype=st.float32))
    with pytest.raises(AssertionError, match="not equal"):
        assert_close(T([True, False]), T([True, True]))


CASES = [
    ([1.0, 2.0, 3.0], [1.0, 2.5, 3.5], "float32"),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 5.0]], "float32"),
    ([1.0, 2.0], [1.0, 2.1], "float64"),
    ([1, 2, 3], [1, 4, 3], "int64"),
    ([1 + 1j], [1 + 2j], "complex64"),
    ([1.0, float("nan")], [1.0, 2.0], "float32"),
]


@pytest.mark.parametrize("a,e,dtype", CASES)
def test_messages_match_torch(a, e, dtype):
    torch = pytest.importorskip("torch")
    ours = _message(assert_close, T(a, dtype=getattr(st, dtype)), T(e, dtype=getattr(st, dtype)))
    theirs = _message(torch.testing.assert_close, torch.tensor(a, dtype=getattr(torch, dtype)),
                      torch.tensor(e, dtype=getattr(torch, dtype)))
    assert ours == theirs
    assert "Mismatched elements" in ours[1]


# ---- make_tensor ----

@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.float16, st.int64, st.int32,
                                   st.uint8, st.bool, st.complex64])
def test_make_tensor_dtype_shape_and_range(dtype):
    t = make_tensor((3, 4), dtype=dtype, device="cpu")
    assert t.shape == (3, 4) and t.dtype is dtype and t.device == st.device("cpu")
    a = t.numpy()
    if dtype is st.bool:
        return
    if dtype is st.uint8:
        assert a.min() >= 0 and a.max() < 10
    elif dtype.is_complex:
        assert np.all(np.abs(a.real) <= 9) and np.all(np.abs(a.imag) <= 9)
    else:
        assert a.min() >= -9 and a.max() <= 9


def test_make_tensor_shapes_and_options():
    assert make_tensor(2, 3, dtype=st.float32, device="cpu").shape == (2, 3)
    assert make_tensor([2], dtype=st.float32, device="cpu").shape == (2,)
    assert make_tensor((), dtype=st.float32, device="cpu").shape == ()
    t = make_tensor(5, 4, dtype=st.float64, device="cpu", low=-1, high=1, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert t.detach().numpy().min() >= -1 and t.detach().numpy().max() < 1
    nc = make_tensor(3, 4, dtype=st.float32, device="cpu", noncontiguous=True)
    assert not nc.is_contiguous() and nc.shape == (3, 4)
    nz = make_tensor(50, dtype=st.int64, device="cpu", low=-1, high=2, exclude_zero=True)
    assert np.all(nz.numpy() != 0)
    nzf = make_tensor(50, dtype=st.float32, device="cpu", exclude_zero=True)
    assert np.all(nzf.numpy() != 0)


def test_make_tensor_errors():
    with pytest.raises(ValueError, match="requires_grad=True` is not supported"):
        make_tensor(2, dtype=st.int64, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match=re.escape("`low` must be less than `high`")):
        make_tensor(2, dtype=st.float32, device="cpu", low=2, high=1)
    with pytest.raises(ValueError, match="cannot be NaN"):
        make_tensor(2, dtype=st.float32, device="cpu", low=float("nan"))


def test_make_tensor_follows_manual_seed():
    st.manual_seed(123)
    a = make_tensor(4, dtype=st.float32, device="cpu")
    st.manual_seed(123)
    b = make_tensor(4, dtype=st.float32, device="cpu")
    assert_close(a, b, rtol=0, atol=0)


def test_reachable_as_attribute():
    assert st.testing.assert_close is assert_close
    assert st.testing.make_tensor is make_tensor
