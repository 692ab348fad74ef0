"""Compile sparsetorch's numba kernels ahead, into numba's on-disk cache.

    python -m sparsetorch.warmup                 # every group, float32 and float64
    python -m sparsetorch.warmup --only embedding optim
    python -m sparsetorch.warmup --list

The first use of a kernel otherwise compiles it in the middle of a program (40-100 s for all of
them on a busy 2-core machine, announced by one line on stderr). The warmup runs each kernel group
through the public API, once on one thread and once on all cores (kernels have serial and
parallel variants), so what lands in the cache are exactly the signatures a program uses; later
processes load them (embedding layers and optimizers load theirs when constructed:
``sparsetorch._jit.warm``).
Running it again is cheap: it only loads what is cached and reports 0 kernels compiled.
"""

import argparse
import importlib.util
import sys
import time

from . import _dtype, _jit, nn, optim
from . import _ops as st
from . import sparse as tsparse
from ._backend import CPU
from .autograd.grad_mode import no_grad
from .dense import _par_pointwise
from .distributed._merge import merge_sum
from .nn import functional as F

__all__ = ["GROUPS", "main", "run"]

_DTYPES = ("float32", "float64")


def _coo(n, nnz, dtype, cols=None, seed=0):
    st.manual_seed(seed)
    idx = st.stack([st.randint(0, n, (nnz,)), st.randint(0, cols or n, (nnz,))])
    return st.sparse_coo_tensor(idx, st.randn(nnz, dtype=dtype), (n, cols or n))


def _embedding(dtype):
    # small work runs the serial twins of the kernels, large work (ids x 16 columns past
    # _jit.PAR_MIN_WORK) the parallel ones
    for n in (256, 4096, 40_000):
        ids = st.randint(0, 1000, (n,))
        offsets = st.arange(0, n, 8)
        for mode in ("sum", "mean", "max"):
            for sparse in (True, False):
                bag = nn.EmbeddingBag(1000, 16, mode=mode, sparse=sparse, dtype=dtype)
                bag(ids, offsets).sum().backward()
        bag = nn.EmbeddingBag(1000, 16, mode="sum", sparse=True, dtype=dtype)
        bag(ids, offsets, per_sample_weights=st.rand(n, dtype=dtype)).sum().backward()
        emb = nn.Embedding(1000, 16, sparse=True, dtype=dtype)
        emb(ids.reshape(-1, 8)).sum().backward()


def _optim(dtype):
    makers = ((optim.SparseAdam, (True,), {}), (optim.Adam, (True, False), {}),
              (optim.Adam, (True, False), {"amsgrad": True}), (optim.Adagrad, (True, False), {}),
              (optim.RowWiseAdagrad, (True,), {}), (optim.SGD, (True,), {"lr": 0.1}))
    for n in (64, 4096):  # rows touched per step: small and large work
        offsets = st.arange(0, n, 8)
        for cls, modes, kw in makers:
            for sparse in modes:
                # Embedding's sparse gradient is uncoalesced, EmbeddingBag's coalesced: both paths
                for bag in (False, True):
                    emb = (nn.EmbeddingBag if bag else nn.Embedding)(5000, 16, sparse=sparse,
                                                                     dtype=dtype)
                    opt = cls(emb.parameters(), **kw)
                    for _ in range(2):
                        opt.zero_grad()
                        ids = st.randint(0, 5000, (n,))
                        (emb(ids, offsets) if bag else emb(ids)).sum().backward()
                        opt.step()


def _spmm(dtype):
    for n, nnz in ((64, 200), (3000, 20000)):  # the serial and the parallel kernels
        a = _coo(n, nnz, dtype).coalesce().requires_grad_()
        x = st.randn(n, 16, dtype=dtype, requires_grad=True)
        tsparse.mm(a, x).sum().backward()
        c = a.detach().to_sparse_csr()
        (c @ x).sum().backward()
        u = _coo(n, nnz, dtype, seed=1).requires_grad_()  # uncoalesced
        tsparse.mm(u, x).sum().backward()


def _spgemm(dtype):
    for n, nnz in ((64, 200), (3000, 20000)):
        a, b = _coo(n, nnz, dtype), _coo(n, nnz, dtype, seed=1)
        tsparse.mm(a, b)
        a.to_sparse_csr() @ b.to_sparse_csr()


def _rowsort(dtype):
    for nnz in (200, 1 << 17):
        _coo(3000, nnz, dtype).coalesce().sum(1)  # the row sum finds its runs by galloping
        st.manual_seed(2)
        idx = st.randint(0, 3000, (1, nnz))
        st.sparse_coo_tensor(idx, st.randn(nnz, 16, dtype=dtype), (3000, 16)).coalesce()


def _merge(dtype):
    for nnz in (200, 20000):
        a, b = _coo(3000, nnz, dtype).coalesce(), _coo(3000, nnz, dtype, seed=1).coalesce()
        a + b
        a.to_sparse_csr() + b.to_sparse_csr()
        a * b


def _nn(dtype):
    x = st.randn(1 << 17, dtype=dtype, requires_grad=True)
    t = st.rand(1 << 17, dtype=dtype)
    w = st.rand(1 << 17, dtype=dtype)
    for y in (F.sigmoid(x), F.logsigmoid(x), F.softplus(x), F.softplus(x, beta=2.0), F.silu(x),
              F.gelu(x), F.gelu(x, approximate="tanh"), F.elu(x), F.leaky_relu(x)):
        y.sum().backward()
    for red in ("mean", "sum", "none"):
        for kw in ({}, {"weight": w}, {"pos_weight": w}):
            F.binary_cross_entropy_with_logits(x, t, reduction=red, **kw).sum().backward()


def _distributed(dtype):
    # the k-way merge of the sparse all-reduce, on two ranks' sorted runs (no process group)
    xp = CPU.xp
    keys = xp.concatenate([xp.arange(0, 2000, 2), xp.arange(0, 3000, 3)]).astype(xp.int64)
    starts = xp.array([0, 1000, 2000], dtype=xp.int64)
    for d in (1, 16):
        merge_sum(CPU, keys, xp.ones((2000, d), dtype=dtype.np), starts)


def _random(dtype):
    with no_grad():
        x = st.empty(1 << 17, dtype=dtype)
        x.normal_()
        x.exponential_()
        x.cauchy_()
        x.log_normal_()
        x.geometric_(0.5)
        st.randn(1 << 17, dtype=dtype)
        st.rand(1 << 17, dtype=dtype)
    st.randperm(1 << 17)


def _topk(dtype):
    x = st.rand(8, 512, dtype=dtype)
    for k in (4, 200):  # partial_sort (k * 64 <= n) and nth_element + sort
        for largest in (True, False):
            st.topk(x, k, largest=largest)


def _small_bmm(dtype):
    t = st.randn(16, 5, 8, dtype=dtype)
    st.bmm(t, t.transpose(1, 2))


def _threshold_bwd(dtype):
    x = st.randn(128, 128, dtype=dtype, requires_grad=True)
    F.relu(x).sum().backward()


def _transformer(dtype):
    # layer norm, dropout (in the layers and inside the attention core), the attention core's
    # softmax kernels and the per-head split, forward and backward; the random state is kept
    from ._generator import fork_rng

    with fork_rng():
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True, dtype=dtype)
        x = st.randn(2, 5, 8, dtype=dtype, requires_grad=True)
        layer(x).sum().backward()
        out, w = layer.self_attn(x, x, x)
        (out.sum() + w.sum()).backward()


def _softmax(dtype):
    # F.softmax / F.log_softmax (so cross_entropy): rows (last dim) and slabs (another dim),
    # forward and backward; small work runs the serial kernels, large work the parallel ones
    for shape in ((8, 10), (512, 1024)):
        x = st.randn(*shape, dtype=dtype, requires_grad=True)
        for dim in (-1, 0):
            (F.softmax(x, dim).sum() + F.log_softmax(x, dim).sum()).backward()


def _pointwise(dtype):
    # a large add/sub/mul/div or sum takes them only with two free cores: run them directly
    _par_pointwise.warm_up(dtype.np)


GROUPS = {  # name -> (what it compiles, the workload that reaches it)
    "embedding": ("Embedding / EmbeddingBag forward and backward", _embedding),
    "optim": ("SparseAdam, Adam, Adagrad, RowWiseAdagrad row updates", _optim),
    "spmm": ("sparse @ dense, its gradients, SDDMM", _spmm),
    "spgemm": ("sparse @ sparse", _spgemm),
    "rowsort": ("coalesce (scalar and hybrid values), COO row sums", _rowsort),
    "merge": ("sparse + sparse, sparse * sparse", _merge),
    "nn": ("sigmoid, logsigmoid, softplus, silu, gelu, elu, leaky_relu, BCE-with-logits on large "
           "tensors", _nn),
    "distributed": ("the sparse all-reduce's k-way merge", _distributed),
    "random": ("normal_, exponential_, cauchy_, ..., randn, rand, randperm on large tensors",
               _random),
    "topk": ("topk in torch's CPU order (partial_sort / nth_element + sort)", _topk),
    "small_bmm": ("bmm of small matrices by a transposed batch (T @ T^T, q @ k^T)", _small_bmm),
    "pointwise": ("add, sub, mul, div and sum of large arrays on several threads", _pointwise),
    "threshold_bwd": ("relu's backward (threshold_backward) from 16384 elements", _threshold_bwd),
    "transformer": ("layer norm, dropout, attention softmax and head split, fwd and bwd",
                    _transformer),
    "softmax": ("F.softmax / F.log_softmax (cross_entropy) rows and slabs, fwd and bwd",
                _softmax),
}


def _counter():
    """A list whose length counts the numba compiles of sparsetorch kernels from now on."""
    hits = []
    try:
        from numba.core import event
    except ImportError:
        return hits, None

    class _Count(event.Listener):
        def on_start(self, ev):
            d = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
            mod = getattr(getattr(d, "py_func", None), "__module__", None) or ""
            if mod.startswith("sparsetorch."):
                hits.append(mod)

        def on_end(self, ev):
            pass

    listener = _Count()
    event.register("numba:compile", listener)
    return hits, listener


def run(groups=None, dtypes=_DTYPES, file=None):
    """Run the workloads of ``groups`` (all by default) for ``dtypes``; returns
    ``[(group, dtype, seconds, kernels compiled)]`` and prints one line per row to ``file``."""
    out = file if file is not None else sys.stdout
    names = list(GROUPS) if not groups else list(groups)
    unknown = [g for g in names if g not in GROUPS]
    if unknown:
        raise ValueError(f"unknown warmup group(s) {unknown}; choose from {list(GROUPS)}")
    if not _jit.ENABLED[0]:
        print("sparsetorch.warmup: numba is switched off (SPARSETORCH_NO_NUMBA): nothing to do",
              file=out)
        return []
    if importlib.util.find_spec("numba") is None:
        print("sparsetorch.warmup: numba is not installed: nothing to compile", file=out)
        return []
    old_notice = _jit.NOTICE[0]
    _jit.NOTICE[0] = False
    hits, listener = _counter()
    rows = []
    t_all = time.perf_counter()
    try:
        for g in names:
            for dt in dtypes:
                n0 = len(hits)
                t0 = time.perf_counter()
                for free in (1, _jit._cores()):  # the one-thread and the parallel kernels
                    _jit._FREE[:] = [float("inf"), free]
                    GROUPS[g][1](getattr(_dtype, dt))
                sec = time.perf_counter() - t0
                rows.append((g, dt, sec, len(hits) - n0))
                print(f"  {g:<10} {dt:<8} {sec:6.2f} s  {len(hits) - n0:3d} kernels compiled"
                      f"  ({GROUPS[g][0]})", file=out, flush=True)
    finally:
        _jit._FREE[:] = [-1.0, 1]  # sample the free cores afresh
        _jit.NOTICE[0] = old_notice
        if listener is not None:
            from numba.core import event

            event.unregister("numba:compile", listener)
    total = sum(r[3] for r in rows)
    print(f"sparsetorch.warmup: {total} kernel signatures compiled into numba's cache, "
          f"{time.perf_counter() - t_all:.1f} s in all", file=out)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m sparsetorch.warmup",
                                 description="Compile sparsetorch's numba kernels into numba's "
                                             "on-disk cache, so no program pauses to compile.")
    ap.add_argument("--only", nargs="+", metavar="GROUP", choices=list(GROUPS),
                    help="only these kernel groups (default: all)")
    ap.add_argument("--dtype", nargs="+", choices=list(_DTYPES), default=list(_DTYPES),
                    help="value dtypes to compile for (default: float32 float64)")
    ap.add_argument("--list", action="store_true", help="list the groups and exit")
    a = ap.parse_args(argv)
    if a.list:
        for g, (what, _) in GROUPS.items():
            print(f"{g:<10} {what}")
        return 0
    run(a.only, a.dtype)
    return 0


if __name__ == "__main__":
    sys.exit(main())
