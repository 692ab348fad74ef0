"""Warm start (issue 14, item 5): a fresh process's first training iterations against its steady
state, sparsetorch and torch, each workload in its own new process.

    python benchmarks/bench_warm_start.py                  # every workload, 3 fresh processes each
    python benchmarks/bench_warm_start.py --only dlrm128 --runs 5
    python benchmarks/bench_warm_start.py --cold           # numba's cache emptied first (a new
                                                           # NUMBA_CACHE_DIR): compiles included

The workloads are ``bench_steps.py``'s (DLRM-style step at batch 128 and 2048, GCN epoch, GAE
step), built after the imports; one thread for both libraries. Each process reports its import,
the model and optimizer construction, the first and second iterations and the median of
iterations 10-29 (the steady state). Goal: the first iteration at most 3x the steady state (with
numba's cache warm: after one earlier run, or ``python -m sparsetorch.warmup``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

WORKLOADS = ("dlrm128", "dlrm2048", "gcn", "gae")

_CHILD = r"""
import json, statistics, sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {bench!r})
t = time.perf_counter()
if {lib!r} == "sparsetorch":
    import sparsetorch as lib
else:
    import torch as lib
import bench_steps as bs
t_import = time.perf_counter() - t
lib.set_num_threads(1)
t = time.perf_counter()
which = {which!r}
if which.startswith("dlrm"):
    m = bs.DLRM(lib, bs.dlrm_batches(int(which[4:]), 8))
else:
    m = (bs.GCN if which == "gcn" else bs.GAE)(lib, bs.graph())
t_build = time.perf_counter() - t
times = []
for _ in range(30):
    t = time.perf_counter()
    m.step()
    times.append(time.perf_counter() - t)
print(json.dumps({{"import": t_import, "build": t_build, "first": times[0], "second": times[1],
                  "steady": statistics.median(times[10:])}}))
"""


def run_one(lib, which, env):
    bench = os.path.dirname(os.path.abspath(__file__))
    code = _CHILD.format(bench=bench, lib=lib, which=which)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{lib} {which} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(WORKLOADS), help="workloads, comma-separated: "
                   + ", ".join(WORKLOADS))
    p.add_argument("--runs", type=int, default=3, help="fresh processes per workload and library")
    p.add_argument("--cold", action="store_true",
                   help="each sparsetorch process starts from an empty numba cache")
    p.add_argument("--no-torch", action="store_true", help="sparsetorch rows only")
    args = p.parse_args(argv)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        import torch  # noqa: F401
        libs = ["torch", "sparsetorch"] if not args.no_torch else ["sparsetorch"]
    except ImportError:
        libs = ["sparsetorch"]
    print("| workload | library | import ms | build ms | first ms | second ms | steady ms "
          "| first / steady |")
    print("|---|---|---|---|---|---|---|---|")
    for which in args.only.split(","):
        if which not in WORKLOADS:
            p.error(f"unknown workload {which!r}")
        for lib in libs:
            rows = []
            for _ in range(args.runs):
                e = env
                tmp = None
                if args.cold and lib == "sparsetorch":
                    tmp = tempfile.TemporaryDirectory()
                    e = dict(env, NUMBA_CACHE_DIR=tmp.name)
                try:
                    rows.append(run_one(lib, which, e))
                finally:
                    if tmp is not None:
                        tmp.cleanup()
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            ratios = sorted(r["first"] / r["steady"] for r in rows)
            print(f"| {which} | {lib} | {med['import'] * 1e3:.0f} | {med['build'] * 1e3:.0f} | "
                  f"{med['first'] * 1e3:.2f} | {med['second'] * 1e3:.2f} | "
                  f"{med['steady'] * 1e3:.3f} | {statistics.median(ratios):.1f}x "
                  f"({ratios[0]:.1f}-{ratios[-1]:.1f}) |", flush=True)
    print(f"\n(medians over {args.runs} fresh processes; first / steady: median (min-max) of the "
          "per-process ratios)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
