"""Shared timing helper for the benchmarks (method: /work/shared/PERF-NOTES.md).

Rules it enforces:
- all variants run in ONE process, interleaved A B C A B C ..., so drift hits them alike;
- ``warmup`` untimed rounds, then ``samples`` timed rounds (>= 9 for numbers you report);
- the garbage collector is off while a sample runs (it is run by hand between samples);
- results are microseconds per op, median and min; ratios are taken from medians of the same run.

A variant is a callable ``run(n)`` that performs the operation ``n`` times in its own loop, so the
measured time carries no extra Python call per op::

    def add_numpy(n):
        for _ in range(n):
            a + b

For operations that are long next to a function call, wrap a zero-argument callable with ``loop``.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping

__all__ = ["compare", "loop", "parser", "print_environment", "print_table", "wait_for_quiet"]


def loop(fn: Callable[[], object]) -> Callable[[int], None]:
    """Turn a zero-argument callable into a variant that calls it ``n`` times."""

    def run(n: int) -> None:
        for _ in range(n):
            fn()

    return run


def compare(
    variants: Mapping[str, Callable[[int], object]],
    inner_iters: int,
    samples: int = 9,
    warmup: int = 2,
    clock: Callable[[], int] | None = None,
) -> dict[str, dict[str, float]]:
    """Time ``variants`` interleaved in this process (in an order that rotates every round).

    Returns ``{name: {"median_us", "min_us", "max_us", "samples"}}`` with times in microseconds
    per op (one sample is ``inner_iters`` ops, divided back out). ``clock``: nanoseconds,
    ``time.perf_counter_ns`` (wall time) unless given (``time.process_time_ns``: this process's
    CPU time, steadier on a busy machine, meaningful for single-threaded runs).
    """
    if samples < 1 or inner_iters < 1 or warmup < 0:
        raise ValueError("compare: samples and inner_iters must be >= 1 and warmup >= 0")
    times: dict[str, list[float]] = {name: [] for name in variants}
    clock = clock or time.perf_counter_ns
    was_enabled = gc.isenabled()
    try:
        items = list(variants.items())
        for rnd in range(warmup + samples):
            # the order rotates every round: no variant always runs right after another (torch's
            # OpenMP workers spin for milliseconds after its parallel regions, on the cores the
            # next variant's threads then share)
            k = rnd % len(items)
            for name, run in items[k:] + items[:k]:
                gc.collect()
                gc.disable()
                t0 = clock()
                run(inner_iters)
                t1 = clock()
                gc.enable()
                if rnd >= warmup:
                    times[name].append((t1 - t0) / 1e3 / inner_iters)
    finally:
        if was_enabled:
            gc.enable()
        else:
            gc.disable()
    return {
        name: {
            "median_us": statistics.median(ts),
            "min_us": min(ts),
            "max_us": max(ts),
            "samples": len(ts),
        }
        for name, ts in times.items()
    }


def print_table(
    rows: Mapping[str, Mapping[str, float]],
    baseline: str | Iterable[str] | None = None,
    title: str | None = None,
    unit: str = "us/op",
    file=None,
) -> None:
    """Print ``compare``'s result as a markdown table.

    ``baseline`` names one variant or several; each gives a column ``/ name`` holding every row's
    median divided by that variant's median. Baselines missing from ``rows`` (say, torch not
    installed) are left out.
    """
    out = file or sys.stdout
    if baseline is None:
        bases: list[str] = []
    elif isinstance(baseline, str):
        bases = [baseline]
    else:
        bases = list(baseline)
    bases = [b for b in bases if b in rows]
    if title:
        print(f"\n{title}\n", file=out)
    head = ["variant", f"median {unit}", f"min {unit}"] + [f"/ {b}" for b in bases]
    print("| " + " | ".join(head) + " |", file=out)
    print("|" + "---|" * len(head), file=out)
    for name, r in rows.items():
        cells = [name, _fmt(r["median_us"]), _fmt(r["min_us"])]
        cells += [f"{r['median_us'] / rows[b]['median_us']:.2f}x" for b in bases]
        print("| " + " | ".join(cells) + " |", file=out)
    n = {int(r["samples"]) for r in rows.values()}
    print(
        f"\n(median and min over {'/'.join(map(str, sorted(n)))} samples; ratios of medians)",
        file=out,
    )


def _fmt(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f} s"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.3f}"


def _busy_and_total() -> tuple[int, int]:
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def wait_for_quiet(max_cores: float = 0.15, timeout: float = 10.0, window: float = 0.5) -> bool:
    """Wait until other processes use fewer than ``max_cores`` CPU cores (Linux only).

    Returns True when quiet, False after ``timeout`` seconds (or if /proc/stat is unavailable);
    the benchmark then goes ahead and says so.
    """
    if not os.path.exists("/proc/stat"):
        return False
    ncpu = os.cpu_count() or 1
    deadline = time.monotonic() + timeout
    while True:
        b0, t0 = _busy_and_total()
        time.sleep(window)
        b1, t1 = _busy_and_total()
        used = (b1 - b0) / max(t1 - t0, 1) * ncpu
        if used < max_cores:
            return True
        if time.monotonic() >= deadline:
            print(f"note: machine not quiet ({used:.2f} cores busy); timing anyway")
            return False


def print_environment(modules: Iterable[str] = ("numpy", "scipy", "sparsetorch", "torch")) -> None:
    """Print one line per library version plus the interpreter and CPU count."""
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    for name in modules:
        mod = sys.modules.get(name)
        if mod is None:
            print(f"{name}: not imported")
            continue
        extra = ""
        if name == "torch":
            extra = f" ({mod.get_num_threads()} threads)"
        print(f"{name} {getattr(mod, '__version__', '?')}{extra}")


def parser(description: str) -> argparse.ArgumentParser:
    """The common command line: ``--quick`` (3 samples) and ``--samples N``."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="3 samples: a smoke test, not a result")
    p.add_argument("--samples", type=int, default=9, help="timed samples per variant (>= 9)")
    p.add_argument("--warmup", type=int, default=2, help="untimed rounds before sampling")
    p.add_argument("--no-wait", action="store_true", help="do not wait for a quiet machine")
    return p
