"""2-thread timings kept only while a core is free: the parallel element-wise passes, and the
Embedding(sparse=True) + SGD iteration, on a shared machine.

    python benchmarks/bench_free_core.py                      # both sections, 120 s each at most
    python benchmarks/bench_free_core.py --only passes --seconds 60
    python benchmarks/bench_free_core.py --only emb-iter --all   # every sample, busy or not

On a machine that other work keeps busy, sparsetorch's load-aware thread policy (``_jit.limit``)
runs these passes on one thread, and a 2-thread timing says how busy the machine was. Here each
round of samples starts only when ``_jit``'s load sampler sees a free core (checked every 50 ms),
so the figures are what a quiet machine gives; rounds alternate the variants.

- ``passes``: 65,536 x 64-sized float32 arrays at 512k .. 4M elements: ``a * b``, a stride-0
  operand times an array (a sum's gradient), ``a.sum()``; NumPy (one thread) against
  ``dense/_par_pointwise.py`` on two threads.
- ``emb-iter``: ``bench_embedding.py``'s Embedding(sparse=True) + SGD iteration (65,536 zipf ids
  into a 1M x 64 table, loss ``(out * G).sum()``): torch, sparsetorch, and sparsetorch with the
  parallel passes switched off (NumPy's one-thread passes).
"""

from __future__ import annotations

import argparse
import sys
import time

import bench_embedding as be  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st
from sparsetorch import _jit
from sparsetorch.dense import _par_pointwise as P

try:
    import torch
except ImportError:  # the torch column is skipped
    torch = None


def _rounds(variants, seconds, quiet):
    """Per variant, the seconds of each call; a round calls every variant once, and starts only
    when a core is free (``quiet``). Stops after ``seconds``."""
    times = {k: [] for k in variants}
    for fn in variants.values():
        fn()
        fn()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if quiet:
            free = _jit._sample_free()
            if free < 2:
                time.sleep(0.05)
                continue
            _jit._FREE[:] = [time.monotonic() + _jit.LOAD_TTL, free]  # the policy's sample too
        for k, fn in variants.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return times


def _report(title, times, base):
    n = len(times[base])
    print(f"\n{title} ({n} rounds)")
    if not n:
        print("no round: no free core in the time given")
        return
    ref = np.median(times[base])
    print("| variant | median ms | min ms | / " + base + " |\n|---|---|---|---|")
    for k, t in times.items():
        print(f"| {k} | {np.median(t) * 1e3:.3f} | {min(t) * 1e3:.3f} | {np.median(t) / ref:.2f}x |")


def _numpy_passes(fn):
    """``fn`` with the parallel passes refused (the ops run NumPy's one-thread ufuncs)."""
    def run():
        b, t = P.binary, P.total
        P.binary = P.total = lambda *a: None
        try:
            fn()
        finally:
            P.binary, P.total = b, t
    return run


def passes(args):
    rng = np.random.default_rng(0)
    for n in (1 << 19, 1 << 20, 1 << 21, 1 << 22):
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        g = np.broadcast_to(np.float32(1), a.shape)
        # (the parallel variants fall back to NumPy where the policy picks one thread, as the ops do)
        v = {"NumPy a * b": lambda a=a, b=b: a * b,
             "parallel a * b": lambda a=a, b=b: P.binary("multiply", a, b) is None and a * b,
             "NumPy g * b": lambda g=g, b=b: g * b,
             "parallel g * b": lambda g=g, b=b: P.binary("multiply", g, b) is None and g * b,
             "NumPy a.sum()": lambda a=a: a.sum(),
             "parallel a.sum()": lambda a=a: P.total(a) is None and a.sum()}
        _report(f"{n} float32 elements, g stride 0", _rounds(v, args.seconds / 4, args.quiet),
                "NumPy a * b")


def emb_iter(args):
    num, dim, n = 1_000_000, 64, 65_536
    rng = np.random.default_rng(1)
    perm = rng.permutation(num)
    w0 = rng.standard_normal((num, dim)).astype(np.float32)
    ids0 = be.zipf_ids(rng, n, num, perm)
    g0 = rng.standard_normal((n, dim)).astype(np.float32)

    def build(lib):
        emb = lib.nn.Embedding(num, dim, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.from_numpy(w0))
        opt = lib.optim.SGD(emb.parameters(), lr=0.1)
        ids, G = lib.from_numpy(ids0), lib.from_numpy(g0)

        def it():
            opt.zero_grad()
            (emb(ids) * G).sum().backward()
            opt.step()
        return it

    v = {}
    if torch is not None:
        v["torch"] = build(torch)
    v["sparsetorch"] = build(st)
    v["sparsetorch, NumPy passes"] = _numpy_passes(build(st))
    _report(f"Embedding(sparse=True) + SGD iteration: {n} zipf ids, {num} x {dim} table",
            _rounds(v, args.seconds, args.quiet), "torch" if torch is not None else "sparsetorch")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2, help="threads for both libraries (default 2)")
    p.add_argument("--seconds", type=float, default=120.0, help="time budget per section")
    p.add_argument("--only", default="passes,emb-iter", help="sections: passes, emb-iter")
    p.add_argument("--all", dest="quiet", action="store_false",
                   help="keep every round (no free-core condition)")
    args = p.parse_args(argv)
    st.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        pass
    else:
        blas = threadpool_limits(args.threads, user_api="blas")  # noqa: F841 - held
    only = set(args.only.split(","))
    print(f"{len(__import__('os').sched_getaffinity(0))} cores, {args.threads} threads, "
          f"rounds {'only while a core is free' if args.quiet else 'all'}")
    if "passes" in only:
        passes(args)
    if "emb-iter" in only:
        emb_iter(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
