"""Complex autograd follows torch's convention: the gradient of a real loss L w.r.t. a complex z
is dL/dz* (so a holomorphic y = f(z) gives grad * conj(f'(z))). Every op-table row with a torch
counterpart that takes complex inputs is compared with torch on the same complex128 inputs;
Tensor.real / Tensor.imag views, sparse values and gradcheck on complex inputs are checked too."""

import types

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.autograd import Function, gradcheck, gradgradcheck
from tests.opdb import OP_DB

torch = pytest.importorskip("torch")

def _torch_fn(row):
    """torch's callable for a row: the same public path, or the row's lambda with ``st``
    rebound to torch."""
    op = row.op
    base = row.name.split("[")[0].split("(")[0]
    for cand in (base, base.rsplit(".", 1)[0] if "." in base else None):
        if not cand:
            continue
        m, t = st, torch
        for p in cand.split("."):
            if not (hasattr(m, p) and hasattr(t, p)):
                break
            m, t = getattr(m, p), getattr(t, p)
        else:
            if m is op:
                return t
    if isinstance(op, types.FunctionType):
        g = dict(op.__globals__)
        g["st"] = torch
        return types.FunctionType(op.__code__, g, op.__name__, op.__defaults__, op.__closure__)
    return None


def _to_torch(x, memo):
    if isinstance(x, st.Tensor):
        if id(x) not in memo:
            d = x.detach()
            if x.layout is st.sparse_coo:
                t = torch.sparse_coo_tensor(torch.tensor(d._indices().numpy()),
                                            torch.tensor(d._values().numpy()), tuple(d.shape))
            elif x.layout is st.sparse_csr:
                t = torch.sparse_csr_tensor(torch.tensor(d.crow_indices().numpy()),
                                            torch.tensor(d.col_indices().numpy()),
                                            torch.tensor(d.values().numpy()), tuple(d.shape))
            else:
                t = torch.tensor(d.numpy())
            memo[id(x)] = t.requires_grad_(x.requires_grad)
        return memo[id(x)]
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(v, memo) for v in x)
    if isinstance(x, dict):
        return {k: _to_torch(v, memo) for k, v in x.items()}
    if isinstance(x, st.dtype):
        return getattr(torch, str(x).split(".")[-1])
    return x


def _leaves(args, out):
    for a in args:
        if isinstance(a, (st.Tensor, torch.Tensor)):
            if a.requires_grad and not any(a is b for b in out):
                out.append(a)
        elif isinstance(a, (list, tuple)):
            _leaves(a, out)
    return out


def _loss(out, lib):
    """A real loss touching every real and imaginary component with its own weight."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = 0
    for k, o in enumerate(outs):
        if not isinstance(o, (st.Tensor, torch.Tensor)) or not (o.dtype.is_floating_point or o.dtype.is_complex):
            continue
        if o.layout != lib.strided:
            o = o.to_dense()
        shape = tuple(o.shape) + ((2,) if o.dtype.is_complex else ())
        w = lib.tensor(np.cos(np.arange(int(np.prod(shape))) * 0.7 + k).reshape(shape), dtype=lib.float64)
        if lib is torch:
            o = o.resolve_conj()  # torch's lazy conj cannot be viewed as real
        r = lib.view_as_real(o.contiguous()) if o.dtype.is_complex else o
        total = total + (r.to(lib.float64) * w).sum()
    return total


def _grads(lib, fn, args, kwargs, ins):
    loss = _loss(fn(*args, **kwargs), lib)
    if isinstance(loss, int):  # no differentiable output (unbind of an empty dim)
        return (None,) * len(ins)
    return lib.autograd.grad(loss, ins, allow_unused=True)


def _torch_grads(row, dtype, sample):
    tf = _torch_fn(row)
    ta = _to_torch(sample.args, {})
    ins = _leaves(ta, [])
    return ins, _grads(torch, tf, ta, _to_torch(sample.kwargs, {}), ins)


def _complex_output(row, sample):
    out = _torch_fn(row)(*_to_torch(sample.args, {}), **_to_torch(sample.kwargs, {}))
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return any(isinstance(o, torch.Tensor) and o.dtype.is_complex for o in outs)


def _cases():
    """(row, dtype) pairs where torch differentiates the row's first sample: complex128 inputs,
    or float64 inputs with a complex result (rfft, ihfft...)."""
    cases = []
    for row in OP_DB:
        if not row.supports_autograd or _torch_fn(row) is None:
            continue
        for dtype in (st.complex128, st.float64):
            try:
                sample = row.sample_inputs(dtype, True)[0]
                if dtype is st.float64 and not _complex_output(row, sample):
                    continue
                ins, _ = _torch_grads(row, dtype, sample)
            except Exception:  # torch has no complex version of this op
                continue
            if ins and (dtype is st.float64 or any(t.dtype.is_complex for t in ins)):
                cases.append(pytest.param(row, dtype, id=f"{row.name}-{dtype}"))
                break
    return cases


CASES = _cases()


def test_coverage():
    """The row-driven check below really spans the complex ops (no silent shrinking)."""
    names = {c.values[0].name for c in CASES}
    assert len(CASES) >= 170
    assert {"mul", "div", "exp", "sgn", "abs", "angle", "real", "imag", "mm", "prod", "cumprod",
            "linalg.inv", "fft.fft", "mm[sparse@dense]"} <= names
    assert any(c.values[1] is st.float64 for c in CASES)  # real inputs, complex results


@pytest.mark.parametrize("row,dtype", CASES)
def test_grad_matches_torch(row, dtype):
    compared = 0
    for s in row.sample_inputs(dtype, True):
        try:
            t_ins, t_grads = _torch_grads(row, dtype, s)
        except (TypeError, RuntimeError):  # torch's signature refuses this sample (a Python scalar)
            continue
        compared += 1
        ins = _leaves(s.args, [])
        grads = _grads(st, row.op, s.args, s.kwargs, ins)
        for k, (a, b) in enumerate(zip(grads, t_grads)):
            if b is None or (a is None and b.numel() == 0):  # cat leaves empty inputs ungraded
                continue
            assert a is not None, f"{row.name} {s.name}: no gradient for input {k}"
            a = (a.to_dense() if a.layout is not st.strided else a).detach().numpy()
            b = (b.to_dense() if b.layout is not torch.strided else b).detach().resolve_conj().resolve_neg().numpy()
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"{row.name} {s.name} input {k}")
    assert compared


# ---- the example, mixed real/complex ----

@pytest.mark.filterwarnings("error")  # no ComplexWarning when a real input takes the real part
def test_mul_example_and_mixed_dtypes():
    for lib in (st, torch):
        z = lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex128, requires_grad=True)
        w = lib.tensor([2 - 1j, 0.5 + 1j], dtype=lib.complex128, requires_grad=True)
        lib.view_as_real(z * w).sum().backward()
        np.testing.assert_allclose(z.grad.detach().resolve_conj().numpy() if lib is torch else z.grad.numpy(),
                                   [1 + 3j, 1.5 - 0.5j])
    x = st.tensor([1.0, 2.0], dtype=st.float64, requires_grad=True)
    w = st.tensor([1 + 2j, 3 - 1j], dtype=st.complex128, requires_grad=True)
    gx, gw = st.autograd.grad((st.view_as_real(x * w) * st.tensor([[1.0, 2], [3, 4]], dtype=st.float64)).sum(), [x, w])
    assert gx.dtype is st.float64  # a real input gets a real gradient
    np.testing.assert_allclose(gx.numpy(), [5.0, 5.0])
    np.testing.assert_allclose(gw.numpy(), [1 + 2j, 6 + 8j])


def test_sign_refuses_complex_as_torch():
    for lib in (st, torch):
        with pytest.raises(NotImplementedError, match="torch.sign is not intended to support complex numbers"):
            lib.sign(lib.tensor([1j, 2 + 0j]))


@pytest.mark.filterwarnings("error")
def test_complex64_stays_complex64():
    z = st.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    w = st.tensor([2 - 1j, 0.5 + 1j])
    assert z.dtype is st.complex64
    for loss in (st.view_as_real(z * w).sum(), (z.imag * 2 + z.real + z.angle() + z.abs()).sum(),
                 st.view_as_real(st.logaddexp(z, w).sigmoid() * z.sgn()).sum()):
        (g,) = st.autograd.grad(loss, [z])
        assert g.dtype is st.complex64


# ---- Tensor.real / Tensor.imag ----

def test_real_imag_are_writable_views():
    z = st.tensor([1 + 2j, 3j])
    assert z.real.dtype is st.float32 and z.imag.dtype is st.float32
    z.real.mul_(2)
    z.imag.add_(1)
    z.real = st.tensor([5.0, 6.0])
    np.testing.assert_allclose(z.numpy(), [5 + 3j, 6 + 4j])
    assert z.real._base is z and z.real.stride() == (2,)
    x = st.ones(2)
    assert x.real is x and st.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        st.imag(x)


@pytest.mark.parametrize("case", ["real-mul", "imag-mul-by-input", "view_as_real-slice", "slice-mul-1j"])
def test_inplace_through_complex_views_matches_torch(case):
    got = []
    for lib in (st, torch):
        a = lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex128, requires_grad=True)
        b = a * 1
        if case == "real-mul":
            b.real.mul_(2)
        elif case == "imag-mul-by-input":
            b.imag.mul_(a.real)
        elif case == "view_as_real-slice":
            lib.view_as_real(b)[:, 1].mul_(3)
        else:
            b[1:].mul_(1j)
        loss = (b.real * 2 + b.imag * 3 + (b * b).real).sum()
        (g,) = lib.autograd.grad(loss, [a])
        got.append(g.detach().resolve_conj().numpy() if lib is torch else g.numpy())
    np.testing.assert_allclose(got[0], got[1])


def test_real_imag_sparse_values():
    z = st.tensor([[1 + 2j, 0], [0, -3j]], dtype=st.complex128, requires_grad=True)
    for layout in ("coo", "csr"):
        s = z.to_sparse() if layout == "coo" else z.to_sparse_csr()
        r, i = st.real(s), st.imag(s)
        assert r.layout is s.layout and i.layout is s.layout
        np.testing.assert_allclose(r.to_dense().detach().numpy(), [[1, 0], [0, 0]])
        np.testing.assert_allclose(i.to_dense().detach().numpy(), [[2, 0], [0, -3]])
        (g,) = st.autograd.grad((r.to_dense() * 2 + i.to_dense() * 5).sum(), [z])
        np.testing.assert_allclose(g.numpy(), [[2 + 5j, 0], [0, 2 + 5j]])


_SPARSE_OPS = {
    "sgn": lambda L, s: s.sgn(), "abs": lambda L, s: s.abs(), "sin": lambda L, s: s.sin(),
    "tanh": lambda L, s: s.tanh(), "sqrt": lambda L, s: s.sqrt(), "pow": lambda L, s: s ** 2,
    "mul": lambda L, s: s * s, "div": lambda L, s: s / (2 + 1j), "conj": lambda L, s: s.conj(),
    "real": lambda L, s: L.real(s), "imag": lambda L, s: L.imag(s), "sum": lambda L, s: L.sum(s, 0),
    "mm": lambda L, s: L.sparse.mm(s, L.ones(3, 2, dtype=L.complex128) * (1 + 1j)),
}


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("name", sorted(_SPARSE_OPS))
def test_sparse_values_follow_the_same_formulas(name, layout):
    """Gradients w.r.t. the stored values of a complex COO/CSR equal torch's dense gradients
    at those positions."""
    got = []
    for lib in (st, torch):
        v = lib.tensor([1 + 2j, -3j, 0.5 - 1j], dtype=lib.complex128, requires_grad=True)
        x = lib.sparse_coo_tensor(lib.tensor([[0, 1, 2], [1, 0, 2]]), v, (3, 3))
        if lib is torch:
            x = x.to_dense()
        elif layout == "csr":
            x = x.to_sparse_csr()
        (g,) = lib.autograd.grad(_loss(_SPARSE_OPS[name](lib, x), lib), [v])
        got.append(g.detach().resolve_conj().numpy() if lib is torch else g.numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6, atol=1e-9)


# ---- gradcheck on complex inputs ----

def _c(values):
    return st.tensor(values, dtype=st.complex128, requires_grad=True)


@pytest.mark.parametrize("fn", [
    lambda a, b: a * b, lambda a, b: a / b, lambda a, b: (a.exp() * b).sin(), lambda a, b: a.real * b,
    lambda a, b: a.imag + b.abs(), lambda a, b: a.sgn() * b.angle(), lambda a, b: st.outer(a, b).sum(0),
    lambda a, b: st.linalg.inv(st.outer(a, b) + st.eye(3, dtype=st.complex128)),
], ids=["mul", "div", "sin-exp", "real", "imag-abs", "sgn-angle", "outer", "inv"])
def test_gradcheck_complex(fn):
    a, b = _c([1 + 2j, 3 - 1j, 0.5 - 2j]), _c([2 - 1j, 0.5 + 1j, 1 + 1j])
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


class _NoConj(Function):
    """d(z*z)/dz written without torch's conjugation: gradcheck must catch it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x


def test_gradcheck_catches_a_missing_conj():
    assert not gradcheck(_NoConj.apply, (_c([1 + 2j, 3 - 1j]),), raise_exception=False)
    assert gradcheck(lambda x: x * x, (_c([1 + 2j, 3 - 1j]),))


def test_complex_svdvals_refuses_a_second_derivative():
    """The first derivative of complex svdvals is torch's (the table rows above); its second
    would treat U and Vh as constants, so create_graph=True is refused rather than wrong."""
    a = st.tensor(np.arange(12.0).reshape(4, 3) + 1j * np.eye(4, 3), requires_grad=True)
    s = st.linalg.svdvals(a).sum()
    with pytest.raises(NotImplementedError, match="second derivative for complex inputs"):
        st.autograd.grad(s, a, create_graph=True)
    (g,) = st.autograd.grad(st.linalg.svdvals(a).sum(), a)
    ta = torch.tensor(a.detach().numpy(), requires_grad=True)
    (tg,) = torch.autograd.grad(torch.linalg.svdvals(ta).sum(), ta)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), atol=1e-12)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_logcumsumexp_forward_matches_torch_on_edge_values(dt):
    inf, nan = float("inf"), float("nan")
    rows = [[1 + 2j, 3 - 1j, -2 + 0.5j, 1 + 4j], [-1000 + 1j, 0j, 1000 + 3j, 2j],
            [complex(-inf, 0), 1 + 1j, complex(inf, 0), 2j], [complex(nan, 0), 1j, 2, 3]]
    for dim in (0, 1):
        ours = st.logcumsumexp(st.tensor(rows, dtype=getattr(st, dt)), dim)
        ref = torch.logcumsumexp(torch.tensor(rows, dtype=getattr(torch, dt)), dim)
        assert ours.dtype is getattr(st, dt)
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6, equal_nan=True)
