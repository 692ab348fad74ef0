"""Checkpoint save/load of a 1M x 64 float32 tensor (256 MB): sparsetorch against NumPy .npy and torch.

    python benchmarks/bench_serialization.py            # 9 samples after 2 warm-ups
    python benchmarks/bench_serialization.py --quick    # 3 samples of a 100k x 64 tensor

``sparsetorch.save`` to a path is atomic: it writes a temporary file, fsyncs it and renames it, so
it is shown next to ``np.save`` both without and with the same fsync. Both libraries write
PyTorch's ZIP format; loading checks every declared size against the file but, like torch, does
not CRC the storages. The last table loads a state_dict written by ``torch.save`` with each
library (the interchange case); ``mmap=True`` maps the file instead of reading it.
"""

from __future__ import annotations

import os
import sys
import tempfile

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st

try:
    import torch
except ImportError:  # the torch rows are skipped
    torch = None


def main(argv=None):
    args = _harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    samples = 3 if args.quick else args.samples
    n = 100_000 if args.quick else 1_000_000
    a = np.random.default_rng(0).standard_normal((n, 64)).astype(np.float32)
    x = st.from_numpy(a)
    if not args.no_wait:
        _harness.wait_for_quiet()
    _harness.print_environment()
    print(f"tensor {n} x 64 float32 = {a.nbytes / 1e6:.0f} MB")
    with tempfile.TemporaryDirectory() as d:
        npy, stp, ptp, sdp = (os.path.join(d, name) for name in ("a.npy", "a.st", "a.pt", "sd.pt"))

        def np_save_fsync():
            with open(npy, "wb") as fh:
                np.save(fh, a)
                fh.flush()
                os.fsync(fh.fileno())

        saves = {"np.save": _harness.loop(lambda: np.save(npy, a)),
                 "np.save + fsync": _harness.loop(np_save_fsync),
                 "sparsetorch.save (atomic, fsync)": _harness.loop(lambda: st.save(x, stp))}
        if torch is not None:
            t = torch.from_numpy(a)
            saves["torch.save"] = _harness.loop(lambda: torch.save(t, ptp))
        rows = _harness.compare(saves, inner_iters=1, samples=samples, warmup=args.warmup)
        _harness.print_table(rows, baseline=["np.save", "torch.save"], title="save", unit="per op")

        loads = {"np.load": _harness.loop(lambda: np.load(npy)),
                 "sparsetorch.load": _harness.loop(lambda: st.load(stp)),
                 "sparsetorch.load mmap=True": _harness.loop(lambda: st.load(stp, mmap=True))}
        if torch is not None:
            loads["torch.load"] = _harness.loop(lambda: torch.load(ptp))
            loads["torch.load mmap=True"] = _harness.loop(lambda: torch.load(ptp, mmap=True))
        rows = _harness.compare(loads, inner_iters=1, samples=samples, warmup=args.warmup)
        _harness.print_table(rows, baseline=["np.load", "torch.load"], title="load", unit="per op")

        if torch is not None:  # a state_dict written by torch.save, loaded by each library
            torch.save({"weight": torch.from_numpy(a)}, sdp)
            loads = {"torch.load": _harness.loop(lambda: torch.load(sdp)),
                     "sparsetorch.load": _harness.loop(lambda: st.load(sdp)),
                     "torch.load mmap=True": _harness.loop(lambda: torch.load(sdp, mmap=True)),
                     "sparsetorch.load mmap=True": _harness.loop(lambda: st.load(sdp, mmap=True))}
            rows = _harness.compare(loads, inner_iters=1, samples=samples, warmup=args.warmup)
            _harness.print_table(rows, baseline=["torch.load"], title="load a torch-written state_dict",
                                 unit="per op")


if __name__ == "__main__":
    sys.exit(main())
