"""Parallel kernels under load (issue 14 item 4): sparsetorch vs torch, 1 and 2 threads, with and
without one CPU hog process per core beside them.

    python benchmarks/bench_load.py [--seconds 1.0]

Rows: a GCN-style CSR spmm (2708 x 2708, ~13k stored entries, x 16 columns, Cora's shape), an
EmbeddingBag(sparse=True) + SparseAdam training step (100k x 64 table, 2048 bags of 20 ids), and
the large element-wise passes of an embedding loss: ``(x * G).sum().backward()`` on 65,536 x 64
float32 (a product, a sum, the product's gradient; ``dense/_par_pointwise.py``).
The goal: with the hogs running, a library's 2-thread time is at most 1.2x its own 1-thread time
(a parallel region whose worker is descheduled waits for a whole time slice). Times are medians
of calls within ``--seconds`` per row and library; the 1- and 2-thread calls alternate, so that
the other work on a shared machine, which comes and goes, weighs on both columns alike (timed one
column after the other, a busy spell in one window read as a 1.37x "2/1" of a step whose kernels
all ran on one thread under the hogs). The hogs are killed at exit.
"""

import argparse
import atexit
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import sparsetorch as st

try:
    import torch
except ImportError:  # torch is optional: sparsetorch's rows only
    torch = None

N, NNZ, K = 2708, 13264, 16
V, D, B, L = 100_000, 64, 2048, 20
EW = (65_536, 64)
ROWS = ("spmm", "emb step", "mul-sum")
_HOGS = []


def start_hogs():
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    for _ in range(n):
        _HOGS.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
    time.sleep(1.0)  # let the scheduler see them


def stop_hogs():
    while _HOGS:
        p = _HOGS.pop()
        p.kill()
        p.wait()


atexit.register(stop_hogs)


def median_ms(fn, seconds, set_threads, counts=(1, 2)):
    """Median ms of ``fn`` per thread count of ``counts``: calls at each count alternate (two
    warm-up calls each first) for ``seconds`` in all, at least 5 calls per count."""
    times = {n: [] for n in counts}
    for n in counts:
        set_threads(n)
        fn()
        fn()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(times[counts[-1]]) < 5:
        for n in counts:
            set_threads(n)
            t0 = time.perf_counter()
            fn()
            times[n].append(time.perf_counter() - t0)
    return {n: 1e3 * statistics.median(t) for n, t in times.items()}


def graph():
    rng = np.random.default_rng(0)
    r = rng.integers(0, N, NNZ)
    c = rng.integers(0, N, NNZ)
    keys = np.unique(r * N + c)
    return keys // N, keys % N, rng.random(keys.size, dtype=np.float32)


def workloads():
    r, c, v = graph()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, K), dtype=np.float32)
    ids = rng.integers(0, V, B * L)
    offs = np.arange(0, B * L, L)
    e0, g0 = rng.standard_normal(EW, dtype=np.float32), rng.standard_normal(EW, dtype=np.float32)
    out = {}

    a = st.sparse_coo_tensor(st.tensor(np.stack([r, c])), st.tensor(v), (N, N)).to_sparse_csr()
    xs = st.tensor(x)
    bag = st.nn.EmbeddingBag(V, D, mode="sum", sparse=True)
    opt = st.optim.SparseAdam(bag.parameters())
    si, so = st.tensor(ids), st.tensor(offs)

    def st_step():
        opt.zero_grad()
        bag(si, so).sum().backward()
        opt.step()

    se, sg = st.tensor(e0, requires_grad=True), st.tensor(g0)

    def st_ew():
        se.grad = None
        (se * sg).sum().backward()

    out["sparsetorch"] = {"spmm": lambda: a @ xs, "emb step": st_step, "mul-sum": st_ew,
                          "threads": st.set_num_threads}
    if torch is not None:
        ta = torch.sparse_coo_tensor(torch.tensor(np.stack([r, c])), torch.tensor(v),
                                     (N, N)).to_sparse_csr()
        tx = torch.tensor(x)
        tbag = torch.nn.EmbeddingBag(V, D, mode="sum", sparse=True)
        topt = torch.optim.SparseAdam(tbag.parameters())
        ti, to = torch.tensor(ids), torch.tensor(offs)

        def t_step():
            topt.zero_grad()
            tbag(ti, to).sum().backward()
            topt.step()

        te, tg = torch.tensor(e0, requires_grad=True), torch.tensor(g0)

        def t_ew():
            te.grad = None
            (te * tg).sum().backward()

        out["torch"] = {"spmm": lambda: ta @ tx, "emb step": t_step, "mul-sum": t_ew,
                        "threads": torch.set_num_threads}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0, help="timing budget per cell")
    ap.add_argument("--only", default=",".join(ROWS), help=f"rows, comma-separated: {', '.join(ROWS)}")
    a = ap.parse_args()
    a.only = [r for r in ROWS if r in a.only.split(",")]
    libs = workloads()
    res = {}
    for load in ("idle", "hog"):
        if load == "hog":
            start_hogs()
        for lib, w in libs.items():
            for row in a.only:
                for th, ms in median_ms(w[row], 2 * a.seconds, w["threads"]).items():
                    res[load, lib, th, row] = ms
        stop_hogs()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"# {cores} cores; load average before: {os.getloadavg()[0]:.1f}; ms per call (median)")
    print(f"{'row':<9} {'load':<5} {'library':<12} {'1 thr':>8} {'2 thr':>8} {'2/1':>6} "
          f"{'vs torch (2 thr)':>17}")
    for row in a.only:
        for load in ("idle", "hog"):
            for lib in libs:
                t1, t2 = res[load, lib, 1, row], res[load, lib, 2, row]
                vs = ""
                if lib == "sparsetorch" and "torch" in libs:
                    vs = f"{t2 / res[load, 'torch', 2, row]:.2f}x"
                print(f"{row:<9} {load:<5} {lib:<12} {t1:8.3f} {t2:8.3f} {t2 / t1:6.2f} {vs:>17}")


if __name__ == "__main__":
    main()
