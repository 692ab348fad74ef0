"""OpInfo: one row per op; the rows drive the generic tests in tests/test_ops_*.py.

A row names the sparsetorch callable, a NumPy reference, sample inputs, dtypes, whether it is
differentiable, and its bad inputs. Keep it lean (about 10 fields), as STYLE.md 7.6 asks.
"""

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import sparsetorch as st

FLOATS = (st.float32, st.float64)
INTS = (st.int64, st.int32)


@dataclass
class Sample:
    """``op(*args, **kwargs)``; Tensors among ``args`` (and list/tuple entries) are inputs."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    name: str = ""


@dataclass
class ErrorInput:
    sample: Sample
    error: type
    match: str  # regex the message must match (names the argument / what was wrong)


@dataclass
class OpInfo:
    name: str
    op: Callable
    ref: Callable | None  # NumPy reference on the same args with Tensors turned into arrays
    sample_inputs: Callable[[Any, bool], list]  # (dtype, requires_grad) -> [Sample]
    dtypes: tuple = FLOATS
    supports_autograd: bool = True
    error_inputs: Callable[[], list] | None = None
    method: str | None = None  # Tensor method of the same op (x.method(*rest, **kwargs))
    inplace: str | None = None  # in-place method (x.clone().inplace(*rest)) compared with op
    atol: float = 1e-5
    rtol: float = 1.3e-6
    grad_atol: float = 1e-5
    xfail: dict = field(default_factory=dict)  # {(test, dtype_name): reason}
    keeps_float32: bool = True  # float32 in, float32 (or bool/int) out: float64 must not leak
    layouts: tuple = (st.strided,)  # input layouts besides strided drive the sparse tests
    sparse_args: tuple = (0,)  # which positional args become sparse in the sparse tests
    # layout variants the op rejects by design -> regex of the clear error it must raise
    unsupported_variants: dict = field(default_factory=dict)


def make(shape, dtype, requires_grad=False, low=-3.0, high=3.0, seed=0, positive=False):
    """A deterministic test tensor (values drawn with NumPy, then wrapped)."""
    rng = np.random.default_rng(abs(hash((shape, dtype.name, seed))) % (2**32))
    if dtype.is_floating_point or dtype.is_complex:
        lo = 0.5 if positive else low
        a = rng.uniform(lo, high, size=shape)
        if dtype.is_complex:
            a = a + 1j * rng.uniform(lo, high, size=shape)
    elif dtype is st.bool:
        a = rng.integers(0, 2, size=shape).astype(bool)
    else:
        a = rng.integers(1 if positive else int(low), int(high) + 1, size=shape)
    t = st.tensor(np.asarray(a), dtype=dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def to_numpy(x):
    """Tensors -> NumPy arrays, recursively through lists/tuples; anything else unchanged.
    bfloat16 tensors come out as float32 arrays (NumPy has no bfloat16 of its own)."""
    if isinstance(x, st.Tensor):
        t = (x.to_dense() if x.layout is not st.strided else x).detach()
        return (t.float() if t.dtype is st.bfloat16 else t).numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(to_numpy(v) for v in x)
    return x


def tensors_in(args):
    out = []
    for a in args:
        if isinstance(a, st.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(tensors_in(a))
    return out


# ---- sparse samples generated from dense ones (STYLE.md 7.6) ----

def sparsify(t, keep=0.5, seed=0, slices=None):
    """Zero out about ``1 - keep`` of ``t``'s entries (deterministically), keeping dtype/grad.
    ``slices=k``: zero whole slices over the first k dims instead (a hybrid tensor's stored
    slices then hold no zeros, where ops like sign/relu have no derivative)."""
    rng = np.random.default_rng(seed)
    a = to_numpy(t).copy()
    a[rng.random(a.shape if slices is None else a.shape[:slices]) >= keep] = 0
    out = st.tensor(a, dtype=t.dtype)
    return out.requires_grad_(t.requires_grad) if t.requires_grad else out


def uncoalesced(s):
    """A COO tensor equal to ``s`` whose every entry is stored twice (halves summing to it)."""
    s = s.detach().coalesce()
    idx = s.indices()
    v = s.values()
    i2 = st.cat([idx, idx], 1) if idx.shape[1] else idx
    v2 = st.cat([v * 0.5, v * 0.5], 0) if idx.shape[1] else v
    u = st.sparse_coo_tensor(i2, v2, s.shape)
    assert idx.shape[1] == 0 or not u.is_coalesced()
    return u


def layout_variants(dense, layouts):
    """(name, sparse tensor) pairs for a dense sample: COO coalesced/uncoalesced/hybrid, CSR,
    an empty pattern and a fully dense pattern. Only variants the layouts column allows."""
    out = []
    d = sparsify(dense)
    if st.sparse_coo in layouts:
        out.append(("coo", d.to_sparse()))
        out.append(("coo-uncoalesced", uncoalesced(d.to_sparse())))
        out.append(("coo-empty", (d * 0).to_sparse()))
        out.append(("coo-full", dense.detach().to_sparse()))
        if dense.ndim >= 2:
            out.append(("coo-hybrid", sparsify(dense, slices=dense.ndim - 1).to_sparse(dense.ndim - 1)))
    if st.sparse_csr in layouts and dense.ndim == 2:
        out.append(("csr", d.to_sparse_csr()))
        out.append(("csr-empty", (d * 0).to_sparse_csr()))
    return out
