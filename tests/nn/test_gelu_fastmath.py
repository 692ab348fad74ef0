"""The float32 gelu kernels (erf form) of issue 14: a vectorizable erfc with the tail's relative
accuracy kept; max error in float32 ulps over a dense sweep against a float64 reference, the
special values as torch's (nan at +-inf, -0.0 kept), float64 on libm."""

import numpy as np
import pytest

from sparsetorch import _jit
from sparsetorch._backend import CPU
from sparsetorch.nn._kernels import pointwise as PK

from ._fastmath_checks import needs_numba_kernels, ulps

special = pytest.importorskip("scipy.special")
torch = pytest.importorskip("torch")
F = np.float32


def _numba():
    needs_numba_kernels()


def _ulps(got, ref, scale):
    return ulps(got, ref, scale, 2.0 ** -149)


def _sweep():
    dense = np.linspace(-15, 15, 1_000_001).astype(F)
    bits = np.arange(0, 0x7F800000, 4099, dtype=np.int64).astype(np.uint32).view(F)  # all scales
    return np.concatenate([dense, bits, -bits])


def test_gelu_float32_within_a_few_ulps():
    _numba()
    x = _sweep()
    xd = x.astype(np.float64)
    with np.errstate(all="ignore"):
        ref = 0.5 * xd * special.erfc(-xd / np.sqrt(2))
        cdf = 0.5 * special.erfc(-xd / np.sqrt(2))
        pdf = xd * np.exp(-0.5 * xd * xd) / np.sqrt(2 * np.pi)
    ok = np.isfinite(ref) & np.isfinite(cdf + pdf)
    got = PK.activation(CPU, PK.GELU, x)
    assert got.dtype == np.float32
    u = _ulps(got, ref, ref)[ok]
    assert u.max() <= 8 and u.mean() < 0.5, (u.max(), u.mean())
    gb = PK.activation_backward(CPU, PK.GELU, np.ones_like(x), x)
    # the derivative crosses zero at -0.75: ulps of its larger term
    ub = _ulps(gb, cdf + pdf, np.maximum(np.abs(cdf), np.abs(pdf)))[ok]
    assert ub.max() <= 8 and ub.mean() < 0.5, (ub.max(), ub.mean())


def test_gelu_float32_matches_torch_and_its_special_values():
    _numba()
    x = np.concatenate([np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1e30, -1e30, 100, -100,
                                  -13.2, 1e-40, -1e-40], F),
                        (np.random.default_rng(0).standard_normal(1 << 15) * 5).astype(F)])
    tx = torch.from_numpy(x)
    got, want = PK.activation(CPU, PK.GELU, x), torch.nn.functional.gelu(tx).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # nan where torch's is
    z = want == 0
    assert (np.signbit(got[z]) == np.signbit(want[z])).all()  # -0.0 where torch's is
    # the gradient: torch's is 0 where cdf + x pdf cancels (x < -6), ours the tiny true value
    got = PK.activation_backward(CPU, PK.GELU, np.ones_like(x), x)
    want = torch.ops.aten.gelu_backward(torch.ones_like(tx), tx).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_gelu_float32_beyond_the_clamp_is_exact_zero_and_identity():
    # the kernel clamps |x| at 15 and scales exp(-x^2/2) by 2^64: past the clamp the products
    # must still be 0 (forward: x or -0.0; derivative: 1 or 0), over the whole float32 range
    _numba()
    big = np.array([15.0, 15.5, 20.0, 1e3, 1e20, 3.4e38], F)
    x = np.concatenate([big, -big])
    got = PK.activation(CPU, PK.GELU, x)
    np.testing.assert_array_equal(got[:6], big)
    assert (got[6:] == 0).all() and np.signbit(got[6:]).all()
    gb = PK.activation_backward(CPU, PK.GELU, np.ones_like(x), x)
    np.testing.assert_array_equal(gb, np.r_[np.ones(6, F), np.zeros(6, F)])


@pytest.mark.parametrize("numba", [True, False])
def test_gelu_float64_is_libm_exact(numba):
    if numba:
        _numba()
    old = _jit.use_numba(numba)
    try:
        x = np.random.default_rng(1).standard_normal(1 << 15) * 6
        x[:4] = [np.inf, -np.inf, -0.0, 0.0]
        got = PK.activation(CPU, PK.GELU, x)
    finally:
        _jit.use_numba(old)
    want = 0.5 * x * special.erfc(-x / np.sqrt(2))
    np.testing.assert_allclose(got[4:], want[4:], rtol=1e-11, atol=0)  # libm vs Cephes, tails
    assert got[0] == np.inf and np.isnan(got[1]) and np.signbit(got[2]) and not np.signbit(got[3])
    tg = torch.nn.functional.gelu(torch.from_numpy(x[:4])).numpy()  # torch: inf at +inf in float64
    np.testing.assert_array_equal(got[:4], tg)
