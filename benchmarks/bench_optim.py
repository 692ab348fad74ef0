"""Optimizer steps: sparsetorch against torch (when installed), one process.

    python benchmarks/bench_optim.py            # 9 samples after 2 warm-ups, full sizes
    python benchmarks/bench_optim.py --quick    # small table, 3 samples: a smoke test
    python benchmarks/bench_optim.py --only sgd_momentum,adagrad   # a subset of the sections

Sections (issue 4; a 1M x 64 float32 table = 64M parameters, ``--quick`` uses 50k x 64):
- ``sparse_adam``: ``SparseAdam.step()`` with a coalesced gradient of 20k unique sorted rows;
  also ``Adam(sparse_mode="lazy")`` (same work) and ``Adam`` exact (dense moment decay).
- ``dense_adam``: ``Adam.step()`` with a dense gradient; torch's default (foreach) and fused.
- ``adagrad``: ``Adagrad.step()`` on the 20k-row sparse gradient (and ``RowWiseAdagrad``).
- ``sgd_momentum``: ``SGD(momentum=0.9).step()`` on the 20k-row sparse gradient: exact (a dense
  buffer decays every row) and lazy (gradient rows only); torch keeps a sparse buffer.

Target (issue 4): dense Adam step <= 0.6x torch's default.
"""

from __future__ import annotations

import sys
import warnings

import _harness  # benchmarks/ is on sys.path when this file runs as a script
import numpy as np

import sparsetorch as st

try:
    import torch
except ImportError:  # the torch columns are skipped
    torch = None

warnings.filterwarnings("ignore", message=".*[Ss]parse.*")

SECTIONS = ("sparse_adam", "dense_adam", "adagrad", "sgd_momentum")


def grads(n, d, k, seed=0):
    """A table, a coalesced row-sparse gradient of ``k`` unique sorted rows and a dense one."""
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((n, d), dtype=np.float32)
    rows = np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64)
    vals = rng.standard_normal((k, d), dtype=np.float32)
    dense = rng.standard_normal((n, d), dtype=np.float32)
    return table, rows, vals, dense


def st_param(table, grad):
    p = st.tensor(table.copy()).requires_grad_()
    p.grad = grad
    return p


def st_sparse(rows, vals, shape):
    g = st.sparse_coo_tensor(st.tensor(rows[None]), st.tensor(vals), shape)
    return g.coalesce()


def torch_param(table, grad):
    p = torch.tensor(table.copy(), requires_grad=True)
    p.grad = grad
    return p


def torch_sparse(rows, vals, shape):
    return torch.sparse_coo_tensor(torch.tensor(rows[None]), torch.tensor(vals), shape).coalesce()


def stepper(opt):
    return _harness.loop(opt.step)


def main(argv=None):
    ap = _harness.parser(__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated sections: " + ",".join(SECTIONS))
    args = ap.parse_args(argv)
    only = set(args.only.split(",")) if args.only else set(SECTIONS)
    samples = 3 if args.quick else args.samples
    n, d, k = (50_000, 64, 1_000) if args.quick else (1_000_000, 64, 20_000)
    table, rows, vals, dense = grads(n, d, k)
    if not args.no_wait:
        _harness.wait_for_quiet()
    _harness.print_environment()
    print(f"table {n} x {d} float32, sparse gradient {k} unique rows; numba threads "
          f"{_numba_threads()}")
    sg = st_sparse(rows, vals, (n, d))
    tg = torch_sparse(rows, vals, (n, d)) if torch is not None else None

    def section(title, make, base="torch"):
        variants = {}
        for name, fn in make():
            variants[name] = fn
        rows_ = _harness.compare(variants, inner_iters=1, samples=samples, warmup=args.warmup)
        _harness.print_table(rows_, baseline=base, title=title)
        variants.clear()

    def sparse_adam():
        yield "sparsetorch SparseAdam", stepper(st.optim.SparseAdam([st_param(table, sg)]))
        yield "sparsetorch Adam lazy", stepper(st.optim.Adam([st_param(table, sg)], sparse_mode="lazy"))
        yield "sparsetorch Adam exact", stepper(st.optim.Adam([st_param(table, sg)]))
        if torch is not None:
            yield "torch", stepper(torch.optim.SparseAdam([torch_param(table, tg)]))

    def dense_adam():
        yield "sparsetorch", stepper(st.optim.Adam([st_param(table, st.tensor(dense))]))
        if torch is not None:
            yield "torch", stepper(torch.optim.Adam([torch_param(table, torch.tensor(dense))]))
            yield "torch fused", stepper(torch.optim.Adam([torch_param(table, torch.tensor(dense))],
                                                          fused=True))

    def adagrad():
        yield "sparsetorch Adagrad", stepper(st.optim.Adagrad([st_param(table, sg)]))
        yield "sparsetorch RowWiseAdagrad", stepper(st.optim.RowWiseAdagrad([st_param(table, sg)]))
        if torch is not None:
            yield "torch", stepper(torch.optim.Adagrad([torch_param(table, tg)]))

    def sgd_momentum():
        yield "sparsetorch exact", stepper(st.optim.SGD([st_param(table, sg)], lr=0.01, momentum=0.9))
        yield "sparsetorch lazy", stepper(st.optim.SGD([st_param(table, sg)], lr=0.01, momentum=0.9,
                                                       sparse_mode="lazy"))
        if torch is not None:
            yield "torch", stepper(torch.optim.SGD([torch_param(table, tg)], lr=0.01, momentum=0.9))

    titles = {"sparse_adam": ("SparseAdam step (coalesced sparse gradient)", sparse_adam),
              "dense_adam": ("dense Adam step", dense_adam),
              "adagrad": ("Adagrad step (sparse gradient)", adagrad),
              "sgd_momentum": ("SGD momentum=0.9 step (sparse gradient)", sgd_momentum)}
    for key in SECTIONS:
        if key in only:
            section(*titles[key])
    return 0


def _numba_threads():
    try:
        import numba

        return numba.get_num_threads()
    except ImportError:
        return "n/a (numba missing)"


if __name__ == "__main__":
    sys.exit(main())
