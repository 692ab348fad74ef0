"""Fuzz ``sparsetorch.utils.data.default_collate`` (and ``collate_id_lists``) with batches of
generated samples: nested dicts/tuples/lists/namedtuples of dense, COO and CSR tensors, NumPy
arrays, Python numbers, strings and odd objects, mostly of one structure, sometimes not.

A batch that collates must hold the samples (dense leaves equal ``np.stack``; sparse leaves densify
to the stacked dense samples; numbers keep their values); one that cannot must raise a
documented error. Run: ``python tests/fuzz/fuzz_default_collate.py -max_total_time=10``.
"""

import collections
import os
import sys

import atheris
import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(os.path.dirname(_HERE))]  # _common; the repo's sparsetorch
from _common import Finding, check_exception, classified, instrumented, main

with instrumented():
    import sparsetorch as st
    from sparsetorch.utils.data import default_collate
    from sparsetorch.utils.data.collate import collate_id_lists

Pair = collections.namedtuple("Pair", "x y")
_DTYPES = [st.float32, st.float64, st.int64, st.bool]


def _leaf_spec(fdp):
    kind = fdp.ConsumeIntInRange(0, 9)
    shape = tuple(fdp.ConsumeIntInRange(0, 3) for _ in range(fdp.ConsumeIntInRange(0, 3)))
    return (kind, shape, _DTYPES[fdp.ConsumeIntInRange(0, 3)])


def _spec(fdp, depth=0):
    """The structure of one sample (a template that each sample instantiates)."""
    k = fdp.ConsumeIntInRange(0, 5) if depth < 3 else 0
    if k <= 1:
        return ("leaf", _leaf_spec(fdp))
    n = fdp.ConsumeIntInRange(0, 3)
    kids = [_spec(fdp, depth + 1) for _ in range(n)]
    return (["dict", "tuple", "list", "pair"][k - 2], kids if k != 5 else (kids + [("leaf", (6, (), st.int64))] * 2)[:2])


def _leaf(fdp, spec, rng):
    kind, shape, dt = spec
    if fdp.ConsumeIntInRange(0, 19) == 0:  # a sample that disagrees with the others
        shape = tuple(s + 1 for s in shape) + ((1,) if fdp.ConsumeBool() else ())
        kind = fdp.ConsumeIntInRange(0, 9)
    a = rng.integers(-2, 3, size=shape).astype(dt.np) * (rng.random(shape) < 0.5)
    if kind == 0 or kind == 1:
        return st.tensor(a)
    if kind == 2:
        return st.tensor(a).to_sparse() if a.ndim else st.tensor(a)
    if kind == 3:
        return st.tensor(a).to_sparse_csr() if a.ndim == 2 else st.tensor(a)
    if kind == 4:
        return a
    if kind == 5:
        return float(rng.normal())
    if kind == 6:
        return int(rng.integers(-5, 5))
    if kind == 7:
        return bool(rng.integers(0, 2))
    if kind == 8:
        return ["ab", b"cd", None, object(), np.array(["s"]), np.float32(1.5), 1j][fdp.ConsumeIntInRange(0, 6)]
    return st.tensor(a).requires_grad_(True) if dt.is_floating_point else st.tensor(a)


def _sample(fdp, spec, rng):
    tag, body = spec
    if tag == "leaf":
        return _leaf(fdp, body, rng)
    kids = [_sample(fdp, s, rng) for s in body]
    if tag == "dict":
        return {f"k{i}": v for i, v in enumerate(kids)}
    if tag == "pair":
        return Pair(*kids)
    return tuple(kids) if tag == "tuple" else kids


def _dense(x):
    if isinstance(x, st.Tensor):
        return (x.to_dense() if x.layout is not st.strided else x).detach().numpy()
    return np.asarray(x)


def _check(batch, out):
    """``out`` must hold ``batch``'s samples."""
    elem = batch[0]
    if len({type(b) for b in batch}) > 1:
        return  # a mixed field (e.g. floats and 1-element tensors, as torch.tensor takes them)
    if isinstance(elem, (st.Tensor, np.ndarray)) or type(elem) in (int, float, bool):
        if not isinstance(out, st.Tensor):
            raise Finding(f"leaf collated to {type(out).__name__}")
        want = np.stack([_dense(b) for b in batch])
        got = _dense(out)
        if got.shape != want.shape or not np.array_equal(got.astype(np.float64), want.astype(np.float64)):
            raise Finding(f"collated values differ: {got} vs {want}")
    elif isinstance(elem, dict):
        for k in elem:
            _check([b[k] for b in batch], out[k])
    elif isinstance(elem, (list, tuple)):
        for i, col in enumerate(zip(*batch)):
            _check(list(col), out[i])


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    rng = np.random.default_rng(fdp.ConsumeIntInRange(0, 2**32 - 1))
    if fdp.ConsumeIntInRange(0, 4) == 0:  # collate_id_lists
        lists = [[fdp.ConsumeIntInRange(-3, 9) for _ in range(fdp.ConsumeIntInRange(0, 4))]
                 for _ in range(fdp.ConsumeIntInRange(0, 4))]
        if fdp.ConsumeBool() and lists:
            lists[0] = [fdp.ConsumeFloat()] if fdp.ConsumeBool() else ["a", 1]  # ([[1, 2]] is a record)
        try:
            ids, offsets = collate_id_lists(lists)
        except Exception as e:  # noqa: BLE001
            check_exception(e)
            return
        flat = [v for lst in lists for v in lst]
        if ids.tolist() != flat or offsets.tolist() != list(np.cumsum([0] + [len(x) for x in lists[:-1]]))[:len(lists)]:
            raise Finding(f"collate_id_lists({lists}) -> {ids}, {offsets}")
        return
    spec = _spec(fdp)
    batch = [_sample(fdp, spec, rng) for _ in range(fdp.ConsumeIntInRange(1, 4))]
    try:
        out = default_collate(batch)
    except Exception as e:  # noqa: BLE001 - the point: classify every error
        check_exception(e)
        return
    with classified():
        _check(batch, out)


if __name__ == "__main__":
    main(TestOneInput)
