"""Peak memory (and time) of sparse @ sparse (COO @ COO) with a large result, beside torch's.

Each library runs in its own child process (so one library's peak never hides another's); a child
builds the operands from one NumPy seed, resets the kernel's peak-RSS mark (``/proc/self/
clear_refs``), and reports ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` after one
``torch.sparse.mm(a, b)`` minus the RSS before it: the op's own peak (output and temporaries),
next to the result's own size (COO: int64 indices + float32 values; SciPy keeps int32 CSR).

    python benchmarks/bench_spgemm_memory.py                  # n=1e6 rows, d=6 per row: ~36M nnz
    python benchmarks/bench_spgemm_memory.py --n 200000       # smaller: ~7M nnz

Goal (issue 17): peak growth within ~1.5x the output's own size, at most torch's.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time


def _operands(np, n, d, seed):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n, dtype=np.int64), d)
    cols = rng.integers(0, n, size=n * d, dtype=np.int64)
    vals = rng.random(n * d, dtype=np.float32) + 0.5
    return np.stack([rows, cols]), vals


def _rss():
    """Current resident set size in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak():
    """Reset the kernel's peak-RSS mark to the current RSS (Linux >= 4.0), so that ru_maxrss
    afterwards is the peak of what runs next."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _child(lib, n, d):
    import numpy as np

    ia, va = _operands(np, n, d, 1)
    ib, vb = _operands(np, n, d, 2)
    if lib == "scipy":
        import scipy.sparse as sp

        a = sp.coo_matrix((va, (ia[0], ia[1])), shape=(n, n)).tocsr()
        b = sp.coo_matrix((vb, (ib[0], ib[1])), shape=(n, n)).tocsr()
        del ia, va, ib, vb

        def mm():
            return a @ b

        def nnz(r):
            return r.nnz
    else:
        mod = __import__(lib)
        a = mod.sparse_coo_tensor(mod.from_numpy(ia), mod.from_numpy(va), (n, n)).coalesce()
        b = mod.sparse_coo_tensor(mod.from_numpy(ib), mod.from_numpy(vb), (n, n)).coalesce()
        del ia, va, ib, vb
        if lib == "sparsetorch":  # compile/warm the kernels on a tiny product (not measured)
            mod.sparse.mm(mod.eye(3).to_sparse(), mod.eye(3).to_sparse())

        def mm():
            return mod.sparse.mm(a, b)

        def nnz(r):
            return r._nnz()
    import gc

    gc.collect()
    _reset_peak()  # the peak of building the operands is not the op's
    before = _rss()
    t0 = time.perf_counter()
    r = mm()
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    k = int(nnz(r))
    out_bytes = k * (2 * 8 + 4)  # COO: two int64 indices and a float32 value per entry
    print(json.dumps({"lib": lib, "nnz": k, "seconds": dt, "before": before, "peak": peak,
                      "grow": peak - before, "out_bytes": out_bytes}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000, help="rows = cols of both operands")
    p.add_argument("--d", type=int, default=6, help="stored entries per row of each operand")
    p.add_argument("--libs", default="sparsetorch,torch,scipy")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return _child(args.child, args.n, args.d)
    print(f"COO @ COO, {args.n} x {args.n}, {args.d} entries per row (one run each, child processes)")
    print(f"{'library':<12} {'nnz(out)':>10} {'time s':>8} {'peak RSS MB':>12} {'op peak MB':>11} "
          f"{'out MB':>8} {'op/out':>7}")
    for lib in args.libs.split(","):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", lib, "--n", str(args.n),
               "--d", str(args.d)]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            print(f"{lib:<12} timed out")
            continue
        if res.returncode != 0:
            print(f"{lib:<12} failed: {res.stderr.strip().splitlines()[-1:]} ")
            continue
        r = json.loads(res.stdout.strip().splitlines()[-1])
        mb = 1 << 20
        print(f"{lib:<12} {r['nnz']:>10} {r['seconds']:>8.2f} {r['peak'] / mb:>12.0f} "
              f"{r['grow'] / mb:>11.0f} {r['out_bytes'] / mb:>8.0f} {r['grow'] / r['out_bytes']:>7.2f}")


if __name__ == "__main__":
    main()
