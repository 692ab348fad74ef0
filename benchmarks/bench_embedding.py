"""Embedding workloads: sparsetorch (numba kernels, and the NumPy/SciPy fallback) against torch.

    python benchmarks/bench_embedding.py            # 9 samples after 2 warm-ups, full sizes
    python benchmarks/bench_embedding.py --quick    # small sizes, 3 samples: a smoke test
    python benchmarks/bench_embedding.py --threads 1   # both libraries single-threaded
    python benchmarks/bench_embedding.py --threads 1 --cpu-time --only fwd   # CPU time, one section

Inputs (issue 4): a 1M x 64 float32 table; 4096 bags of 20 ids drawn from zipf(1.1) ranks
scattered by a fixed permutation. Sections:
- ``EmbeddingBag`` forward, modes sum and mean (no graph);
- ``EmbeddingBag`` forward + backward with ``sparse=True``: torch's gradient is uncoalesced, so
  a "torch + coalesce" row is given too (sparsetorch's gradient comes out coalesced);
- ``Embedding(sparse=True)`` lookup of 65,536 zipf ids + backward (uncoalesced grads on both);
- full iterations (lookup, backward, optimizer step) with SGD, Adagrad and SparseAdam, for the
  bags and for the lookup.

Targets (issue 4, medians of one run): EmbeddingBag forward <= 1.0x torch, forward+backward
<= 1.0x torch, Embedding + SparseAdam iteration <= 0.3x torch. The numba kernels are compiled (or loaded from numba's cache) in the warm-up.
"""

from __future__ import annotations

import sys
import time

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st
import sparsetorch.nn.functional as F
from sparsetorch.sparse import _spmm

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the torch rows are skipped
    torch = None


def zipf_ids(rng, n, num, perm):
    """``n`` ids in [0, num): zipf(1.1) ranks (ranks past the table redrawn), permuted."""
    out = np.empty(0, np.int64)
    while out.size < n:
        r = rng.zipf(1.1, 2 * n)
        out = np.concatenate((out, r[r <= num] - 1))
    return perm[out[:n]]


def _fallback(fn):
    """``fn`` run with the numba kernels switched off (the NumPy/SciPy path)."""
    def run():
        old = _spmm.use_numba(False)
        try:
            fn()
        finally:
            _spmm.use_numba(old)
    return run


def bag_inputs(num, dim, bags, per_bag):
    """The table, zipf ids, bag offsets and an output gradient (seeded: the same every run)."""
    rng = np.random.default_rng(0)
    perm = rng.permutation(num)
    w0 = rng.standard_normal((num, dim)).astype(np.float32)
    ids0 = zipf_ids(rng, bags * per_bag, num, perm)
    off0 = np.arange(0, bags * per_bag, per_bag, dtype=np.int64)
    g0 = rng.standard_normal((bags, dim)).astype(np.float32)
    return w0, ids0, off0, g0


def bag_section(args, num, dim, bags, per_bag):
    w0, ids0, off0, g0 = bag_inputs(num, dim, bags, per_bag)
    print(f"\ntable {num} x {dim}, {bags} bags x {per_bag} ids, {np.unique(ids0).size} distinct ids")
    W, ids, off, G = st.tensor(w0), st.tensor(ids0), st.tensor(off0), st.tensor(g0)
    Wg = st.tensor(w0, requires_grad=True)
    if torch is not None:
        tW, tids, toff, tG = (torch.from_numpy(w0), torch.from_numpy(ids0), torch.from_numpy(off0),
                              torch.from_numpy(g0))
        tWg = torch.from_numpy(w0.copy()).requires_grad_(True)
    for mode in ("sum", "mean"):
        v = {}
        if torch is not None:
            v["torch"] = _harness.loop(lambda m=mode: TF.embedding_bag(tids, tW, toff, mode=m))
        v["sparsetorch"] = _harness.loop(lambda m=mode: F.embedding_bag(ids, W, off, mode=m))
        v["sparsetorch (no numba)"] = _harness.loop(
            _fallback(lambda m=mode: F.embedding_bag(ids, W, off, mode=m)))
        if "fwd" in args.only:
            rows = _harness.compare(v, 1, args.samples, args.warmup, args.clock)
            _harness.print_table(rows, "torch", f"EmbeddingBag forward, mode={mode}", "us")
        if "fwd-bwd" not in args.only:
            continue

        def st_fb(m=mode):
            Wg.grad = None
            F.embedding_bag(ids, Wg, off, mode=m, sparse=True).backward(G)

        def t_fb(m=mode):
            tWg.grad = None
            TF.embedding_bag(tids, tWg, toff, mode=m, sparse=True).backward(tG)

        def t_fbc():
            t_fb()
            tWg.grad.coalesce()

        v = {}
        if torch is not None:
            v["torch"] = _harness.loop(t_fb)
            v["torch + coalesce"] = _harness.loop(t_fbc)
        v["sparsetorch (coalesced grad)"] = _harness.loop(st_fb)
        v["sparsetorch (no numba)"] = _harness.loop(_fallback(st_fb))
        rows = _harness.compare(v, 1, args.samples, args.warmup, args.clock)
        _harness.print_table(rows, ["torch", "torch + coalesce"] if torch is not None else None,
                             f"EmbeddingBag forward + backward (sparse=True), mode={mode}", "us")
        if torch is not None:  # same gradient (dense form), checked once
            st_fb()
            t_fb()
            a = Wg.grad.to_dense().numpy()
            b = tWg.grad.to_dense().numpy()
            print(f"(gradients agree: {np.allclose(a, b, rtol=1e-4, atol=1e-5)})")


def bag_iterations(args, num, dim, bags, per_bag):
    w0, ids0, off0, g0 = bag_inputs(num, dim, bags, per_bag)
    iteration_section(args, w0, ids0, g0, off0)


def embedding_section(args, num, dim, n):
    rng = np.random.default_rng(1)
    perm = rng.permutation(num)
    w0 = rng.standard_normal((num, dim)).astype(np.float32)
    ids0 = zipf_ids(rng, n, num, perm)
    g0 = rng.standard_normal((n, dim)).astype(np.float32)
    Wg, ids, G = st.tensor(w0, requires_grad=True), st.tensor(ids0), st.tensor(g0)

    def st_run():
        Wg.grad = None
        F.embedding(ids, Wg, sparse=True).backward(G)

    v = {}
    if torch is not None:
        tWg = torch.from_numpy(w0.copy()).requires_grad_(True)
        tids, tG = torch.from_numpy(ids0), torch.from_numpy(g0)

        def t_run():
            tWg.grad = None
            TF.embedding(tids, tWg, sparse=True).backward(tG)

        v["torch"] = _harness.loop(t_run)
    v["sparsetorch"] = _harness.loop(st_run)
    if "emb" in args.only:
        rows = _harness.compare(v, 1, args.samples, args.warmup, args.clock)
        _harness.print_table(rows, "torch", f"Embedding(sparse=True): {n} zipf ids lookup + backward",
                             "us")
    if "emb-iter" in args.only:
        iteration_section(args, w0, ids0, g0)


OPTIMIZERS = (("SGD", {"lr": 0.1}), ("Adagrad", {"lr": 0.1}), ("SparseAdam", {"lr": 1e-3}))


def iteration_section(args, w0, ids0, g0, off0=None):
    """A training iteration of a sparse embedding table with each optimizer torch accepts sparse
    gradients in (SGD, Adagrad, SparseAdam): ``nn.Embedding(sparse=True)`` lookup (or, with
    ``off0``, ``nn.EmbeddingBag(mode="sum", sparse=True)``), a loss, backward, ``step()``,
    ``zero_grad()``. torch's optimizers coalesce the uncoalesced gradient where they need to;
    ours take Embedding's uncoalesced gradient (SGD applies it entry by entry) and
    EmbeddingBag's coalesced one."""
    num, dim = w0.shape
    kind = "Embedding" if off0 is None else "EmbeddingBag(sum)"

    def build(lib, name, kw):
        if off0 is None:
            emb = lib.nn.Embedding(num, dim, sparse=True)
        else:
            emb = lib.nn.EmbeddingBag(num, dim, mode="sum", sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.from_numpy(w0))
        opt = getattr(lib.optim, name)(emb.parameters(), **kw)
        ids, G = lib.from_numpy(ids0), lib.from_numpy(g0)
        off = None if off0 is None else lib.from_numpy(off0)

        def it():
            opt.zero_grad()
            out = emb(ids) if off is None else emb(ids, off)
            (out * G).sum().backward()
            opt.step()

        return it, emb

    for name, kw in OPTIMIZERS:
        v = {}
        tables = {}
        if torch is not None:
            v["torch"], tables["torch"] = build(torch, name, kw)
            v["torch"] = _harness.loop(v["torch"])
        it, tables["sparsetorch"] = build(st, name, kw)
        v["sparsetorch"] = _harness.loop(it)
        rows = _harness.compare(v, 1, args.samples, args.warmup, args.clock)
        _harness.print_table(rows, "torch", f"{kind}(sparse=True) + {name} iteration: "
                             f"{ids0.size} zipf ids, {num} x {dim} table", "us")
        if torch is not None:  # same steps (hot rows grow large: a relative tolerance)
            same = np.allclose(tables["sparsetorch"].weight.detach().numpy(),
                               tables["torch"].weight.detach().numpy(), rtol=1e-4, atol=1e-4)
            print(f"(tables agree after the same number of steps: {same})")


def main(argv=None) -> int:
    p = _harness.parser(__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=0,
                   help="threads for torch, numba and NumPy's BLAS alike (default: their own)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time this process's CPU time instead of wall time (steadier on a busy "
                        "machine; for --threads 1: several threads add up, and torch's spin)")
    p.add_argument("--only", default="fwd,fwd-bwd,bag-iter,emb,emb-iter",
                   help="sections, comma-separated: fwd, fwd-bwd (EmbeddingBag), bag-iter "
                        "(its optimizer iterations), emb (Embedding lookup + backward), emb-iter")
    args = p.parse_args(argv)
    args.only = set(args.only.split(","))
    args.clock = time.process_time_ns if args.cpu_time else None
    if args.threads:
        st.set_num_threads(args.threads)  # numba's pool (as sparsetorch starts it), the BLAS
        if torch is not None:
            torch.set_num_threads(args.threads)
        try:  # NumPy's BLAS too (torch's count covers its own)
            from threadpoolctl import threadpool_limits
        except ImportError:
            pass
        else:
            blas = threadpool_limits(args.threads, user_api="blas")  # noqa: F841 - held
    if args.quick:
        args.samples = 3
        args.warmup = 1
    _harness.print_environment(("numpy", "scipy", "sparsetorch", "torch", "numba"))
    if torch is None:
        print("torch not installed: torch rows skipped")
    if not args.no_wait:
        _harness.wait_for_quiet()
    q = args.quick
    if args.only & {"fwd", "fwd-bwd"}:
        bag_section(args, 10_000 if q else 1_000_000, 64, 256 if q else 4096, 20)
    if "bag-iter" in args.only:
        bag_iterations(args, 10_000 if q else 1_000_000, 64, 256 if q else 4096, 20)
    if args.only & {"emb", "emb-iter"}:
        embedding_section(args, 10_000 if q else 1_000_000, 64, 4096 if q else 65_536)
    return 0


if __name__ == "__main__":
    sys.exit(main())
