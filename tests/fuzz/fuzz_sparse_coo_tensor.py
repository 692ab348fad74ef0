"""Fuzz ``sparse_coo_tensor``: arbitrary indices/values/size (dtypes, shapes, ranges, duplicates).

A constructed tensor must agree with a NumPy reference (``np.add.at`` of the values at the
indices) through ``to_dense``, ``coalesce`` and, for 2-D, CSR; construction errors must be
documented ones. Run: ``python tests/fuzz/fuzz_sparse_coo_tensor.py -max_total_time=10``.
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
_DTYPES = [st.float32, st.float64, st.int64, st.int32, st.bool, st.float16, st.complex64]
_IDX = ["int64", "int32", "int16", "uint8", "float32", "bool", "list", "tensor-f"]


def _int(fdp, lo=-3, hi=8):
    # mostly small, sometimes extreme (overflowing int64 linearisation, negative)
    k = fdp.ConsumeIntInRange(0, 15)
    if k == 0:
        return fdp.ConsumeIntInRange(-(2**63), 2**63 - 1)
    if k == 1:
        return fdp.ConsumeIntInRange(2**31 - 2, 2**33)
    return fdp.ConsumeIntInRange(lo, hi)


def _build(fdp):
    sd = fdp.ConsumeIntInRange(0, 4)
    nnz = fdp.ConsumeIntInRange(0, 8)
    dense = [fdp.ConsumeIntInRange(0, 3) for _ in range(fdp.ConsumeIntInRange(0, 2))]
    idx = np.array([[_int(fdp) for _ in range(nnz)] for _ in range(sd)], dtype=object).reshape(sd, nnz)
    kind = _IDX[fdp.ConsumeIntInRange(0, len(_IDX) - 1)]
    if fdp.ConsumeBool():  # a wrongly shaped index array
        idx = idx.reshape(-1)
    if kind == "list":
        indices = idx.tolist()
    elif kind == "tensor-f":
        indices = st.tensor(np.clip(idx.astype(np.float64), -1e6, 1e6))
    else:
        with np.errstate(all="ignore"):
            indices = np.array(idx.tolist(), dtype=np.float64).astype(kind) if idx.size else np.zeros(idx.shape, kind)
        indices = st.from_numpy(indices) if fdp.ConsumeBool() else indices.tolist()
    vshape = [nnz if fdp.ConsumeIntInRange(0, 7) else fdp.ConsumeIntInRange(0, 9)] + dense
    dtype = _DTYPES[fdp.ConsumeIntInRange(0, len(_DTYPES) - 1)]
    vals = np.array([fdp.ConsumeFloat() for _ in range(int(np.prod(vshape)))]).reshape(vshape)
    values = st.tensor(vals).to(dtype) if fdp.ConsumeBool() else vals.tolist()
    size = None
    if fdp.ConsumeIntInRange(0, 3):
        size = [_int(fdp, -1, 9) for _ in range(fdp.ConsumeIntInRange(0, 6))]
    kw = {}
    if fdp.ConsumeBool():
        kw["dtype"] = _DTYPES[fdp.ConsumeIntInRange(0, len(_DTYPES) - 1)]
    if fdp.ConsumeIntInRange(0, 5) == 0:
        kw["is_coalesced"] = fdp.ConsumeBool()
    if fdp.ConsumeIntInRange(0, 7) == 0:
        kw["device"] = ["cpu", "cuda", "meta", "cpu:0", 0][fdp.ConsumeIntInRange(0, 4)]
    return indices, values, size, kw


def _reference(s):
    p = s._data
    if math.prod(p.shape) == 0:  # in s's own dtype: a wider one may not fit a huge zero-size shape
        return np.zeros(p.shape, dtype=s.dtype.np)
    ref = np.zeros(p.shape, dtype=np.complex128 if s.dtype.is_complex else np.float64)
    np.add.at(ref, tuple(p.indices), np.asarray(p.values, dtype=ref.dtype))
    if s.dtype is st.bool:
        ref = ref != 0
    return ref


def _same(got, want, what):
    got = np.asarray(got)
    if got.shape != want.shape:
        raise Finding(f"{what}: shape {got.shape} != {want.shape}")
    g = got.astype(want.dtype)
    if got.dtype.kind in "iub" or want.dtype == bool:
        ok = (g == want).all() if got.dtype.kind != "i" else True  # integer sums may wrap
    else:
        tol = 1e-2 if got.dtype in (np.float16, np.float32, np.complex64) else 1e-9
        ok = np.allclose(g, want, rtol=tol, atol=tol, equal_nan=True) or not np.isfinite(want).all()
    if not ok:
        raise Finding(f"{what}: values differ\n{got}\n{want}")


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    indices, values, size, kw = _build(fdp)
    with st.sparse.densify_limit(_LIMIT):  # never allocate big dense arrays in the fuzzer
        try:
            s = st.sparse_coo_tensor(indices, values, size, **kw)
        except Exception as e:  # noqa: BLE001 - the point: classify every error
            check_exception(e)
            return
        if s.layout is not st.sparse_coo:
            raise Finding(f"layout {s.layout}")
        with classified():
            c = s.coalesce()
            if c._nnz() > s._nnz():
                raise Finding("coalesce grew nnz")
            lin = np.ravel_multi_index(tuple(c._data.indices), c.shape[: c.sparse_dim()]) \
                if c._nnz() and c.sparse_dim() and math.prod(c.shape[: c.sparse_dim()]) < 2**62 else []
            if len(lin) > 1 and not (np.diff(lin) > 0).all():
                raise Finding("coalesced indices not sorted/unique")
            repr(s)
            if math.prod(s.shape) * s.dtype.itemsize > _LIMIT:
                try:
                    s.to_dense()
                except st.DenseAllocationError:
                    return
                raise Finding(f"to_dense of {list(s.shape)} passed the densify limit")
            try:
                got = s.to_dense().numpy()
            except st.DenseAllocationError:
                return  # a zero-size shape whose other dims overflow: no array can have it
            ref = _reference(s)
            _same(got, ref, "to_dense")
            _same(c.to_dense().numpy(), ref, "coalesce().to_dense")
            if s.sparse_dim() == 2 and s.dense_dim() == 0:
                _same(s.to_sparse_csr().to_dense().numpy(), ref, "to_sparse_csr().to_dense")

if __name__ == "__main__":
    main(TestOneInput)
