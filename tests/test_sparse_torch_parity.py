"""The same sparse calls through torch 2.13 and sparsetorch: results and gradients must agree.

Gradients follow masked semantics in sparsetorch (the gradient of a sparse input is sparse, with
that input's pattern). Where torch returns a dense gradient for a sparse input (``x.sum()``), it
is compared at the input's pattern. Where torch has no kernel for a layout (CSR ``sparse.sum``,
CSR softmax, backward of ``sin`` on sparse, ...), the oracle is torch on the COO form of the same
data, then torch on the dense tensor: the dense answer is the contract.
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sparsetorch as st
from sparsetorch.testing import assert_close

warnings.filterwarnings("ignore", message=".*(Sparse|sparse).*")

LIB = {"torch": torch, "st": st}
DATA = np.array([[0.0, 1.5, 0.0, -0.5], [2.0, 0.0, -3.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
DATA2 = np.array([[1.0, 0.0, 0.0, 2.0], [0.5, 0.0, 4.0, 0.0], [0.0, -1.0, 0.0, 0.0]])
W = np.arange(12.0).reshape(3, 4) / 7 - 0.6
UNCO_IDX = np.array([[1, 0, 1, 0], [0, 1, 0, 3]])
UNCO_VAL = np.array([0.5, 1.5, 1.5, -0.5])  # (1, 0) stored twice: 0.5 + 1.5 = 2.0
DATA_U = np.zeros((3, 4))
np.add.at(DATA_U, tuple(UNCO_IDX), UNCO_VAL)  # the dense form of the uncoalesced tensor


def _np(t):
    if t.layout is not (torch.strided if isinstance(t, torch.Tensor) else st.strided):
        t = t.to_dense()
    return t.detach().numpy()


def make(lib, kind, data=DATA, dtype="float64", requires_grad=False):
    """The same sparse tensor in torch or sparsetorch: kind in coo / csr / coo-uncoalesced / dense."""
    L = LIB[lib]
    dt = getattr(L, dtype)
    if kind == "coo-uncoalesced":
        t = L.sparse_coo_tensor(L.tensor(UNCO_IDX), L.tensor(UNCO_VAL, dtype=dt), (3, 4))
    else:
        d = L.tensor(data, dtype=dt)
        t = {"coo": d.to_sparse, "csr": d.to_sparse_csr, "dense": lambda: d}[kind]()
    return t.requires_grad_() if requires_grad else t


def _mask(kind):
    return (make("torch", kind if kind != "dense" else "coo").to_dense() != 0).numpy() \
        if kind != "coo-uncoalesced" else np.isin(np.arange(12).reshape(3, 4), [1, 4, 3])


# ---- construction, coalesce, conversions ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_construction_and_coalesce(dtype):
    for hybrid in (False, True):
        idx = np.array([[2, 0, 2, 1]]) if hybrid else UNCO_IDX
        val = np.arange(8.0).reshape(4, 2) if hybrid else UNCO_VAL
        size = (3, 2) if hybrid else (3, 4)
        tt, ss = (L.sparse_coo_tensor(L.tensor(idx), L.tensor(val, dtype=getattr(L, dtype)), size)
                  for L in (torch, st))
        assert ss.is_coalesced() == tt.is_coalesced() and ss._nnz() == tt._nnz()
        np.testing.assert_array_equal(_np(ss), _np(tt))
        tc, sc = tt.coalesce(), ss.coalesce()
        assert sc.is_coalesced() and sc._nnz() == tc._nnz()
        np.testing.assert_array_equal(sc.indices().numpy(), tc.indices().numpy())
        np.testing.assert_array_equal(sc.values().numpy(), tc.values().numpy())
        assert str(sc.dtype).split(".")[-1] == str(tc.dtype).split(".")[-1]


@pytest.mark.parametrize("kind", ["coo", "csr", "coo-uncoalesced"])
def test_to_dense_and_to_sparse_csr(kind):
    t, s = make("torch", kind), make("st", kind)
    np.testing.assert_array_equal(_np(s), _np(t))
    tc, sc = t.to_sparse_csr(), s.to_sparse_csr()
    np.testing.assert_array_equal(sc.crow_indices().numpy(), tc.crow_indices().numpy())
    np.testing.assert_array_equal(sc.col_indices().numpy(), tc.col_indices().numpy())
    np.testing.assert_array_equal(sc.values().numpy(), tc.values().numpy())
    to, so = tc.to_sparse_coo(), sc.to_sparse_coo()
    np.testing.assert_array_equal(so._indices().numpy(), to._indices().numpy())


def test_dense_to_sparse_hybrid():
    x = np.zeros((3, 2, 2))
    x[1, 0, 1] = 5.0
    t, s = torch.tensor(x).to_sparse(2), st.tensor(x).to_sparse(2)
    np.testing.assert_array_equal(s._indices().numpy(), t._indices().numpy())
    np.testing.assert_array_equal(s._values().numpy(), t._values().numpy())


# ---- forward + gradients of one differentiable call ----

def _run(lib, kind, fn, data=DATA):
    """(output as dense array, gradient of the sparse leaf as dense array, leaf grad layout)."""
    L = LIB[lib]
    x = make(lib, kind, data, requires_grad=True)
    out = fn(L, x)
    w = L.tensor(W if tuple(out.shape) == W.shape else np.ones(tuple(out.shape)), dtype=L.float64)
    dense_out = out.to_dense() if out.layout is not L.strided else out
    (dense_out * w).sum().backward()
    g = x.grad
    return _np(out), (None if g is None else _np(g)), (None if g is None else g.layout.__repr__()), out


def _oracle(kind, fn):
    """torch on the same layout, else on COO, else on the dense tensor (of the same data)."""
    data = DATA_U if kind == "coo-uncoalesced" else DATA
    for k in (kind, "coo", "dense"):
        try:
            return _run("torch", k, fn, data)
        except (RuntimeError, NotImplementedError, TypeError):
            continue
    raise AssertionError("no torch oracle")


def check_parity(kind, fn, tol=1e-10):
    t_out, t_grad, _, t_res = _oracle(kind, fn)
    s_out, s_grad, s_layout, s_res = _run("st", kind, fn)
    np.testing.assert_allclose(s_out, t_out, rtol=tol, atol=tol)
    expect_layout = {"coo": "sparse_coo", "coo-uncoalesced": "sparse_coo", "csr": "sparse_csr"}[kind]
    assert s_layout is not None and s_layout.endswith(expect_layout), f"leaf grad layout {s_layout}"
    # masked semantics (np.where: a dense oracle's gradient may be inf/nan off the pattern)
    np.testing.assert_allclose(s_grad, np.where(_mask(kind), t_grad, 0), rtol=tol, atol=tol)
    return s_res, t_res


KINDS = ["coo", "csr", "coo-uncoalesced"]


@pytest.mark.parametrize("kind", KINDS)
def test_sparse_mm_forward_and_grads(kind):
    X = np.linspace(-1, 1, 8).reshape(4, 2)
    outs = {}
    for lib in ("torch", "st"):
        L = LIB[lib]
        s = make(lib, kind, requires_grad=True)
        x = L.tensor(X, dtype=L.float64, requires_grad=True)
        y = L.sparse.mm(s, x)
        (y * L.tensor(W[:, :2], dtype=L.float64)).sum().backward()
        outs[lib] = (_np(y), x.grad.numpy(), _np(s.grad), s.grad.layout)
    t, s = outs["torch"], outs["st"]
    np.testing.assert_allclose(s[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(s[1], t[1], rtol=1e-12)  # gradient of the dense operand
    np.testing.assert_allclose(s[2], t[2], rtol=1e-12)  # masked gradient of the sparse operand
    assert s[3] is (st.sparse_csr if kind == "csr" else st.sparse_coo)


@pytest.mark.parametrize("kind", KINDS)
def test_sparse_sum(kind):
    check_parity(kind, lambda L, x: L.sparse.sum(x))
    check_parity(kind, lambda L, x: L.sparse.sum(x, 1))
    check_parity(kind, lambda L, x: L.sparse.sum(x, 0))
    check_parity(kind, lambda L, x: x.sum())


@pytest.mark.parametrize("fname", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_sparse_softmax(kind, dim, fname):
    s_res, _ = check_parity(kind, lambda L, x: getattr(L.sparse, fname)(x, dim))
    x = make("st", kind)
    assert s_res.layout is x.layout and s_res._nnz() == x.to_sparse_csr()._nnz()  # unique entries


ELEMENTWISE = {
    "abs": lambda L, x: x.abs(),
    "neg": lambda L, x: -x,
    "sin": lambda L, x: x.sin(),
    "tanh": lambda L, x: x.tanh(),
    "sqrt-abs": lambda L, x: x.abs().sqrt(),
    "relu": lambda L, x: x.relu(),
    "mul-scalar": lambda L, x: x * 2.5,
    "div-scalar": lambda L, x: x / 4,
    "pow-2": lambda L, x: x ** 2,
    "square": lambda L, x: x.square(),
    "expm1": lambda L, x: x.expm1(),
    "log1p-abs": lambda L, x: x.abs().log1p(),
    "asinh": lambda L, x: x.asinh(),
    "sign": lambda L, x: x.sign() * x,
}


@pytest.mark.parametrize("name", list(ELEMENTWISE))
@pytest.mark.parametrize("kind", KINDS)
def test_zero_preserving_elementwise(kind, name):
    s_res, _ = check_parity(kind, ELEMENTWISE[name])
    assert s_res.layout is make("st", kind).layout  # stays sparse, same layout


@pytest.mark.parametrize("kind", KINDS)
def test_sparse_add_sparse(kind):
    # torch 2.13 has no CSR subtraction: its oracle runs on COO (the dense answers are the same)
    outs = {}
    for lib, k in (("torch", "coo" if kind == "csr" else kind), ("st", kind)):
        L = LIB[lib]
        a = make(lib, k, requires_grad=True)
        b = make(lib, k, DATA2, requires_grad=True)
        c = a + b
        d = a - 2 * b
        ((c.to_dense() + d.to_dense()) * L.tensor(W, dtype=L.float64)).sum().backward()
        outs[lib] = (_np(c), _np(d), _np(a.grad), _np(b.grad), c.layout, a.grad.layout)
    t, s = outs["torch"], outs["st"]
    np.testing.assert_allclose(s[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(s[1], t[1], rtol=1e-12)
    # torch's gradients carry the union pattern; sparsetorch's are masked to each input's pattern
    b_mask = _mask(kind) if kind == "coo-uncoalesced" else DATA2 != 0
    np.testing.assert_allclose(s[2], np.where(_mask(kind), t[2], 0), rtol=1e-12)
    np.testing.assert_allclose(s[3], np.where(b_mask, t[3], 0), rtol=1e-12)
    assert s[4] is make("st", kind).layout and s[5] is make("st", kind).layout


@pytest.mark.parametrize("kind", KINDS)
def test_transpose(kind):
    for fn in (lambda L, x: x.t(), lambda L, x: x.transpose(0, 1), lambda L, x: x.transpose(1, 0)):
        check_parity(kind, fn)


# ---- assert_close on sparse tensors: torch's verdicts and messages ----

def _message(fn, *args, **kw):
    try:
        fn(*args, **kw)
    except AssertionError as e:
        return str(e).replace("sparsetorch.", "torch.")
    return None


def _assert_close_pair(lib, case):
    L = LIB[lib]
    a = make(lib, "coo")
    if case == "equal":
        b = make(lib, "coo")
    elif case == "unco-vs-co":
        b = make(lib, "coo-uncoalesced")
    elif case == "indices":
        b = L.sparse_coo_tensor(a._indices().flip(1), a._values(), (3, 4))
    elif case == "values":
        b = L.sparse_coo_tensor(a._indices(), a._values() + 1, (3, 4))
    elif case in ("layout", "csr-values"):
        b = make(lib, "csr")
    else:
        b = make(lib, "csr", DATA2)
    if case == "csr-values":
        a = L.sparse_csr_tensor(b.crow_indices(), b.col_indices(), b.values() * 1.5, (3, 4))
    if case == "csr-col":
        a = make(lib, "csr", DATA2[:, ::-1].copy())  # same row counts, other columns
    return a, b


@pytest.mark.parametrize("case", ["equal", "unco-vs-co", "indices", "values", "layout",
                                  "csr-values", "csr-col"])
def test_assert_close_sparse_matches_torch(case):
    msgs = {}
    for lib, fn in (("torch", torch.testing.assert_close), ("st", assert_close)):
        msgs[lib] = _message(fn, *_assert_close_pair(lib, case))
    assert msgs["st"] == msgs["torch"]
