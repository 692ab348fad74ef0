"""OpInfo rows for reductions of sparse tensors: sum, sparse.sum, mean, amax, amin, and
sparse.softmax / sparse.log_softmax (every row also runs on dense input)."""

import numpy as np

import sparsetorch as st

from ._core import ErrorInput, OpInfo, Sample, make

SP = (st.strided, st.sparse_coo, st.sparse_csr)


def _dims(x, dim):
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def _samples(keepdim=True, tuples=True):
    def samples(dtype, rg):
        out = []
        for i, shape in enumerate([(3, 4), (2, 3, 4)]):
            x = lambda seed=i, shape=shape: make(shape, dtype, rg, seed=seed)
            nd = len(shape)
            out += [Sample((x(),), name=f"{shape}-all"), Sample((x(),), {"dim": 0}, name=f"{shape}-0"),
                    Sample((x(),), {"dim": 1}, name=f"{shape}-1"), Sample((x(),), {"dim": -1}, name=f"{shape}-last")]
            if keepdim:
                out += [Sample((x(),), {"dim": 1, "keepdim": True}, name=f"{shape}-1-keep"),
                        Sample((x(),), {"dim": 0, "keepdim": True}, name=f"{shape}-0-keep")]
            if tuples and nd == 3:
                out += [Sample((x(),), {"dim": (0, 2)}, name="(0, 2)"),
                        Sample((x(),), {"dim": (0, 1)}, name="(0, 1)")]
                if keepdim:
                    out.append(Sample((x(),), {"dim": (0, 2), "keepdim": True}, name="(0, 2)-keep"))
        return out
    return samples


def _np_red(f):
    def ref(x, dim=None, keepdim=False):
        return np.asarray(f(x, axis=_dims(x, dim), keepdims=keepdim))
    return ref


def _masked_softmax(log):
    """The op of the softmax rows: ``sparse.softmax`` on sparse input; on dense input the same
    semantics (zeros are unspecified: -inf), so the sparse table can compare the two."""
    def op(x, dim):
        if x.layout is not st.strided:
            return (st.sparse.log_softmax if log else st.sparse.softmax)(x, dim)
        mask = x != 0
        y = (st.log_softmax if log else st.softmax)(st.where(mask, x, float("-inf")), dim)
        return st.where(mask, y, 0.0)
    op.__name__ = "sparse.log_softmax" if log else "sparse.softmax"
    return op


def _np_softmax(log):
    def ref(x, dim):
        z = x - x.max(axis=dim, keepdims=True)
        s = np.log(np.exp(z).sum(axis=dim, keepdims=True))
        return z - s if log else np.exp(z - s)
    return ref


def _softmax_samples(dtype, rg):
    return [Sample((make((3, 4), dtype, rg, seed=1), 1), name="rows"),
            Sample((make((3, 4), dtype, rg, seed=2), 0), name="cols"),
            Sample((make((2, 3, 4), dtype, rg, seed=3), 1), name="3-d middle"),
            Sample((make((2, 3, 4), dtype, rg, seed=4), -1), name="3-d last")]


def _dim_errors():
    return [ErrorInput(Sample((st.ones(2, 3).to_sparse(),), {"dim": 2}), IndexError, "Dimension out of range")]


OPS = [
    OpInfo("sum.sparse", st.sum, _np_red(np.sum), _samples(), layouts=SP, method="sum",
           error_inputs=_dim_errors),
    OpInfo("sparse.sum", st.sparse.sum, lambda x, dim=None: np.asarray(np.sum(x, axis=_dims(x, dim))),
           _samples(keepdim=False), layouts=SP),
    OpInfo("mean.sparse", st.mean, _np_red(np.mean), _samples(), layouts=SP, method="mean"),
    OpInfo("amax.sparse", st.amax, _np_red(np.max), _samples(), layouts=SP, method="amax"),
    OpInfo("amin.sparse", st.amin, _np_red(np.min), _samples(), layouts=SP, method="amin"),
    OpInfo("sparse.softmax", _masked_softmax(False), _np_softmax(False), _softmax_samples, layouts=SP),
    OpInfo("sparse.log_softmax", _masked_softmax(True), _np_softmax(True), _softmax_samples, layouts=SP),
]
