"""GPU workloads (issue 7): sparsetorch on CuPy against torch CUDA, in one process.

    python benchmarks/bench_gpu.py                 # full sizes, 9 samples after 2 warm-ups
    python benchmarks/bench_gpu.py --quick         # full sizes, 3 samples
    python benchmarks/bench_gpu.py --only mm       # one section: mm, bag, coalesce, add
    SPARSETORCH_FAKE_CUDA=1 python benchmarks/bench_gpu.py --tiny   # smoke test without a GPU

Sections (float32):
- ``sparse.mm``: A 2M x 2M with 16 stored entries per row (CSR and COO) @ X 2M x 64; forward
  alone, and forward + backward (gradients of A, masked to its pattern, and of X);
- ``EmbeddingBag``: a 10M x 128 table, 65,536 bags x 32 ids, mode sum, ``sparse=True``:
  forward + backward + ``SparseAdam`` step;
- ``EmbeddingBag`` forward + backward alone, and the ``SparseAdam`` step alone;
- ``coalesce`` of 20M COO entries (2-D, many duplicates);
- sparse + sparse, COO and CSR (2M x 2M, 8 stored per row each, a quarter shared).

Each row gives the median time, the ratio to torch CUDA (target <= 1.2x) and the bandwidth
floor: the bytes the operation must move at least (every input read once, every output written
once; the per-entry row gathers of SpMM are NOT counted, so the floor is optimistic) divided by
the card's memory bandwidth (H100 SXM 3.35 TB/s, H200 4.8 TB/s; ``--bandwidth`` overrides; the
measured device-to-device copy bandwidth is printed too). Every timed call ends with a device
synchronize for both libraries.

Without a GPU it prints why and exits 0. ``--tiny`` runs the same code paths at tiny sizes (on
the fake CUDA backend, ``SPARSETORCH_FAKE_CUDA``), so the script cannot rot unnoticed.
"""

from __future__ import annotations

import sys

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st
import sparsetorch.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF

    TORCH_CUDA = torch.cuda.is_available()
except ImportError:  # the torch rows are left out
    torch = None
    TORCH_CUDA = False

NOMINAL_BW = {"H100": 3.35e12, "H200": 4.8e12, "A100": 2.0e12}  # bytes/s (SXM parts)
FULL = {"m": 2_000_000, "nnz_row": 16, "k": 64, "num": 10_000_000, "dim": 128, "bags": 65_536,
        "per_bag": 32, "coalesce": 20_000_000}
TINY = {"m": 2_000, "nnz_row": 4, "k": 8, "num": 5_000, "dim": 16, "bags": 64, "per_bag": 8,
        "coalesce": 20_000}


def _sync():
    st.cuda.synchronize()
    if TORCH_CUDA:
        torch.cuda.synchronize()


def _timed(fn):
    """A harness variant that calls ``fn`` n times and waits for the device."""
    def run(n):
        for _ in range(n):
            fn()
        _sync()
    return run


def _floor_ms(nbytes, bw):
    return nbytes / bw * 1e3


def _report(title, rows, floors, bw, baseline_of):
    """``rows`` from the harness; ``floors[name]`` bytes; ``baseline_of[name]`` the torch row."""
    print(f"\n{title}\n")
    print("| variant | median ms | min ms | / torch | floor ms | floor / median |")
    print("|---|---|---|---|---|---|")
    for name, r in rows.items():
        med = r["median_us"] / 1e3
        base = baseline_of.get(name)
        ratio = f"{r['median_us'] / rows[base]['median_us']:.2f}x" if base in rows else "-"
        fl = _floor_ms(floors[name], bw) if name in floors else None
        floor_cells = f"{fl:.3f} | {100 * fl / med:.0f}%" if fl else "- | -"
        print(f"| {name} | {med:.3f} | {r['min_us'] / 1e3:.3f} | {ratio} | {floor_cells} |")


# ---- sections ----


def mm_section(args, z, bw):
    m, per, k = z["m"], z["nnz_row"], z["k"]
    rng = np.random.default_rng(0)
    cols = np.sort(rng.integers(0, m, (m, per)), axis=1)
    keep = np.ones_like(cols, bool)
    keep[:, 1:] = cols[:, 1:] != cols[:, :-1]  # unique columns per row: a canonical matrix
    rows = np.repeat(np.arange(m), per).reshape(m, per)[keep]
    cols = cols[keep]
    vals = rng.standard_normal(cols.size).astype(np.float32)
    x0 = rng.standard_normal((m, k)).astype(np.float32)
    g0 = rng.standard_normal((m, k)).astype(np.float32)
    idx = np.stack([rows, cols])
    nnz = cols.size

    coo = st.sparse_coo_tensor(st.from_numpy(idx), st.from_numpy(vals), (m, m),
                               is_coalesced=True).cuda()
    csr = coo.to_sparse_csr()
    x, g = st.from_numpy(x0).cuda(), st.from_numpy(g0).cuda()
    variants, baseline, floors = {}, {}, {}
    # compulsory bytes: pattern + values read once, X read once, Y written once (fwd); backward
    # adds G read, dX written, the masked dA values written, and the pattern/X read again
    idx_bytes = {"csr": nnz * 8 + (m + 1) * 8, "coo": nnz * 16}
    fwd = lambda kind: idx_bytes[kind] + nnz * 4 + 2 * m * k * 4
    bwd = lambda kind: fwd(kind) + idx_bytes[kind] + 3 * m * k * 4 + 2 * nnz * 4

    for kind, a in (("csr", csr), ("coo", coo)):
        def f_st(a=a):
            with st.no_grad():
                st.sparse.mm(a, x)

        leaf = a.detach().requires_grad_()
        xl = x.detach().requires_grad_()

        def fb_st(leaf=leaf, xl=xl):
            st.sparse.mm(leaf, xl).backward(g)
            leaf.grad = None
            xl.grad = None

        variants[f"{kind} fwd sparsetorch"] = _timed(f_st)
        variants[f"{kind} fwd+bwd sparsetorch"] = _timed(fb_st)
        floors[f"{kind} fwd sparsetorch"] = fwd(kind)
        floors[f"{kind} fwd+bwd sparsetorch"] = bwd(kind)
        if TORCH_CUDA:
            ta = torch.sparse_coo_tensor(torch.from_numpy(idx), torch.from_numpy(vals), (m, m),
                                         is_coalesced=True).cuda()
            if kind == "csr":
                ta = ta.to_sparse_csr()
            tx, tg = torch.from_numpy(x0).cuda(), torch.from_numpy(g0).cuda()

            def f_t(ta=ta, tx=tx):
                with torch.no_grad():
                    torch.sparse.mm(ta, tx)

            tl = ta.detach().requires_grad_()
            txl = tx.detach().requires_grad_()

            def fb_t(tl=tl, txl=txl, tg=tg):
                torch.sparse.mm(tl, txl).backward(tg)
                tl.grad = None
                txl.grad = None

            variants[f"{kind} fwd torch"] = _timed(f_t)
            baseline[f"{kind} fwd sparsetorch"] = f"{kind} fwd torch"
            try:
                fb_t()
                variants[f"{kind} fwd+bwd torch"] = _timed(fb_t)
                baseline[f"{kind} fwd+bwd sparsetorch"] = f"{kind} fwd+bwd torch"
            except RuntimeError as e:  # torch may not differentiate this layout on CUDA
                print(f"note: torch {kind} fwd+bwd unavailable: {str(e)[:120]}")
    rows_ = _harness.compare(variants, 1, args.samples, args.warmup)
    _report(f"sparse.mm: {m:,} x {m:,}, {nnz:,} stored, @ {m:,} x {k} float32", rows_, floors, bw,
            baseline)


def _bag_variants(lib, fn, w0, ids0, offs0):
    """The EmbeddingBag rows for one library (``lib``: sparsetorch or torch, ``fn`` its
    functional): the whole iteration, forward + backward alone, the SparseAdam step alone."""
    w = lib.nn.Parameter(lib.from_numpy(w0).cuda())
    ids, offs = lib.from_numpy(ids0).cuda(), lib.from_numpy(offs0).cuda()
    opt = lib.optim.SparseAdam([w], lr=1e-3)

    def fwd_bwd():
        fn.embedding_bag(ids, w, offs, mode="sum", sparse=True).sum().backward()

    def iteration():
        fwd_bwd()
        opt.step()
        w.grad = None

    def fb():
        fwd_bwd()
        w.grad = None

    fwd_bwd()
    g = w.grad
    w.grad = None

    def step():
        w.grad = g
        opt.step()

    return {"fwd+bwd+SparseAdam": iteration, "fwd+bwd": fb, "SparseAdam step": step}


def bag_section(args, z, bw):
    num, dim, bags, per = z["num"], z["dim"], z["bags"], z["per_bag"]
    rng = np.random.default_rng(1)
    ids0 = rng.integers(0, num, bags * per)
    offs0 = np.arange(0, bags * per, per)
    w0 = rng.standard_normal((num, dim), dtype=np.float32)
    w0 *= 0.1
    uniq = np.unique(ids0).size
    variants, baseline = {}, {}

    libs = [("sparsetorch", st, F)] + ([("torch", torch, TF)] if TORCH_CUDA else [])
    for name, lib, fn in libs:
        for row, f in _bag_variants(lib, fn, w0, ids0, offs0).items():
            variants[f"{row} {name}"] = _timed(f)
            if name == "torch":
                baseline[f"{row} sparsetorch"] = f"{row} torch"
    # forward gathers every id's row once, writes the bags; backward writes one gradient row per
    # id; the step reads/writes param, exp_avg, exp_avg_sq for each distinct row
    n = bags * per
    floor = n * dim * 4 + bags * dim * 4 + n * dim * 4 + n * 8 + 6 * uniq * dim * 4
    fb_floor = n * dim * 4 + bags * dim * 4 + n * dim * 4 + n * 8
    step_floor = n * dim * 4 + n * 8 + 6 * uniq * dim * 4  # read the (uncoalesced) grad, update
    rows_ = _harness.compare(variants, 1, args.samples, args.warmup)
    _report(f"EmbeddingBag {num:,} x {dim}, {bags:,} bags x {per} ids ({uniq:,} distinct) "
            "+ SparseAdam", rows_, {"fwd+bwd+SparseAdam sparsetorch": floor,
                                    "fwd+bwd sparsetorch": fb_floor,
                                    "SparseAdam step sparsetorch": step_floor}, bw, baseline)


def coalesce_section(args, z, bw):
    n = z["coalesce"]
    side = max(int(np.sqrt(n * 4)), 2)  # about 1 in 8 entries is a duplicate
    rng = np.random.default_rng(2)
    idx0 = rng.integers(0, side, (2, n))
    vals0 = rng.standard_normal(n).astype(np.float32)
    variants, baseline = {}, {}
    idx, vals = st.from_numpy(idx0).cuda(), st.from_numpy(vals0).cuda()

    def c_st():
        st.sparse_coo_tensor(idx, vals, (side, side), check_invariants=False).coalesce()

    variants["coalesce sparsetorch"] = _timed(c_st)
    if TORCH_CUDA:
        tidx, tvals = torch.from_numpy(idx0).cuda(), torch.from_numpy(vals0).cuda()

        def c_t():
            torch.sparse_coo_tensor(tidx, tvals, (side, side), check_invariants=False).coalesce()

        variants["coalesce torch"] = _timed(c_t)
        baseline["coalesce sparsetorch"] = "coalesce torch"
    floor = n * 20 * 2  # indices + values read once, and (at most) as much written
    rows_ = _harness.compare(variants, 1, args.samples, args.warmup)
    _report(f"coalesce of {n:,} entries ({side:,} x {side:,})", rows_,
            {"coalesce sparsetorch": floor}, bw, baseline)


def add_section(args, z, bw):
    """sparse + sparse: two 2-D patterns of the same shape (about a quarter of the entries
    shared), COO (coalesced inputs) and CSR; the result as each library returns it."""
    m, per = z["m"], max(z["nnz_row"] // 2, 1)
    rng = np.random.default_rng(3)
    variants, baseline, floors = {}, {}, {}

    def pattern(seed_cols):
        cols = np.sort(seed_cols, axis=1)
        keep = np.ones_like(cols, bool)
        keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
        rows = np.repeat(np.arange(m), per).reshape(m, per)[keep]
        return np.stack([rows, cols[keep]])

    base = rng.integers(0, m, (m, per))
    other = np.where(rng.random((m, per)) < 0.25, base, rng.integers(0, m, (m, per)))
    pats = [pattern(base), pattern(other)]
    vals = [rng.standard_normal(p.shape[1]).astype(np.float32) for p in pats]
    nnz = sum(p.shape[1] for p in pats)
    sts = [st.sparse_coo_tensor(st.from_numpy(p), st.from_numpy(v), (m, m), is_coalesced=True)
           .cuda() for p, v in zip(pats, vals)]
    for kind in ("coo", "csr"):
        a, b = sts if kind == "coo" else [t.to_sparse_csr() for t in sts]
        variants[f"{kind} add sparsetorch"] = _timed(lambda a=a, b=b: a + b)
        per_entry = 20 if kind == "coo" else 12  # indices + value bytes per entry
        floors[f"{kind} add sparsetorch"] = 2 * nnz * per_entry  # read both, write (at most) both
        if TORCH_CUDA:
            ts = [torch.sparse_coo_tensor(torch.from_numpy(p), torch.from_numpy(v), (m, m),
                                          is_coalesced=True).cuda() for p, v in zip(pats, vals)]
            ta, tb = ts if kind == "coo" else [t.to_sparse_csr() for t in ts]
            if kind == "coo":  # torch concatenates COO operands: coalesce to compare like with like
                variants[f"{kind} add torch"] = _timed(lambda ta=ta, tb=tb: (ta + tb).coalesce())
            else:
                variants[f"{kind} add torch"] = _timed(lambda ta=ta, tb=tb: ta + tb)
            baseline[f"{kind} add sparsetorch"] = f"{kind} add torch"
    rows_ = _harness.compare(variants, 1, args.samples, args.warmup)
    _report(f"sparse + sparse: {m:,} x {m:,}, {nnz:,} stored in all (ours returns a coalesced sum; "
            "torch's COO sum is coalesced in its row)", rows_, floors, bw, baseline)


# ---- driver ----


def measured_copy_bandwidth(nbytes):
    """Device-to-device copy bandwidth (read + write) of a ``nbytes`` clone, bytes/s."""
    x = st.empty(nbytes // 4, device="cuda")
    r = _harness.compare({"copy": _timed(lambda: x.clone())}, 1, 5, 1)
    return 2 * nbytes / (r["copy"]["median_us"] * 1e-6)


def main(argv=None):
    p = _harness.parser(__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="tiny sizes (a smoke test of the code)")
    p.add_argument("--only", choices=("mm", "bag", "coalesce", "add"), help="run one section")
    p.add_argument("--bandwidth", type=float, help="memory bandwidth in TB/s for the floor")
    args = p.parse_args(argv)
    if not st.cuda.is_available():
        from sparsetorch._backend import cuda_unavailable_reason

        print(f"bench_gpu: no CUDA device ({cuda_unavailable_reason()}); nothing to time. Run it on "
              "a GPU machine, or `SPARSETORCH_FAKE_CUDA=1 python benchmarks/bench_gpu.py --tiny` "
              "to smoke-test the code paths on the CPU.")
        return 0
    if not (args.no_wait or args.tiny):
        _harness.wait_for_quiet()
    if args.quick or args.tiny:
        args.samples = min(args.samples, 3)
    if args.tiny:
        args.warmup = min(args.warmup, 1)
    z = TINY if args.tiny else FULL
    name = st.cuda.get_device_name()
    _harness.print_environment(("numpy", "scipy", "cupy", "sparsetorch", "torch"))
    print(f"device: {name}")
    bw = args.bandwidth * 1e12 if args.bandwidth else next(
        (v for key, v in NOMINAL_BW.items() if key in name), None)
    copy_bw = measured_copy_bandwidth(16 << 20 if args.tiny else 2 << 30)
    print(f"measured device copy bandwidth: {copy_bw / 1e12:.2f} TB/s")
    if bw is None:
        bw = copy_bw
        print("nominal bandwidth unknown for this card: the floors use the measured copy bandwidth")
    else:
        print(f"floors use {bw / 1e12:.2f} TB/s")
    if not TORCH_CUDA:
        print("torch CUDA not available: the torch rows are left out")
    sections = {"mm": mm_section, "bag": bag_section, "coalesce": coalesce_section,
                "add": add_section}
    for key, fn in sections.items():
        if args.only in (None, key):
            fn(args, z, bw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
