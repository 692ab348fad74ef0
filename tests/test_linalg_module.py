"""sparsetorch.linalg (torch.linalg's API) and the top-level aliases: values vs NumPy and torch,
float64 gradchecks, batches, dtype preservation, error types."""

import math

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import linalg as L
from sparsetorch.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def well(n, batch=(), dtype=st.float64):
    """A well-conditioned (batch of) n x n matrix."""
    a = RNG.standard_normal(batch + (n, n)) * 0.3 + 2 * np.eye(n)
    return st.tensor(a, dtype=dtype)


def spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return st.tensor(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))


def leaf(x):
    return x.detach().clone().requires_grad_(True)


def close(t, ref, tol=1e-8):
    np.testing.assert_allclose(t.numpy(), ref, rtol=tol, atol=tol)


# ---- norms ----

@pytest.mark.parametrize("ord", [2, 1, math.inf, -math.inf, 3.5, 0])
def test_vector_norm_values(ord):
    x = st.tensor(RNG.standard_normal((3, 4)))
    close(L.vector_norm(x, ord), np.linalg.norm(x.numpy().ravel(), ord))
    close(L.vector_norm(x, ord, dim=1), np.linalg.norm(x.numpy(), ord, axis=1))
    assert L.vector_norm(x, ord, dim=0, keepdim=True).shape == (1, 4)


@pytest.mark.parametrize("ord", ["fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2])
def test_matrix_norm_values_batched(ord):
    a = RNG.standard_normal((2, 3, 4))
    r = L.matrix_norm(st.tensor(a), ord)
    close(r, np.linalg.norm(a, ord, axis=(-2, -1)))
    close(L.matrix_norm(st.tensor(a), ord, dim=(0, 2)), np.linalg.norm(a, ord, axis=(0, 2)))
    assert L.matrix_norm(st.tensor(a), ord, keepdim=True).shape == (2, 1, 1)


def test_norm_dispatch_rules():
    a = RNG.standard_normal((3, 4))
    x = st.tensor(a)
    close(L.norm(x), np.linalg.norm(a.ravel()))
    close(L.norm(x, 2), np.linalg.norm(a, 2))
    close(L.norm(x, 1, dim=0), np.linalg.norm(a, 1, axis=0))
    close(L.norm(x, "nuc", dim=(0, 1)), np.linalg.norm(a, "nuc"))
    with pytest.raises(RuntimeError, match="must be 1D or 2D"):
        L.norm(st.ones(2, 2, 2), ord=2)
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        L.matrix_norm(x, 3)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        L.matrix_norm(st.ones(3))
    with pytest.raises(RuntimeError, match="floating point"):
        L.vector_norm(st.ones(3, dtype=st.int64))


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, 1, math.inf])
def test_matrix_norm_gradcheck(ord):
    assert gradcheck(lambda a: L.matrix_norm(a, ord), (leaf(well(3)),))


def test_vector_norm_gradcheck_and_dtype():
    assert gradcheck(lambda a: L.vector_norm(a, 3, dim=1), (leaf(well(3)),))
    x = st.ones(3, 4)
    assert L.norm(x).dtype is st.float32
    assert L.matrix_norm(x, "nuc").dtype is st.float32
    assert L.vector_norm(x, dtype=st.float64).dtype is st.float64


# ---- inverses, determinants, solvers ----

def test_inv_det_slogdet_values_batched():
    A = well(3, (2,))
    a = A.numpy()
    close(L.inv(A), np.linalg.inv(a))
    close(L.det(A), np.linalg.det(a))
    sign, logabs = L.slogdet(A)
    s_ref, l_ref = np.linalg.slogdet(a)
    close(sign, s_ref)
    close(logabs, l_ref)
    close(st.logdet(A), np.log(np.linalg.det(a)))
    assert math.isnan(st.logdet(-st.eye(3, dtype=st.float64)).item())


@pytest.mark.parametrize("fn", [L.inv, L.det, lambda a: L.slogdet(a).logabsdet, st.logdet])
def test_inv_det_gradcheck(fn):
    A = leaf(well(3, (2,)))
    assert gradcheck(fn, (A,))
    assert gradgradcheck(fn, (A,))


def test_det_grad_at_singular_matrices_is_the_cofactor_matrix():
    a = np.array([[1.0, 2, 3], [2, 4, 6], [0, 1, 5]])  # rank 2
    x = leaf(st.tensor(a))
    L.det(x).backward()
    cof = [[14, -10, 2], [-7, 5, -1], [0, 0, 0]]
    np.testing.assert_allclose(x.grad.numpy(), cof, atol=1e-12)
    assert gradcheck(L.det, (leaf(st.tensor(a)),))
    z = leaf(st.zeros(2, 3, 3, dtype=st.float64))  # rank 0: every cofactor is 0
    L.det(z).sum().backward()
    assert float(z.grad.abs().sum()) == 0


def test_solve_values_and_grads():
    A = well(3, (2,))
    B = st.tensor(RNG.standard_normal((2, 3, 2)))
    close(L.solve(A, B), np.linalg.solve(A.numpy(), B.numpy()))
    b = st.tensor(RNG.standard_normal((2, 3)))
    close(L.solve(A, b), np.linalg.solve(A.numpy(), b.numpy()[..., None])[..., 0])
    Bt = st.tensor(RNG.standard_normal((2, 2, 3)))
    close(L.solve(A, Bt, left=False) @ A, Bt.numpy())
    assert gradcheck(L.solve, (leaf(A), leaf(B)))
    assert gradgradcheck(L.solve, (leaf(A), leaf(B)))
    assert gradcheck(lambda a, x: L.solve(a, x, left=False), (leaf(A), leaf(Bt)))


def test_matrix_power_and_pinv():
    A = well(3)
    a = A.numpy()
    for n in (0, 1, 3, -2):
        close(L.matrix_power(A, n), np.linalg.matrix_power(a, n), 1e-7)
    assert gradcheck(lambda x: L.matrix_power(x, 3), (leaf(A),))
    assert gradcheck(lambda x: L.matrix_power(x, -2), (leaf(A),))
    R = st.tensor(RNG.standard_normal((2, 4, 3)))
    close(L.pinv(R), np.linalg.pinv(R.numpy()))
    close(st.pinverse(R[0]), np.linalg.pinv(R.numpy()[0]))
    assert gradcheck(L.pinv, (leaf(R),))
    assert gradcheck(L.pinv, (leaf(R.mT),))


def test_cholesky_values_grads_and_upper():
    A = spd(3, (2,))
    close(L.cholesky(A), np.linalg.cholesky(A.numpy()))
    close(L.cholesky(A, upper=True), np.swapaxes(np.linalg.cholesky(A.numpy()), -1, -2))
    close(st.cholesky(A, True), L.cholesky(A, upper=True).numpy())
    sym = lambda x: L.cholesky(x @ x.mT + 3 * st.eye(3, dtype=st.float64))
    assert gradcheck(sym, (leaf(well(3)),))
    assert gradcheck(lambda x: L.cholesky(x @ x.mT + 3 * st.eye(3, dtype=st.float64), upper=True),
                     (leaf(well(3)),))


def test_rank_lstsq():
    a = RNG.standard_normal((5, 3))
    low = st.tensor(a @ RNG.standard_normal((3, 4)))
    assert L.matrix_rank(low).item() == 3 and L.matrix_rank(low).dtype is st.int64
    A = st.tensor(a)
    b = st.tensor(RNG.standard_normal((5, 2)))
    r = L.lstsq(A, b)
    close(r.solution, np.linalg.lstsq(a, b.numpy(), rcond=None)[0])
    assert r.rank.item() == 3
    assert gradcheck(lambda x, y: L.lstsq(x, y).solution, (leaf(A), leaf(b)))


# ---- decompositions ----

def test_eigh_values_grads():
    A = spd(4, (2,))
    w, V = L.eigh(A)
    w_ref, _ = np.linalg.eigh(A.numpy())
    close(w, w_ref)
    close(V @ st.diag_embed(w) @ V.mT, A.numpy())
    close(L.eigvalsh(A, "U"), w_ref)
    sym = lambda x: x + x.mT
    # losses invariant to each eigenvector's sign
    assert gradcheck(lambda x: L.eigvalsh(sym(x)), (leaf(well(4)),))
    wv = st.tensor(RNG.standard_normal((4, 4)))
    assert gradcheck(lambda x: (L.eigh(sym(x)).eigenvectors ** 2 * wv), (leaf(well(4)),))
    assert gradgradcheck(lambda x: L.eigvalsh(sym(x)), (leaf(well(4)),))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 4, 3)])
def test_svd_values_grads(shape):
    a = RNG.standard_normal(shape)
    A = st.tensor(a)
    U, S, Vh = L.svd(A, full_matrices=False)
    close(S, np.linalg.svd(a, compute_uv=False))
    close(U @ st.diag_embed(S) @ Vh, a)
    assert L.svd(A).U.shape[-1] == shape[-2]
    close(L.svdvals(A), np.linalg.svd(a, compute_uv=False))
    assert gradcheck(L.svdvals, (leaf(A),))

    wu = st.tensor(RNG.standard_normal(tuple(U.shape)))
    wv = st.tensor(RNG.standard_normal(tuple(Vh.shape)))

    def invariant(x):  # sign-invariant (squared) functions of the singular vectors
        u, s, vh = L.svd(x, full_matrices=False)
        return (u * u * wu).sum() + (vh ** 2 * wv * s.unsqueeze(-1)).sum()

    assert gradcheck(invariant, (leaf(A),))


def test_torch_svd_returns_v():
    a = RNG.standard_normal((4, 3))
    U, S, V = st.svd(st.tensor(a))
    close(U @ st.diag_embed(S) @ V.mT, a)
    assert st.svd(st.tensor(a), some=False).U.shape == (4, 4)
    r = st.svd(st.tensor(a), compute_uv=False)
    assert r.U.shape == (4, 4) and r.V.shape == (3, 3) and float(r.U.abs().sum()) == 0


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 5, 2)])
def test_qr_values_grads(shape):
    a = RNG.standard_normal(shape)
    Q, R = L.qr(st.tensor(a))
    close(Q @ R, a)
    close(Q.mT @ Q, np.broadcast_to(np.eye(shape[-1]), Q.shape[:-2] + (shape[-1],) * 2))
    assert L.qr(st.tensor(a), mode="complete").Q.shape[-1] == shape[-2]
    assert L.qr(st.tensor(a), mode="r").Q.numel() == 0
    assert gradcheck(lambda x: L.qr(x).Q, (leaf(st.tensor(a)),))
    assert gradcheck(lambda x: L.qr(x).R, (leaf(st.tensor(a)),))
    assert st.qr(st.tensor(a)).R.shape == R.shape


# ---- products ----

def test_products():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    x, y = st.tensor(a), st.tensor(b)
    close(L.vecdot(x, y), (a * b).sum(-1))
    close(L.cross(x, y), np.cross(a, b))
    mats = [RNG.standard_normal(s) for s in ((3,), (3, 4), (4, 2), (2,))]
    close(L.multi_dot([st.tensor(m) for m in mats]), np.linalg.multi_dot(mats))
    close(L.matmul(x, y.mT), a @ b.T)
    d = RNG.standard_normal((2, 3, 3))
    close(L.diagonal(st.tensor(d), offset=1), np.diagonal(d, 1, -2, -1))
    assert L.diagonal(st.tensor(np.ones((2, 3, 3)))).shape == (2, 3)
    with pytest.raises(RuntimeError, match="at least 2 tensors"):
        L.multi_dot([x])


# ---- dtypes, errors, aliases ----

@pytest.mark.parametrize("fn", [L.inv, L.det, lambda a: L.slogdet(a)[1], L.cholesky, L.pinv,
                                lambda a: L.eigh(a)[1], lambda a: L.svd(a)[0], L.svdvals,
                                lambda a: L.qr(a)[1], lambda a: L.solve(a, a), st.inverse])
def test_float32_stays_float32(fn):
    assert fn(spd(3).to(st.float32)).dtype is st.float32


def test_errors():
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
        L.inv(st.zeros(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        L.det(st.zeros(3))
    with pytest.raises(L.LinAlgError, match="singular"):
        L.inv(st.zeros(3, 3))
    with pytest.raises(L.LinAlgError, match="singular"):
        L.solve(st.zeros(3, 3), st.ones(3))
    with pytest.raises(L.LinAlgError, match="positive-definite"):
        L.cholesky(-st.eye(3))
    with pytest.raises(RuntimeError, match="floating point"):
        L.inv(st.eye(3, dtype=st.int64))
    with pytest.raises(RuntimeError, match="same dtype"):
        L.solve(st.eye(3), st.ones(3, dtype=st.float64))
    with pytest.raises(NotImplementedError, match="to_dense"):
        L.inv(st.eye(3).to_sparse())
    assert issubclass(L.LinAlgError, RuntimeError)
    with pytest.raises(NotImplementedError, match="complex"):
        L.qr(st.eye(2, dtype=st.complex128).requires_grad_(True))  # inv, pinv have complex grads
    with pytest.raises(NotImplementedError, match="complex"):
        L.svd(st.eye(2, dtype=st.complex128))
    with pytest.raises(TypeError, match="out="):
        L.qr(st.eye(2), out=(st.eye(2), st.eye(2)))
    bad = st.ones(3, 3)
    bad[0, 0] = math.nan
    with pytest.raises(L.LinAlgError, match="did not converge"):
        L.svd(bad)
    with pytest.raises(L.LinAlgError, match="did not converge"):
        L.eigh(bad.requires_grad_(True))
    s = L.slogdet(st.zeros(2, 2))
    assert s.sign.item() == 0 and s.logabsdet.item() == -math.inf


def test_empty_batches_and_half_precision():
    assert L.svd(st.zeros(0, 3, 2)).S.shape == (0, 2)
    assert L.eigh(st.zeros(0, 3, 3)).eigenvectors.shape == (0, 3, 3)
    assert L.qr(st.zeros(0, 3, 2)).R.shape == (0, 2, 2)
    assert L.inv(st.zeros(0, 3, 3)).shape == (0, 3, 3)
    assert L.det(st.zeros(2, 0, 0)).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Low precision dtypes not supported. Got Half"):
        L.inv(st.ones(2, 2, dtype=st.float16))
    assert L.vector_norm(st.ones(2, 2, dtype=st.float16)).dtype is st.float16  # as torch


def test_tensor_methods():
    A = well(3)
    close(A.inverse(), np.linalg.inv(A.numpy()))
    close(A.det(), np.linalg.det(A.numpy()))
    close(A.logdet(), np.linalg.slogdet(A.numpy())[1])
    assert A.slogdet().sign.item() == 1
    close(A.matrix_power(2), A.numpy() @ A.numpy())
    close(A.pinverse(), np.linalg.pinv(A.numpy()))
    P = spd(3)
    close(P.cholesky(), np.linalg.cholesky(P.numpy()))
    close(A.qr().Q @ A.qr().R, A.numpy())
    U, S, V = A.svd()
    close(U @ st.diag_embed(S) @ V.mT, A.numpy())


# ---- parity with torch ----

def test_torch_parity():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3)
    A, T = st.tensor(a), torch.tensor(a)
    pairs = [
        (L.inv(A), torch.linalg.inv(T)), (L.det(A), torch.linalg.det(T)),
        (L.slogdet(A)[1], torch.linalg.slogdet(T)[1]),
        (L.matrix_norm(A, "nuc"), torch.linalg.matrix_norm(T, "nuc")),
        (L.norm(A[0], 2), torch.linalg.norm(T[0], 2)),
        (L.vector_norm(A, 3, dim=(0, 2)), torch.linalg.vector_norm(T, 3, dim=(0, 2))),
        (L.pinv(A), torch.linalg.pinv(T)), (L.matrix_power(A, -3), torch.linalg.matrix_power(T, -3)),
        (L.svdvals(A), torch.linalg.svdvals(T)),
        (L.eigvalsh(A @ A.mT), torch.linalg.eigvalsh(T @ T.mT)),
        (L.matrix_rank(A), torch.linalg.matrix_rank(T)),
        (st.logdet(A), torch.logdet(T)),
    ]
    for mine, ref in pairs:
        np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=1e-8, atol=1e-10)
    # gradients agree too
    Am = leaf(A)
    Tt = T.clone().requires_grad_(True)
    (L.det(Am).sum() + L.matrix_norm(Am, 2).sum() + L.inv(Am).sum()).backward()
    (torch.linalg.det(Tt).sum() + torch.linalg.matrix_norm(Tt, 2).sum()
     + torch.linalg.inv(Tt).sum()).backward()
    np.testing.assert_allclose(Am.grad.numpy(), Tt.grad.numpy(), rtol=1e-7, atol=1e-9)
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.inv(torch.zeros(3, 3))
    # decompositions: gradients of (sign-invariant) losses, including the raw, unsymmetrized
    # gradient of eigh and cholesky (torch returns the symmetric one)
    w = RNG.standard_normal((2, 3, 3))
    W, Wt = st.tensor(w), torch.tensor(w)
    S_, St = A @ A.mT, T @ T.mT
    losses = [
        (lambda x: L.eigh(x)[1] ** 2 * W, lambda x: torch.linalg.eigh(x)[1] ** 2 * Wt, S_, St),
        (lambda x: L.cholesky(x) * W, lambda x: torch.linalg.cholesky(x) * Wt, S_, St),
        (lambda x: L.svd(x)[0] ** 2 * W, lambda x: torch.linalg.svd(x)[0] ** 2 * Wt, A, T),
        (lambda x: L.svd(x)[2] ** 2 * W, lambda x: torch.linalg.svd(x)[2] ** 2 * Wt, A, T),
        (lambda x: L.qr(x)[0] * W, lambda x: torch.linalg.qr(x)[0] * Wt, A, T),
        (lambda x: L.svd(x, False)[2] ** 2 * W[:, :2], lambda x: torch.linalg.svd(x, False)[2] ** 2
         * Wt[:, :2], A[:, :2], T[:, :2]),
    ]
    for f, ft, x, xt in losses:
        x, xt = leaf(x), xt.detach().clone().requires_grad_(True)
        f(x).sum().backward()
        ft(xt).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-7, atol=1e-9)
    with pytest.raises(L.LinAlgError):
        L.inv(st.zeros(3, 3))


# ---- solve_triangular, cond, tensor forms, vander ----

@pytest.mark.parametrize("upper", [False, True])
def test_solve_triangular(upper):
    A = well(3, (2,))
    B = st.tensor(RNG.standard_normal((2, 3, 2)))
    tri = np.triu(A.numpy()) if upper else np.tril(A.numpy())
    close(L.solve_triangular(A, B, upper=upper), np.linalg.solve(tri, B.numpy()))
    unit = tri.copy()
    unit[:, range(3), range(3)] = 1
    close(L.solve_triangular(A, B, upper=upper, unitriangular=True), np.linalg.solve(unit, B.numpy()))
    Bt = B.mT
    close(L.solve_triangular(A, Bt, upper=upper, left=False) @ st.tensor(tri), Bt.numpy())
    for unit in (False, True):
        def f(a, b, unit=unit):
            return L.solve_triangular(a, b, upper=upper, unitriangular=unit)

        assert gradcheck(f, (leaf(A), leaf(B)))
    assert gradgradcheck(lambda a, b: L.solve_triangular(a, b, upper=upper), (leaf(A), leaf(B)))
    r = L.solve_triangular(st.zeros(2, 2), st.ones(2, 1), upper=True)  # singular: inf/nan
    assert math.isinf(r[1, 0].item()) and math.isnan(r[0, 0].item())
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        L.solve_triangular(A, st.ones(3, dtype=st.float64), upper=upper)


def test_cond_tensorinv_tensorsolve_vander():
    a = RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3)
    A = st.tensor(a)
    for p in (None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf):
        close(L.cond(A, p), np.linalg.cond(a, p), 1e-7)
    assert math.isinf(L.cond(st.zeros(2, 2), "fro").item())
    both = st.stack([A[0], st.zeros(3, 3, dtype=st.float64)])
    r = L.cond(both, 1)
    assert math.isinf(r[1].item()) and abs(r[0].item() - np.linalg.cond(a[0], 1)) < 1e-8
    assert gradcheck(lambda x: L.cond(x), (leaf(A),))
    t = st.tensor(RNG.standard_normal((4, 2, 2)) + np.eye(4).reshape(4, 2, 2))
    close(L.tensorinv(t, 1), np.linalg.tensorinv(t.numpy(), 1))
    b = st.tensor(RNG.standard_normal(4))
    close(L.tensorsolve(t, b), np.linalg.tensorsolve(t.numpy(), b.numpy()))
    x = st.tensor([1.0, 2.0, 3.0], dtype=st.float64)
    close(L.vander(x), np.vander(x.numpy(), increasing=True))
    assert L.vander(st.tensor([1, 2, 3]), N=4).dtype is st.int64
    assert gradcheck(lambda v: L.vander(v, N=4), (leaf(x),))
    with pytest.raises(RuntimeError, match="greater than 1"):
        L.vander(x, N=1)


def test_extras_torch_parity():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3)
    b = RNG.standard_normal((2, 3, 2))
    A, T = st.tensor(a), torch.tensor(a)
    np.testing.assert_allclose(
        L.solve_triangular(A, st.tensor(b), upper=True).numpy(),
        torch.linalg.solve_triangular(T, torch.tensor(b), upper=True).numpy(), rtol=1e-10)
    np.testing.assert_allclose(L.cond(A, "nuc").numpy(), torch.linalg.cond(T, "nuc").numpy(),
                               rtol=1e-10)
    np.testing.assert_array_equal(L.vander(st.tensor([1, 2, 3])).numpy(),
                                  torch.linalg.vander(torch.tensor([1, 2, 3])).numpy())


# ---- matrix_exp ----

@pytest.mark.parametrize("scale", [0.1, 1.0, 20.0])
def test_matrix_exp_values_grads(scale):
    a = RNG.standard_normal((2, 3, 3)) * scale
    # reference: eigen-free scipy-independent check via exp(A) = exp(A/2)^2 and a long Taylor sum
    x = a / 2 ** 10
    ref = np.broadcast_to(np.eye(3), a.shape).copy()
    term = ref.copy()
    for k in range(1, 30):
        term = term @ x / k
        ref = ref + term
    for _ in range(10):
        ref = ref @ ref
    r = L.matrix_exp(st.tensor(a)).numpy()
    np.testing.assert_allclose(r, ref, rtol=1e-9 * max(1, scale), atol=1e-12 * np.abs(ref).max())
    A = leaf(st.tensor(a[0] / max(1.0, scale)))
    assert gradcheck(L.matrix_exp, (A,))
    assert gradgradcheck(L.matrix_exp, (A,))


def test_matrix_exp_aliases_dtype_errors():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(st.tensor(a).matrix_exp().numpy(),
                               torch.matrix_exp(torch.tensor(a)).numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(st.matrix_exp(st.tensor(a)).numpy(),
                               torch.linalg.matrix_exp(torch.tensor(a)).numpy(), rtol=1e-12)
    assert L.matrix_exp(st.ones(2, 2)).dtype is st.float32
    assert L.matrix_exp(st.zeros(0, 2, 2)).shape == (0, 2, 2)
    with pytest.raises(RuntimeError, match="square matrices"):
        L.matrix_exp(st.ones(2, 3))
    with pytest.raises(RuntimeError, match="floating point"):
        L.matrix_exp(st.ones(2, 2, dtype=st.int64))


# linalg names without an op-table row (tests/opdb/linalg_module.py), each with its reason
NOT_TABLE = {
    "LinAlgError": "an exception class",
    "eigh": "eigenvectors are sign-ambiguous: tested above through sign-invariant functions",
    "svd": "singular vectors are sign-ambiguous: tested above through sign-invariant functions",
    "norm": "dispatches to vector_norm / matrix_norm, which have rows",
    "matmul": "alias of the table op matmul",
    "diagonal": "alias of the table op diagonal",
    "lstsq": "a composition of pinv and matmul (rows of their own)",
    "cond": "a composition of svdvals / matrix_norm and inv",
    "tensorinv": "a reshape around inv",
    "tensorsolve": "a reshape around solve",
    "vander": "a composition of products and stack",
}


def test_every_linalg_name_has_a_row_or_a_reason():
    from tests.opdb import OP_DB

    rows = {i.name.split("(")[0] for i in OP_DB}
    missing = [n for n in st.linalg.__all__ if f"linalg.{n}" not in rows and n not in NOT_TABLE]
    assert not missing, f"add an OpInfo row (tests/opdb/linalg_module.py) for {missing}"
    assert not [n for n in NOT_TABLE if n not in st.linalg.__all__]
