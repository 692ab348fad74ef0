"""Fused nn ops (issue 14 item 1) beside torch: large element-wise kernels and small fused steps.

    python benchmarks/bench_nn_ops.py                 # 9 samples, 7.3M elements
    python benchmarks/bench_nn_ops.py --threads 1     # torch and numba single-threaded
    python benchmarks/bench_nn_ops.py --quick         # 3 samples, 1M elements: a smoke test
    python benchmarks/bench_nn_ops.py --threads 1 --cpu-time --only gelu   # CPU time, gelu rows

Sections:
- large element-wise ops on 7.3M float32 (a GAE step's 2.7k x 2.7k logits): ``torch.sigmoid``,
  ``F.logsigmoid``, ``F.softplus``, ``F.silu``, ``F.gelu`` (erf and tanh; forward and forward +
  backward), ``F.elu``, ``F.leaky_relu``,
  ``F.binary_cross_entropy_with_logits(pos_weight=)`` forward and forward + backward. Rows: torch, sparsetorch, sparsetorch with numba off (the NumPy
  formulas), and the pre-fusion composite (the ufunc chain the ops used before);
- a small MLP head at batch 128 (linear -> relu -> linear -> BCE-with-logits, forward + backward):
  the per-call cost of the fused nodes.

Goal (issue 14): every row at most 1.0x torch.
"""

from __future__ import annotations

import time

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st
import sparsetorch.nn.functional as F
from sparsetorch import _jit

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the torch rows are skipped
    torch = None


def _no_numba(fn):
    def run():
        old = _jit.use_numba(False)
        try:
            fn()
        finally:
            _jit.use_numba(old)
    return run


def _composite_logsigmoid(x):
    return -np.logaddexp(0, -x)


def large_section(args, n):
    rng = np.random.default_rng(0)
    x0 = (rng.standard_normal(n) * 4).astype(np.float32)
    y0 = (rng.random(n) < 0.1).astype(np.float32)
    pw0 = np.float32([9.0])
    x, y, pw = st.tensor(x0), st.tensor(y0), st.tensor(pw0)
    xg = st.tensor(x0, requires_grad=True)
    if torch is not None:
        tx, ty, tpw = torch.from_numpy(x0), torch.from_numpy(y0), torch.from_numpy(pw0)
        txg = torch.from_numpy(x0.copy()).requires_grad_(True)
    print(f"\n{n} float32 elements")

    def bcel_comp():  # the composite of the ops before fusion (NumPy temporaries)
        ls = _composite_logsigmoid(x0)
        ((1 - y0) * x0 - ((pw0 - 1) * y0 + 1) * ls).mean()

    rows = {
        "torch.sigmoid": (lambda: torch.sigmoid(tx), lambda: st.sigmoid(x), None),
        "F.logsigmoid": (lambda: TF.logsigmoid(tx), lambda: F.logsigmoid(x),
                         lambda: _composite_logsigmoid(x0)),
        "F.softplus": (lambda: TF.softplus(tx), lambda: F.softplus(x),
                       lambda: np.where(x0 > 20, x0, np.logaddexp(0, x0))),
        "F.silu": (lambda: TF.silu(tx), lambda: F.silu(x), lambda: x0 / (1 + np.exp(-x0))),
        "F.gelu": (lambda: TF.gelu(tx), lambda: F.gelu(x), None),
        "F.gelu(approximate='tanh')": (lambda: TF.gelu(tx, approximate="tanh"),
                                       lambda: F.gelu(x, approximate="tanh"), None),
        "F.elu": (lambda: TF.elu(tx), lambda: F.elu(x), None),
        "F.leaky_relu": (lambda: TF.leaky_relu(tx), lambda: F.leaky_relu(x),
                         lambda: np.where(x0 > 0, x0, x0 * 0.01)),
        "BCE-with-logits(pos_weight) forward": (
            lambda: TF.binary_cross_entropy_with_logits(tx, ty, pos_weight=tpw),
            lambda: F.binary_cross_entropy_with_logits(x, y, pos_weight=pw), bcel_comp),
    }

    def st_fb():
        xg.grad = None
        F.binary_cross_entropy_with_logits(xg, y, pos_weight=pw).backward()

    def t_fb():
        txg.grad = None
        TF.binary_cross_entropy_with_logits(txg, ty, pos_weight=tpw).backward()

    rows["BCE-with-logits(pos_weight) forward + backward"] = (t_fb, st_fb, None)
    g0 = np.ones(n, np.float32)
    gs = st.tensor(g0)
    tg = torch.from_numpy(g0) if torch is not None else None

    def gelu_fb(lib, Fm, xx, gg, **kw):
        def run():
            xx.grad = None
            Fm.gelu(xx, **kw).backward(gg)
        return run

    for kw in ({}, {"approximate": "tanh"}):
        name = "F.gelu" + ("(approximate='tanh')" if kw else "") + " forward + backward"
        rows[name] = (gelu_fb(torch, TF, txg, tg, **kw) if torch is not None else None,
                      gelu_fb(st, F, xg, gs, **kw), None)
    for title, (t_fn, s_fn, comp) in rows.items():
        if args.only and args.only not in title:
            continue
        v = {}
        if torch is not None:
            v["torch"] = _harness.loop(t_fn)
        v["sparsetorch"] = _harness.loop(s_fn)
        v["sparsetorch (no numba)"] = _harness.loop(_no_numba(s_fn))
        if comp is not None:
            v["composite before fusion (NumPy)"] = _harness.loop(comp)
        res = _harness.compare(v, args.inner, args.samples, args.warmup, args.clock)
        _harness.print_table(res, "torch" if torch is not None else None, title, "us")


def mlp_section(args, batch=128, d_in=64, hidden=64):
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((batch, d_in)).astype(np.float32)
    y0 = (rng.random((batch, 1)) < 0.5).astype(np.float32)
    w1 = (rng.standard_normal((hidden, d_in)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((1, hidden)) * 0.1).astype(np.float32)
    b1, b2 = np.zeros(hidden, np.float32), np.zeros(1, np.float32)

    def make(m):
        p = [m.tensor(a.copy(), requires_grad=True) for a in (w1, b1, w2, b2)]
        return p, m.tensor(x0), m.tensor(y0)

    def step(m, Fm, p, x, y):
        def run():
            for t in p:
                t.grad = None
            h = Fm.relu(Fm.linear(x, p[0], p[1]))
            Fm.binary_cross_entropy_with_logits(Fm.linear(h, p[2], p[3]), y).backward()
        return run

    v = {}
    if torch is not None:
        v["torch"] = _harness.loop(step(torch, TF, *make(torch)))
    v["sparsetorch"] = _harness.loop(step(st, F, *make(st)))
    res = _harness.compare(v, 20, args.samples, args.warmup)
    _harness.print_table(res, "torch" if torch is not None else None,
                         f"MLP head {d_in}-{hidden}-1 + BCE-with-logits, batch {batch}, "
                         "forward + backward", "us")


def main():
    p = _harness.parser(__doc__)
    p.add_argument("--threads", type=int, default=0,
                   help="threads for torch and numba alike (default: their own defaults)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time by process CPU time (with --threads 1: robust on a busy machine)")
    p.add_argument("--inner", type=int, default=3,
                   help="calls per timed sample of a large row (default 3): the first call of a "
                        "sample also pays for the previous variant's output lines still dirty in "
                        "the cache (written back while it runs; torch's allocator hands out a "
                        "fresh block each call), the others only for its own")
    p.add_argument("--only", default="",
                   help="run only the large rows whose title contains this text (e.g. gelu); "
                        "MLP: only the MLP head")
    args = p.parse_args()
    args.clock = time.process_time_ns if args.cpu_time else None
    if args.quick:
        args.samples = 3
    if args.threads:
        st.set_num_threads(args.threads)  # numba's pool (as sparsetorch starts it), the BLAS
        if torch is not None:
            torch.set_num_threads(args.threads)
    _harness.print_environment()
    if not args.no_wait:
        _harness.wait_for_quiet()
    if args.only != "MLP":
        large_section(args, 1_000_000 if args.quick else 7_300_000)
    if not args.only or args.only == "MLP":
        mlp_section(args)


if __name__ == "__main__":
    main()
