"""F.interpolate / nn.Upsample against torch: every mode and dimensionality, size and
scale_factor, align_corners, recompute_scale_factor; values and input gradients in float32 and
float64; gradcheck; the deprecated aliases; bad-input errors."""

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn.functional as SF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

MODES = [(1, "nearest"), (2, "nearest"), (3, "nearest"), (1, "nearest-exact"),
         (2, "nearest-exact"), (3, "nearest-exact"), (1, "linear"), (2, "bilinear"),
         (3, "trilinear"), (2, "bicubic"), (1, "area"), (2, "area"), (3, "area")]
SIZES = [{"size": 7}, {"size": 3}, {"size": 1}, {"scale_factor": 2}, {"scale_factor": 1.7},
         {"scale_factor": 0.6}, {"scale_factor": 2.3, "recompute_scale_factor": True}]


def _check(nd, mode, kw, dt, align_corners=None, in_size=5, seed=0):
    npdt = np.float32 if dt == "float32" else np.float64
    tol = 1e-5 if dt == "float32" else 1e-12
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3) + (in_size,) * nd).astype(npdt)
    tx, sx = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
    to = TF.interpolate(tx, mode=mode, align_corners=align_corners, **kw)
    so = SF.interpolate(sx, mode=mode, align_corners=align_corners, **kw)
    assert tuple(so.shape) == tuple(to.shape)
    assert so.dtype is getattr(st, dt)
    np.testing.assert_allclose(so.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(to.shape).astype(npdt)
    to.backward(torch.tensor(g))
    so.backward(st.tensor(g))
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("nd,mode", MODES)
def test_interpolate_parity(nd, mode, dt):
    corners = [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]
    for kw in SIZES:
        for ac in corners:
            _check(nd, mode, kw, dt, ac)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic", "area"])
def test_interpolate_non_square_sizes(mode):
    ac = None if mode in ("nearest", "nearest-exact", "area") else False
    _check(2, mode, {"size": (13, 4)}, "float32", ac, in_size=9, seed=1)
    _check(2, mode, {"scale_factor": (0.55, 3.0)}, "float32", ac, in_size=11, seed=2)


def test_upsample_modules_and_aliases():
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4)).astype(np.float32)
    for tm, sm in [(torch.nn.Upsample(scale_factor=2, mode="bilinear"),
                    st.nn.Upsample(scale_factor=2, mode="bilinear")),
                   (torch.nn.Upsample(size=(5, 7)), st.nn.Upsample(size=(5, 7))),
                   (torch.nn.UpsamplingNearest2d(scale_factor=3),
                    st.nn.UpsamplingNearest2d(scale_factor=3)),
                   (torch.nn.UpsamplingBilinear2d(size=6), st.nn.UpsamplingBilinear2d(size=6))]:
        assert repr(sm) == repr(tm)
        np.testing.assert_allclose(sm(st.tensor(x)).numpy(), tm(torch.tensor(x)).numpy(),
                                   rtol=1e-5, atol=1e-5)
    for name, kw in [("upsample", {"scale_factor": 2, "mode": "nearest"}),
                     ("upsample_nearest", {"size": 5}), ("upsample_bilinear", {"size": 5})]:
        with pytest.warns(UserWarning, match="deprecated"):
            so = getattr(SF, name)(st.tensor(x), **kw)
        with pytest.warns(UserWarning, match="deprecated"):
            to = getattr(TF, name)(torch.tensor(x), **kw)
        np.testing.assert_allclose(so.numpy(), to.numpy(), rtol=1e-5, atol=1e-5)


def test_interpolate_gradcheck():
    x = st.randn(1, 2, 3, 4, dtype=st.float64, requires_grad=True)
    for mode in ("bilinear", "bicubic", "nearest", "area"):
        kw = {"size": (5, 3)}
        if mode in ("bilinear", "bicubic"):
            kw["align_corners"] = mode == "bicubic"
        assert st.autograd.gradcheck(lambda a, m=mode, k=kw: SF.interpolate(a, mode=m, **k),
                                     (x,))


def test_interpolate_errors():
    x = st.randn(1, 2, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        SF.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        SF.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        SF.interpolate(x, size=3, align_corners=True)
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        SF.interpolate(x, size=(3, 3, 3))
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful"):
        SF.interpolate(x, size=3, recompute_scale_factor=True)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D"):
        SF.interpolate(x, size=3, mode="linear")
    with pytest.raises(NotImplementedError, match="Only 3D, 4D and 5D"):
        SF.interpolate(st.randn(2, 3), size=3)
    with pytest.raises(NotImplementedError, match="Only 3D, 4D and 5D"):
        SF.interpolate(x, size=3, mode="cubic")
    with pytest.raises(TypeError, match="expected size to be one of int"):
        SF.interpolate(x, size=(2.5, 3))
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        SF.interpolate(st.randn(1, 2, 4), size=3, mode="linear", antialias=True)
    with pytest.raises(RuntimeError, match=r"sizes should be greater than 0, but got input "
                                           r"\(H: 4, W: 4\) output \(H: 0, W: 0\)"):
        SF.interpolate(x, size=0)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("mode,align_corners", [("bilinear", False), ("bilinear", True),
                                                ("bicubic", False), ("bicubic", True),
                                                ("lanczos", False)])
def test_interpolate_antialias_parity(dt, mode, align_corners):
    npdt = np.float32 if dt == "float32" else np.float64
    tol = 1e-5 if dt == "float32" else 1e-12
    rng = np.random.default_rng(4)
    for kw in ({"size": (3, 5)}, {"size": (13, 4)}, {"scale_factor": 0.4},
               {"scale_factor": (2.5, 0.3)}):
        x = rng.standard_normal((2, 3, 9, 11)).astype(npdt)
        tx, sx = torch.tensor(x, requires_grad=True), st.tensor(x, requires_grad=True)
        to = TF.interpolate(tx, mode=mode, align_corners=align_corners, antialias=True, **kw)
        so = SF.interpolate(sx, mode=mode, align_corners=align_corners, antialias=True, **kw)
        np.testing.assert_allclose(so.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
        g = rng.standard_normal(to.shape).astype(npdt)
        to.backward(torch.tensor(g))
        so.backward(st.tensor(g))
        np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol * 10)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        SF.interpolate(st.tensor(x), size=4, mode="lanczos")
    with pytest.raises(ValueError, match="Lanczos mode does not support align_corners=True"):
        SF.interpolate(st.tensor(x), size=4, mode="lanczos", antialias=True, align_corners=True)
