"""Fuzz ``sparse_csr_tensor``: arbitrary crow/col/values/size, batched or not.

A constructed tensor must equal the dense matrix its rows describe (built here with NumPy) through
``to_dense`` and a COO round trip; construction errors must be documented ones.
Run: ``python tests/fuzz/fuzz_sparse_csr_tensor.py -max_total_time=10``.
"""

import math
import os
import sys

import atheris
import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(os.path.dirname(_HERE))]  # _common; the repo's sparsetorch
from _common import Finding, check_exception, classified, instrumented, main

with instrumented():
    import sparsetorch as st

_LIMIT = 1 << 20  # densify limit inside the fuzzer: never allocate big dense arrays
_DTYPES = [st.float32, st.float64, st.int64, st.bool, st.float16, st.complex128]
_IDX = ["int64", "int32", "int8", "float64", "bool", "list"]


def _int(fdp, lo, hi):
    k = fdp.ConsumeIntInRange(0, 15)
    if k == 0:
        return fdp.ConsumeIntInRange(-(2**63), 2**63 - 1)
    if k == 1:
        return fdp.ConsumeIntInRange(-(2**31), 2**31)
    return fdp.ConsumeIntInRange(lo, hi)


def _valid_rows(fdp, m, nnz):
    # mostly non-decreasing crow ending at nnz (so that deep checks and kernels are reached)
    cuts = sorted(fdp.ConsumeIntInRange(0, nnz) for _ in range(max(m - 1, 0)))
    return [0] + cuts + [nnz] if m else [0]


def _build(fdp):
    batch = fdp.ConsumeIntInRange(0, 2) if fdp.ConsumeIntInRange(0, 3) == 0 else 0
    m = fdp.ConsumeIntInRange(0, 5)
    n = fdp.ConsumeIntInRange(0, 6)
    nnz = fdp.ConsumeIntInRange(0, 8)
    nb = max(batch, 1)
    if fdp.ConsumeBool():
        crow = [_valid_rows(fdp, m, nnz) for _ in range(nb)]
    else:
        crow = [[_int(fdp, -1, nnz + 1) for _ in range(fdp.ConsumeIntInRange(0, m + 2))] for _ in range(nb)]
    col = [[_int(fdp, -1, n) for _ in range(nnz)] for _ in range(nb)]
    if fdp.ConsumeBool():  # sorted, unique columns per row more often than chance would give
        col = [sorted(set(c))[:nnz] + c[len(set(c)):] for c in col]
    vals = [[fdp.ConsumeFloat() for _ in range(nnz)] for _ in range(nb)]
    if not batch:
        crow, col, vals = crow[0], col[0], vals[0]
    kind = _IDX[fdp.ConsumeIntInRange(0, len(_IDX) - 1)]
    kind2 = kind if fdp.ConsumeIntInRange(0, 7) else _IDX[fdp.ConsumeIntInRange(0, len(_IDX) - 1)]
    args = []
    for a, k in ((crow, kind), (col, kind2)):
        if k == "list":
            args.append(a)
            continue
        try:
            with np.errstate(all="ignore"):
                arr = np.array(np.array(a, dtype=np.float64), dtype=k) if k != "bool" else np.array(a, dtype=bool)
        except ValueError:  # ragged lists: pass as they are
            args.append(a)
            continue
        args.append(st.from_numpy(arr) if fdp.ConsumeBool() else arr.tolist())
    dtype = _DTYPES[fdp.ConsumeIntInRange(0, len(_DTYPES) - 1)]
    values = st.tensor(vals).to(dtype) if fdp.ConsumeBool() else vals
    size = None
    if fdp.ConsumeIntInRange(0, 3):
        size = ([batch] if batch else []) + [m, n]
        if fdp.ConsumeIntInRange(0, 4) == 0:
            size = [_int(fdp, -1, 7) for _ in range(fdp.ConsumeIntInRange(0, 4))]
    return args[0], args[1], values, size


def _reference(s):
    p = s._data
    crow, col, v = np.asarray(p.crow), np.asarray(p.col), np.asarray(p.values)
    out = np.zeros(p.shape, dtype=v.dtype)
    flat = out.reshape((math.prod(p.shape[:-2]),) + p.shape[-2:])
    nb = flat.shape[0]
    cr, cl, vv = crow.reshape(nb, crow.shape[-1]), col.reshape(nb, col.shape[-1]), v.reshape(nb, v.shape[-1])
    for b in range(flat.shape[0]):
        for i in range(p.shape[-2]):
            for j in range(cr[b, i], cr[b, i + 1]):
                flat[b, i, cl[b, j]] = vv[b, j]
    return out


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    crow, col, values, size = _build(fdp)
    with st.sparse.densify_limit(_LIMIT):
        try:
            s = st.sparse_csr_tensor(crow, col, values, size)
        except Exception as e:  # noqa: BLE001 - the point: classify every error
            check_exception(e)
            return
        if s.layout is not st.sparse_csr:
            raise Finding(f"layout {s.layout}")
        with classified():
            repr(s)
            if math.prod(s.shape) * s.dtype.itemsize > _LIMIT:
                try:
                    s.to_dense()
                except st.DenseAllocationError:
                    return
                raise Finding(f"to_dense of {list(s.shape)} passed the densify limit")
            ref = _reference(s)
            for what, got in (("to_dense", s.to_dense()), ("to_sparse_coo().to_dense", s.to_sparse_coo().to_dense())):
                g = got.numpy()
                if g.shape != ref.shape or not np.array_equal(g, ref, equal_nan=g.dtype.kind in "fc"):
                    raise Finding(f"{what}: {g} != {ref}")


if __name__ == "__main__":
    main(TestOneInput)
