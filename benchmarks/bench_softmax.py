"""F.softmax / F.log_softmax / F.cross_entropy beside torch (issue 14 item 1).

    python benchmarks/bench_softmax.py --threads 1 --cpu-time   # the reported setting
    python benchmarks/bench_softmax.py --quick                  # 3 samples: a smoke test

Rows (float32, along dim -1): softmax and log_softmax forward, and forward + backward (a given
gradient), through ``F.softmax`` and through ``torch.softmax`` (the op, as ``Tensor.softmax``), on (256, 64, 64) (attention-like short rows), (4096, 1000) (a classifier's logits)
and (128, 10), and (64, 1000, 64) along dim 1 (the slab kernels); cross_entropy on (4096, 1000) forward + backward. Variants: torch, sparsetorch
(the numba row kernels of nn/_kernels/softmax.py), sparsetorch with numba off (the NumPy path).

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
except ImportError:  # the sparsetorch rows still run
    torch = TF = None

SHAPES = (((256, 64, 64), -1), ((4096, 1000), -1), ((128, 10), -1), ((64, 1000, 64), 1))


def _no_numba(fn):
    def run():
        _jit.use_numba(False)
        try:
            fn()
        finally:
            _jit.use_numba(True)
    return run


def _inner(shape):
    n = int(np.prod(shape))
    return max(3, min(2000, 4_000_000 // n))


def rows():
    """``{title: (torch_fn, sparsetorch_fn, inner)}``."""
    out = {}
    rng = np.random.default_rng(0)
    for shape, dim in SHAPES:
        x = rng.standard_normal(shape).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        for name in ("softmax", "log_softmax"):
            def fwd(m, Fm, a, name=name, dim=dim):
                f = getattr(Fm, name)
                return lambda: f(a, dim)

            def fb(m, Fm, a, gg, name=name, dim=dim):
                f = getattr(Fm, name)

                def run():
                    a.grad = None
                    f(a, dim).backward(gg)
                return run

            t = (torch.tensor(x), torch.tensor(x, requires_grad=True), torch.tensor(g)) \
                if torch is not None else None
            s = (st.tensor(x), st.tensor(x, requires_grad=True), st.tensor(g))
            where = "" if dim == -1 else f" dim {dim}"
            for api, tm, sm in (("F", TF, F), ("torch", torch, st)):  # F.softmax, torch.softmax
                out[f"{api}.{name} {shape}{where} forward"] = (
                    fwd(torch, tm, t[0]) if t else None, fwd(st, sm, s[0]), _inner(shape))
                out[f"{api}.{name} {shape}{where} forward + backward"] = (
                    fb(torch, tm, t[1], t[2]) if t else None, fb(st, sm, s[1], s[2]),
                    _inner(shape))
    x = rng.standard_normal((4096, 1000)).astype(np.float32)
    y = rng.integers(0, 1000, 4096)

    def ce(m, Fm):
        a = m.tensor(x, requires_grad=True)
        yy = m.tensor(y)

        def run():
            a.grad = None
            Fm.cross_entropy(a, yy).backward()
        return run

    out["F.cross_entropy (4096, 1000) forward + backward"] = (
        ce(torch, TF) if torch is not None else None, ce(st, F), _inner((4096, 1000)))
    return out


def main():
    p = _harness.parser(__doc__)
    p.add_argument("--threads", type=int, default=0,
                   help="threads for torch and numba alike (default: their own defaults)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time by process CPU time (with --threads 1: robust on a busy machine)")
    p.add_argument("--only", default="", help="run only the rows whose title contains this text")
    p.add_argument("--no-numpy", action="store_true", help="leave out the numba-off variant")
    args = p.parse_args()
    clock = time.process_time_ns if args.cpu_time else None
    if args.quick:
        args.samples = 3
    if args.threads:
        st.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    _harness.print_environment()
    if not args.no_wait:
        _harness.wait_for_quiet()
    for title, (t_fn, s_fn, inner) in rows().items():
        if args.only and args.only not in title:
            continue
        v = {}
        if t_fn is not None:
            v["torch"] = _harness.loop(t_fn)
        v["sparsetorch"] = _harness.loop(s_fn)
        if not args.no_numpy:
            v["sparsetorch (no numba)"] = _harness.loop(_no_numba(s_fn))
        res = _harness.compare(v, inner, args.samples, args.warmup, clock)
        _harness.print_table(res, "torch" if t_fn is not None else None, title, "us")


if __name__ == "__main__":
    main()
