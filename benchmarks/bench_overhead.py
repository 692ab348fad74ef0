"""Per-op overhead on tiny tensors: sparsetorch against raw NumPy and torch (when installed).

    python benchmarks/bench_overhead.py            # 9 samples after 2 warm-ups
    python benchmarks/bench_overhead.py --quick    # 3 samples, a smoke test

(a) ``c = a + b`` on 8-element float32 tensors, 20k ops per sample.
(b) a tiny autograd step ``y = (w*x + b).sum(); y.backward()`` on 8-element float32 tensors,
    w and b requiring grad, 5k steps per sample. The NumPy row is the forward plus hand-written
    gradients, accumulated as autograd accumulates them: the floor for any Python autograd.

Targets (PERF-NOTES.md, spike 1): both sparsetorch rows at <= 1x torch.
"""

from __future__ import annotations

import sys

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st

try:
    import torch
except ImportError:  # the torch columns are skipped
    torch = None

ADD_ITERS = 20_000
STEP_ITERS = 5_000
N = 8


def _data():
    rng = np.random.default_rng(0)
    return [rng.random(N, dtype=np.float32) for _ in range(3)]


# ---- (a) c = a + b ---------------------------------------------------------------------------


def add_variants() -> dict:
    a0, b0, _ = _data()
    expected = a0 + b0

    an, bn = a0.copy(), b0.copy()

    def add_numpy(n):
        a, b = an, bn
        for _ in range(n):
            c = a + b  # noqa: F841

    as_, bs = st.from_numpy(a0.copy()), st.from_numpy(b0.copy())
    _check("add: sparsetorch", (as_ + bs).numpy(), expected)

    def add_sparsetorch(n):
        a, b = as_, bs
        for _ in range(n):
            c = a + b  # noqa: F841

    variants = {"numpy": add_numpy, "sparsetorch": add_sparsetorch}
    if torch is not None:
        at, bt = torch.from_numpy(a0.copy()), torch.from_numpy(b0.copy())
        _check("add: torch", (at + bt).numpy(), expected)

        def add_torch(n):
            a, b = at, bt
            for _ in range(n):
                c = a + b  # noqa: F841

        variants["torch"] = add_torch
    return variants


# ---- (b) y = (w*x + b).sum(); y.backward() ---------------------------------------------------


def step_variants() -> dict:
    w0, x0, b0 = _data()
    # One step from zero grads: dy/dw = x, dy/db = 1.
    want_w, want_b = x0, np.ones(N, np.float32)

    wn, xn, bn = w0.copy(), x0.copy(), b0.copy()

    def step_numpy(n):
        w, x, b = wn, xn, bn
        gw, gb = np.zeros(N, np.float32), np.zeros(N, np.float32)
        for _ in range(n):
            y = (w * x + b).sum()  # noqa: F841
            gu = np.full(N, 1.0, np.float32)  # SumBackward: the scalar 1 spread to u's shape
            gw += gu * x  # MulBackward for w, accumulated into w.grad
            gb += gu  # AddBackward for b, accumulated into b.grad
        return gw, gb

    gw, gb = step_numpy(1)
    _check("step: numpy dw", gw, want_w)
    _check("step: numpy db", gb, want_b)

    def make(lib):
        w = lib.tensor(w0, requires_grad=True)
        x = lib.tensor(x0)
        b = lib.tensor(b0, requires_grad=True)
        y = (w * x + b).sum()
        y.backward()
        name = lib.__name__
        _check(f"step: {name} y", np.array(y.item(), np.float32), (w0 * x0 + b0).sum())
        _check(f"step: {name} dw", w.grad.numpy(), want_w)
        _check(f"step: {name} db", b.grad.numpy(), want_b)

        def step(n):
            for _ in range(n):
                y = (w * x + b).sum()
                y.backward()

        return step

    variants = {"numpy": step_numpy, "sparsetorch": make(st)}
    if torch is not None:
        variants["torch"] = make(torch)
    return variants


def _check(what, got, want):
    if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def main(argv=None) -> int:
    args = _harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    samples = 3 if args.quick else args.samples
    _harness.print_environment()
    if torch is None:
        print("torch not installed: torch columns skipped")
    if not args.no_wait:
        _harness.wait_for_quiet()
    baseline = ["torch", "numpy"]

    rows = _harness.compare(add_variants(), ADD_ITERS, samples, args.warmup)
    _harness.print_table(
        rows, baseline, title=f"(a) c = a + b, {N} float32, {ADD_ITERS} ops per sample"
    )

    rows = _harness.compare(step_variants(), STEP_ITERS, samples, args.warmup)
    _harness.print_table(
        rows,
        baseline,
        title=f"(b) y = (w*x + b).sum(); y.backward(), {N} float32, {STEP_ITERS} steps per sample",
        unit="us/step",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
