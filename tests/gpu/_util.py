"""Shared helpers of the device tests (tests/gpu).

The tests run on ``cuda`` when ``sparsetorch.cuda.is_available()``: on a real GPU (CuPy), or on
the fake CUDA backend (``SPARSETORCH_FAKE_CUDA=<n>``, NumPy behind a distinct device; see
``sparsetorch._backend``). Elsewhere they skip with the reason. ``SLICE`` (the fake backend
without ``SPARSETORCH_GPU_TESTS_FULL=1``) selects a slice of the op table to keep CPU-only CI
fast; a real GPU runs all of it.
"""

import os

import numpy as np
import pytest

import sparsetorch as st

FAKE = int(os.environ.get("SPARSETORCH_FAKE_CUDA", "0") or 0) > 0  # the fake CUDA backend
# the fake backend runs a slice of the op table unless SPARSETORCH_GPU_TESTS_FULL=1
SLICE = FAKE and os.environ.get("SPARSETORCH_GPU_TESTS_FULL") != "1"
CUDA = st.cuda.is_available()
TWO_DEVICES = CUDA and st.cuda.device_count() >= 2

requires_cuda = pytest.mark.skipif(
    not CUDA,
    reason="sparsetorch.cuda.is_available() is False (no CuPy or no GPU); run on a GPU machine, "
           "or with SPARSETORCH_FAKE_CUDA=2 to test the device plumbing on the CPU",
)
requires_two = pytest.mark.skipif(not TWO_DEVICES, reason="needs two CUDA devices")

# every test module of tests/gpu: selected by `pytest -m cuda`, skipped without a device
CUDA_MARKS = [pytest.mark.cuda, requires_cuda]


def to_device(x, dev, _memo=None):
    """Tensors (recursively through lists/tuples) moved to ``dev`` as leaves with the same
    ``requires_grad``; a tensor passed twice stays one leaf; anything else unchanged."""
    memo = {} if _memo is None else _memo
    if isinstance(x, st.Tensor):
        if id(x) not in memo:
            memo[id(x)] = x.detach().to(dev).requires_grad_(x.requires_grad)
        return memo[id(x)]
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, dev, memo) for v in x)
    if isinstance(x, dict):
        return {k: to_device(v, dev, memo) for k, v in x.items()}
    return x


def host(x):
    """A result as NumPy (dense), whatever its device and layout; tuples recursively."""
    if isinstance(x, st.Tensor):
        assert x.device.type in ("cpu", "cuda")
        t = x.detach().cpu()
        return (t.to_dense() if t.layout is not st.strided else t).numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(host(v) for v in x)
    return np.asarray(x)


def tensors(x):
    if isinstance(x, st.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in tensors(v)]
    return []


def assert_on(x, dev):
    """Every tensor in ``x`` lives on ``dev``."""
    for t in tensors(x):
        assert t.device == st.device(dev), f"result on {t.device}, expected {dev}"


def assert_close(a, b, rtol=1e-5, atol=1e-6, msg=""):
    a, b = host(a), host(b)
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b), msg
        for x, y in zip(a, b):
            assert_close(x, y, rtol, atol, msg)
        return
    assert a.shape == b.shape, f"{msg}: shape {a.shape} != {b.shape}"
    assert a.dtype == b.dtype, f"{msg}: dtype {a.dtype} != {b.dtype}"
    if a.dtype == bool or a.dtype.kind in "iu":
        np.testing.assert_array_equal(a, b, err_msg=msg)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg)
