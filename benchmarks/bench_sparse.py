"""Sparse workloads: sparsetorch against raw SciPy/NumPy and torch (when installed), one process.

    python benchmarks/bench_sparse.py            # 9 samples after 2 warm-ups, full sizes
    python benchmarks/bench_sparse.py --quick    # small sizes, 3 samples: a smoke test
    python benchmarks/bench_sparse.py --only spmm,coalesce   # a subset of the sections
    python benchmarks/bench_sparse.py --only spmm-fwd,coalesce,sum --threads 1   # the kernel rows

``--threads N`` sets torch's and numba's thread counts (for 1 thread also export
``NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1``); sparsetorch's parallel kernels still take fewer
threads where other processes keep cores busy (``sparsetorch._jit``'s load-aware policy, which
torch does not have): ``--all-cores`` turns that off so both libraries run ``N`` threads.

Sections (sizes from issue 3; ``--quick`` divides them by about 100):
- ``spmm`` (``spmm-fwd``: the forward rows only): ``sparse.mm(A, X)``, A 200k x 200k with 16 nnz/row (3.2M nnz, float32), X 200k x 64;
  CSR and COO, forward and forward+backward (gradients for X and for A's values). The SciPy row
  of forward+backward is ``A @ X``, ``A.T @ G`` and a chunked NumPy SDDMM for A's values.
  torch's COO backward builds a dense 200k x 200k gradient (160 GB) and dies: not run.
- ``coalesce``: a 1M x 1M COO with 2M entries, 30 % of them repeating an earlier coordinate
  (construction included, invariant checks off, as torch's default).
- ``elementwise``: on 8192 x 8192 with 400 nnz/row (3.3M nnz): sparse + sparse (COO, CSR),
  sparse * dense (COO, CSR), ``sum(dim=1)``, ``t().to_sparse_csr()`` from CSR and COO
  (``sum``: the ``sum(dim=1)`` rows only).
- ``tiny``: 8 x 8 CSR add and ``sparse.mm`` (per-op overhead).
- ``sweep``: spmm, add and coalesce at three sizes 10x apart in nnz, time per nnz (flat = linear).

Targets (issue 3, medians of one run): CSR spmm forward <= 1.0x torch, CSR forward+backward
<= 0.7x torch, COO forward <= 0.6x torch, COO forward+backward within 1.1x of SciPy, coalesce
<= 0.25x torch, the elementwise section within 1.25x of SciPy.
A variant whose op is missing (NotImplementedError) is reported and left out.
"""

from __future__ import annotations

import sys
import time
import warnings

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np
import scipy.sparse as sp

import sparsetorch as st

try:
    import torch
except ImportError:  # the torch columns are skipped
    torch = None

# torch's "sparse CSR is beta" / "invariant checks implicitly disabled" notices
warnings.filterwarnings("ignore", message=".*[Ss]parse.*")

BASE = ["scipy", "torch"]


# ---- inputs ---------------------------------------------------------------------------------


def random_csr(n_rows, n_cols, per_row, seed, dtype=np.float32):
    """A canonical SciPy CSR with ``per_row`` distinct random columns in every row."""
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, n_cols, (n_rows, per_row * 2))
    cols.sort(axis=1)
    keep = np.ones_like(cols, dtype=bool)
    keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
    # exactly per_row distinct columns per row (2x oversampling leaves plenty on these sizes)
    rank = np.cumsum(keep, axis=1)
    keep &= rank <= per_row
    indptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(keep.sum(1), out=indptr[1:])
    data = rng.standard_normal(int(indptr[-1])).astype(dtype)
    return sp.csr_array((data, cols[keep].astype(np.int64), indptr), shape=(n_rows, n_cols))


def duplicated_coo(n, nnz, dup_frac, seed):
    """rows, cols, values of an n x n COO whose last ``dup_frac`` entries repeat earlier ones."""
    rng = np.random.default_rng(seed)
    k = int(nnz * dup_frac)
    r = rng.integers(0, n, nnz)
    c = rng.integers(0, n, nnz)
    src = rng.integers(0, nnz - k, k)
    r[nnz - k:], c[nnz - k:] = r[src], c[src]
    perm = rng.permutation(nnz)
    return r[perm], c[perm], rng.standard_normal(nnz).astype(np.float32)


def st_csr(m, requires_grad=False):
    t = st.sparse_csr_tensor(st.from_numpy(m.indptr), st.from_numpy(m.indices), st.from_numpy(m.data),
                             m.shape, check_invariants=False)
    return t.requires_grad_() if requires_grad else t


def st_coo(m, requires_grad=False):
    c = m.tocoo()
    idx = np.stack([c.row.astype(np.int64), c.col.astype(np.int64)])
    t = st.sparse_coo_tensor(st.from_numpy(idx), st.from_numpy(c.data), m.shape,
                             check_invariants=False, is_coalesced=True)
    return t.requires_grad_() if requires_grad else t


def torch_csr(m, requires_grad=False):
    return torch.sparse_csr_tensor(torch.from_numpy(m.indptr), torch.from_numpy(m.indices),
                                   torch.from_numpy(m.data), m.shape, requires_grad=requires_grad)


def torch_coo(m, requires_grad=False):
    c = m.tocoo()
    idx = torch.from_numpy(np.stack([c.row.astype(np.int64), c.col.astype(np.int64)]))
    t = torch.sparse_coo_tensor(idx, torch.from_numpy(c.data), m.shape, is_coalesced=True)
    return t.requires_grad_() if requires_grad else t


# ---- helpers --------------------------------------------------------------------------------


def dense_of(x):
    """A NumPy array of any result: SciPy sparse, NumPy, sparsetorch or torch tensor."""
    if sp.issparse(x):
        return x.toarray()
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, st.Tensor):
        return (x.to_dense() if x.layout is not st.strided else x).detach().numpy()
    return (x.to_dense() if x.layout != torch.strided else x).detach().numpy()


def add_variant(variants, name, fn, check=None, notes=None):
    """Run ``fn`` once (correctness check against ``check``, a NumPy array or callable); keep it
    as a timed variant unless the op is missing or wrong, which is reported instead."""
    try:
        got = fn()
        if check is not None:
            want = check() if callable(check) else check
            got_d = np.concatenate([dense_of(g).ravel() for g in (got if isinstance(got, tuple) else (got,))])
            want = np.asarray(want).ravel()
            if got_d.shape != want.shape or not np.allclose(got_d, want, rtol=1e-3, atol=1e-3):
                raise AssertionError("result differs from the reference")
    except (NotImplementedError, AttributeError, RuntimeError, TypeError, AssertionError) as e:
        msg = f"{type(e).__name__}: {str(e).splitlines()[0][:110]}"
        print(f"  [{name}] left out: {msg}")
        if notes is not None:
            notes[name] = msg
        return
    variants[name] = _harness.loop(fn)


def report(title, variants, args, iters=1):
    if len(variants) < 1:
        print(f"\n{title}\n\n(no variant ran)")
        return {}
    rows = _harness.compare(variants, iters, args.samples, args.warmup)
    _harness.print_table(rows, BASE, title=title, unit="us/op")
    return rows


def sddmm(G, X, rows, cols, chunk=1 << 18):
    """values[k] = G[rows[k]] . X[cols[k]] in chunks (the masked gradient of A, O(nnz) memory)."""
    out = np.empty(rows.shape[0], G.dtype)
    for s in range(0, rows.shape[0], chunk):
        e = s + chunk
        out[s:e] = np.einsum("ij,ij->i", G[rows[s:e]], X[cols[s:e]])
    return out


# ---- sections -------------------------------------------------------------------------------


def spmm_section(args, n, per_row=16, k=64, backward=True):
    A = random_csr(n, n, per_row, 0)
    rng = np.random.default_rng(1)
    Xn = rng.standard_normal((n, k)).astype(np.float32)
    Gn = rng.standard_normal((n, k)).astype(np.float32)
    Acoo = A.tocoo()
    rows, cols = Acoo.row.astype(np.int64), Acoo.col.astype(np.int64)
    label = f"A {n}x{n}, {per_row} nnz/row ({A.nnz} nnz), X {n}x{k}, float32"
    for layout in ("csr", "coo"):
        _spmm_layout(args, layout, label, A, Acoo, Xn, Gn, rows, cols, backward)


def _spmm_layout(args, layout, label, A, Acoo, Xn, Gn, rows, cols, backward=True):
    # forward
    want = A @ Xn
    v = {}
    As = (st_csr if layout == "csr" else st_coo)(A)
    Xs = st.from_numpy(Xn)
    add_variant(v, "sparsetorch", lambda: st.sparse.mm(As, Xs), want)
    Asp = A if layout == "csr" else Acoo
    add_variant(v, "scipy", lambda: Asp @ Xn, want)
    if torch is not None:
        At = (torch_csr if layout == "csr" else torch_coo)(A)
        Xt = torch.from_numpy(Xn)
        add_variant(v, "torch", lambda: torch.sparse.mm(At, Xt), want)
    report(f"spmm forward, {layout.upper()}: {label}", v, args)
    if not backward:
        return

    # forward + backward (dX and A's values)
    v = {}
    want_dx = A.T @ Gn
    want_dv = sddmm(Gn, Xn, rows, cols)
    Ag = (st_csr if layout == "csr" else st_coo)(A, requires_grad=True)
    Xg = st.from_numpy(Xn.copy()).requires_grad_()
    Gs = st.from_numpy(Gn)

    def st_step(A=Ag, X=Xg):
        A.grad = None
        X.grad = None
        st.sparse.mm(A, X).backward(Gs)
        return X.grad, A.grad._values() if A.grad.layout is st.sparse_coo else A.grad.values()

    add_variant(v, "sparsetorch", st_step, lambda: np.concatenate([want_dx.ravel(), want_dv]))

    def scipy_step(Asp=Asp):
        Asp @ Xn
        return Asp.T @ Gn, sddmm(Gn, Xn, rows, cols)

    add_variant(v, "scipy", scipy_step, lambda: np.concatenate([want_dx.ravel(), want_dv]))
    if torch is not None and layout == "csr":
        At = torch_csr(A, requires_grad=True)
        Xt = torch.from_numpy(Xn.copy()).requires_grad_()
        Gt = torch.from_numpy(Gn)

        def torch_step(A=At, X=Xt):
            A.grad = None
            X.grad = None
            torch.sparse.mm(A, X).backward(Gt)
            return X.grad, A.grad.values()

        add_variant(v, "torch", torch_step, lambda: np.concatenate([want_dx.ravel(), want_dv]))
    elif torch is not None:
        # torch's COO backward materialises a dense n x n gradient for A (n = 200k: 160 GB)
        print("  [torch] COO forward+backward: fails (dense grad), not run")
    report(f"spmm forward+backward, {layout.upper()}: {label}", v, args)


def coalesce_section(args, n, nnz, dup=0.3):
    r, c, vals = duplicated_coo(n, nnz, dup, 2)
    ref = sp.coo_array((vals, (r, c)), shape=(n, n)).tocsr()
    ref.sum_duplicates()
    want_nnz = ref.nnz
    idx = np.stack([r, c]).astype(np.int64)
    v = {}
    si, sv = st.from_numpy(idx), st.from_numpy(vals)
    add_variant(v, "sparsetorch", lambda: st.sparse_coo_tensor(
        si, sv, (n, n), check_invariants=False).coalesce()._nnz(), None)
    add_variant(v, "scipy", lambda: sp.coo_array((vals, (r, c)), shape=(n, n)).tocsr().tocoo(), None)
    if torch is not None:
        ti, tv = torch.from_numpy(idx), torch.from_numpy(vals)
        add_variant(v, "torch", lambda: torch.sparse_coo_tensor(ti, tv, (n, n)).coalesce(), None)
    got = st.sparse_coo_tensor(si, sv, (n, n), check_invariants=False).coalesce()
    assert got._nnz() == want_nnz, "coalesce: wrong number of unique entries"
    report(f"coalesce: {n}x{n} COO, {nnz} entries, {dup:.0%} duplicates ({want_nnz} unique)", v, args)


def elementwise_section(args, n, per_row):
    A = random_csr(n, n, per_row, 3)
    B = random_csr(n, n, per_row, 4)
    D = np.random.default_rng(5).standard_normal((n, n)).astype(np.float32)
    label = f"{n}x{n}, {per_row} nnz/row ({A.nnz} nnz), float32"
    for layout in ("coo", "csr"):
        _elementwise_layout(args, layout, label, A, B, D)


def sum_section(args, n, per_row):
    """The ``sum(dim=1)`` rows of the elementwise section alone (same matrix)."""
    A = random_csr(n, n, per_row, 3)
    label = f"{n}x{n}, {per_row} nnz/row ({A.nnz} nnz), float32"
    for layout in ("coo", "csr"):
        mk = {"csr": (st_csr, torch_csr, lambda m: m), "coo": (st_coo, torch_coo, lambda m: m.tocoo())}
        fs, ft, fsp = mk[layout]
        _sum_rows(args, layout, label, A, fs(A), fsp(A), ft(A) if torch is not None else None)


def _elementwise_layout(args, layout, label, A, B, D):
    n = A.shape[0]
    mk = {"csr": (st_csr, torch_csr, lambda m: m), "coo": (st_coo, torch_coo, lambda m: m.tocoo())}
    fs, ft, fsp = mk[layout]
    a_s, b_s, a_sp, b_sp = fs(A), fs(B), fsp(A), fsp(B)
    a_t, b_t = (ft(A), ft(B)) if torch is not None else (None, None)
    v = {}
    want = (A + B).toarray()
    add_variant(v, "sparsetorch", lambda: a_s + b_s, want)
    add_variant(v, "scipy", lambda: a_sp + b_sp, want)
    if torch is not None:
        add_variant(v, "torch", lambda: a_t + b_t, want)
    report(f"sparse + sparse, {layout.upper()}: {label}", v, args)

    v = {}
    want = A.multiply(D).toarray()
    Ds = st.from_numpy(D)
    add_variant(v, "sparsetorch", lambda: a_s * Ds, want)
    add_variant(v, "scipy", lambda: a_sp.multiply(D), want)
    if torch is not None:
        Dt = torch.from_numpy(D)
        add_variant(v, "torch", lambda: a_t * Dt, want)
    report(f"sparse * dense, {layout.upper()}: {label}, dense {n}x{n}", v, args)

    _sum_rows(args, layout, label, A, a_s, a_sp, a_t)

    v = {}
    want = A.T.toarray()
    add_variant(v, "sparsetorch", lambda: a_s.t().to_sparse_csr(), want)
    add_variant(v, "scipy", lambda: a_sp.T.tocsr(), want)
    if torch is not None:
        add_variant(v, "torch", lambda: a_t.t().to_sparse_csr(), want)
    report(f"t().to_sparse_csr() from {layout.upper()}: {label}", v, args)


def _sum_rows(args, layout, label, A, a_s, a_sp, a_t):
    v = {}
    want = np.asarray(A.sum(axis=1)).ravel()
    add_variant(v, "sparsetorch", lambda: a_s.sum(dim=1), want)
    add_variant(v, "scipy", lambda: a_sp.sum(axis=1), want)
    if torch is not None:
        if layout == "csr":  # torch: CSR sum needs keepdim=True; torch.sparse.sum(csr, 1) is missing
            add_variant(v, "torch", lambda: a_t.sum(dim=1, keepdim=True), want)
        else:
            add_variant(v, "torch", lambda: torch.sparse.sum(a_t, 1), want)
    report(f"sum(dim=1), {layout.upper()}: {label}", v, args)


def tiny_section(args, iters):
    A = random_csr(8, 8, 2, 6)
    B = random_csr(8, 8, 2, 7)
    X = np.random.default_rng(8).standard_normal((8, 4)).astype(np.float32)
    for name, fs, fsp, ft in (
        ("add", lambda a, b, x: a + b, lambda a, b, x: a + b, lambda a, b, x: a + b),
        ("sparse.mm", lambda a, b, x: st.sparse.mm(a, x), lambda a, b, x: a @ x,
         lambda a, b, x: torch.sparse.mm(a, x)),
    ):
        _tiny_one(args, iters, name, fs, fsp, ft, A, B, X)


def _tiny_one(args, iters, name, fs, fsp, ft, A, B, X):
    v = {}
    a_s, b_s, x_s = st_csr(A), st_csr(B), st.from_numpy(X)
    want = dense_of(fsp(A, B, X))
    add_variant(v, "sparsetorch", lambda: fs(a_s, b_s, x_s), want)
    add_variant(v, "scipy", lambda: fsp(A, B, X), want)
    if torch is not None:
        a_t, b_t, x_t = torch_csr(A), torch_csr(B), torch.from_numpy(X)
        add_variant(v, "torch", lambda: ft(a_t, b_t, x_t), want)
    rows = _harness.compare(v, iters, args.samples, args.warmup)
    _harness.print_table(rows, BASE, title=f"tiny 8x8 CSR {name} (per-op overhead), {iters} ops/sample")


def _once(fn, reps):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def sweep_section(args, scales):
    """Time per nnz at three sizes 10x apart: flat for linear ops, slowly rising for n log n."""
    reps = max(3, args.samples // 3)
    libs = ["sparsetorch", "scipy"] + (["torch"] if torch is not None else [])
    lines = {}
    for scale in scales:
        _sweep_scale(2000 * scale, libs, reps, lines)
    print("\nsize sweep (min of", reps, "runs; ns per stored element: flat = linear)\n")
    print("| op | nnz | " + " | ".join(f"{lib} ms | {lib} ns/nnz" for lib in libs) + " |")
    print("|" + "---|" * (2 + 2 * len(libs)))
    for rows in lines.values():
        print("\n".join(rows))


def _sweep_scale(n, libs, reps, lines):
    A = random_csr(n, n, 16, 9)
    B = random_csr(n, n, 16, 12)
    X = np.random.default_rng(10).standard_normal((n, 64)).astype(np.float32)
    m = 10 * n
    r, c, vals = duplicated_coo(m, m, 0.3, 11)
    idx = np.stack([r, c]).astype(np.int64)
    a_s, b_s, x_s = st_csr(A), st_csr(B), st.from_numpy(X)
    i_s, v_s = st.from_numpy(idx), st.from_numpy(vals)
    cases = {
        "spmm CSR (X: 64 cols)": (A.nnz, {"sparsetorch": lambda: st.sparse.mm(a_s, x_s),
                                         "scipy": lambda: A @ X}),
        "add CSR (nnz of both)": (A.nnz + B.nnz, {"sparsetorch": lambda: a_s + b_s, "scipy": lambda: A + B}),
        "coalesce (30% dup)": (idx.shape[1], {
            "sparsetorch": lambda: st.sparse_coo_tensor(i_s, v_s, (m, m), check_invariants=False).coalesce(),
            "scipy": lambda: sp.coo_array((vals, (r, c)), shape=(m, m)).tocsr().tocoo()}),
    }
    if torch is not None:
        a_t, b_t, x_t = torch_csr(A), torch_csr(B), torch.from_numpy(X)
        i_t, v_t = torch.from_numpy(idx), torch.from_numpy(vals)
        cases["spmm CSR (X: 64 cols)"][1]["torch"] = lambda: torch.sparse.mm(a_t, x_t)
        cases["add CSR (nnz of both)"][1]["torch"] = lambda: a_t + b_t
        cases["coalesce (30% dup)"][1]["torch"] = lambda: torch.sparse_coo_tensor(i_t, v_t, (m, m)).coalesce()
    for op, (nnz, fns) in cases.items():
        cells = []
        for lib in libs:
            try:
                fns[lib]()
                s = _once(fns[lib], reps)
                cells += [f"{s * 1e3:.2f}", f"{s * 1e9 / nnz:.1f}"]
            except (NotImplementedError, AttributeError, RuntimeError) as e:
                cells += ["n/a", type(e).__name__]
        lines.setdefault(op, []).append(f"| {op} | {nnz} | " + " | ".join(cells) + " |")


# ---- main -----------------------------------------------------------------------------------


def set_threads(n, all_cores):
    """torch's and numba's thread counts to ``n`` (None: unchanged); ``all_cores``: sparsetorch's
    load-aware thread policy sees every core as free (both libraries then run the same count)."""
    if n is not None:
        if torch is not None:
            torch.set_num_threads(n)
        st.set_num_threads(n)  # numba's pool (as sparsetorch starts it, capped) and the BLAS
    if all_cores:
        from sparsetorch import _jit

        _jit.free_cores = _jit._cores  # benchmark only: the policy's load sample, switched off
    try:
        import numba

        nb = numba.get_num_threads()
    except ImportError:
        nb = "-"
    print(f"threads: torch {torch.get_num_threads() if torch is not None else '-'}, numba {nb}"
          f"{', load-aware policy off' if all_cores else ''}")


def main(argv=None) -> int:
    p = _harness.parser(__doc__.splitlines()[0])
    p.add_argument("--only", default="spmm,coalesce,elementwise,tiny,sweep",
                   help="comma-separated sections to run")
    p.add_argument("--threads", type=int, default=None,
                   help="torch's and numba's thread count (default: as they start)")
    p.add_argument("--all-cores", action="store_true",
                   help="sparsetorch's kernels take every thread, however busy the machine")
    args = p.parse_args(argv)
    if args.quick:
        args.samples = 3
        args.warmup = 1
    set_threads(args.threads, args.all_cores)
    _harness.print_environment(("numpy", "scipy", "sparsetorch", "torch"))
    if torch is None:
        print("torch not installed: torch columns skipped")
    if not args.no_wait:
        _harness.wait_for_quiet()
    only = set(args.only.split(","))
    q = args.quick
    if "spmm" in only or "spmm-fwd" in only:
        spmm_section(args, 2_000 if q else 200_000, backward="spmm" in only)
    if "coalesce" in only:
        coalesce_section(args, 10_000 if q else 1_000_000, 20_000 if q else 2_000_000)
    if "elementwise" in only:
        elementwise_section(args, 512 if q else 8192, 40 if q else 400)
    if "sum" in only and "elementwise" not in only:
        sum_section(args, 512 if q else 8192, 40 if q else 400)
    if "tiny" in only:
        tiny_section(args, 200 if q else 2_000)
    if "sweep" in only:
        sweep_section(args, (1, 10) if q else (1, 10, 100))
    return 0


if __name__ == "__main__":
    sys.exit(main())
