"""OpInfo rows for shape and view ops: view/reshape, transpose/permute, squeeze/unsqueeze,
expand, narrow/select/split, flip/roll/repeat, unfold, cat/stack and friends, broadcasting."""

import numpy as np

import sparsetorch as st

from ._core import FLOATS, INTS, ErrorInput, OpInfo, Sample, make

FLOAT_INT = FLOATS + INTS


def _one(*shapes_args):
    """Samples ``op(x, *args)`` for ``(shape, args, kwargs)`` triples."""
    def samples(dtype, rg):
        return [Sample((make(shape, dtype, rg, seed=i),) + tuple(args), dict(kw), name=f"{shape}{args}{kw}")
                for i, (shape, args, kw) in enumerate(shapes_args)]
    return samples


def _errors(*cases):
    """Error inputs for ``(shape, args, kwargs, error, regex)``."""
    def errors():
        return [ErrorInput(Sample((st.ones(shape),) + tuple(args), dict(kw)), err, rx)
                for shape, args, kw, err, rx in cases]
    return errors


def V(name, ref, samples, errors=None, *, method=True, inplace=None, dtypes=FLOAT_INT, op=None, **kw):
    return OpInfo(name=name, op=op or getattr(st, name, None) or getattr(st._ops, name), ref=ref, sample_inputs=samples,
                  dtypes=dtypes, error_inputs=errors, method=name if method is True else method,
                  inplace=inplace, **kw)


# ---- NumPy references ----

def _np_view(x, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return x.reshape(shape)


def _np_squeeze(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = dim if isinstance(dim, tuple) else (dim,)
    dims = tuple(d % max(x.ndim, 1) for d in dims if x.ndim and x.shape[d] == 1)
    return np.squeeze(x, axis=dims) if x.ndim else x


def _np_expand(x, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    lead = len(sizes) - x.ndim
    shape = [s if s != -1 else x.shape[i - lead] for i, s in enumerate(sizes)]
    return np.broadcast_to(x, shape)


def _np_flatten(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:])


def _np_narrow(x, dim, start, length):
    return np.take(x, np.arange(start % x.shape[dim] if start < 0 else start, (start % x.shape[dim] if start < 0 else start) + length), axis=dim)


def _np_split(x, size, dim=0):
    n = x.shape[dim]
    if isinstance(size, (list, tuple)):
        cuts = np.cumsum(size)[:-1]
    else:
        cuts = list(range(size, n, size))
    return np.split(x, cuts, axis=dim)


def _np_chunk(x, chunks, dim=0):
    n = x.shape[dim]
    return _np_split(x, -(-n // chunks), dim)


def _np_unbind(x, dim=0):
    return [np.take(x, i, axis=dim) for i in range(x.shape[dim])]


def _np_repeat(x, *sizes):
    return np.tile(x, sizes)


def _np_tile(x, dims):
    return np.tile(x, dims)


def _np_roll(x, shifts, dims=None):
    return np.roll(x, shifts, axis=dims)


def _np_unfold(x, dim, size, step):
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    return np.take(w, np.arange(0, w.shape[dim], step), axis=dim)


def _np_repeat_interleave(x, repeats, dim=None):
    return np.repeat(x, repeats, axis=dim)


def _np_cat(tensors, dim=0):
    live = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    return np.concatenate(live or tensors, axis=dim if live else 0)


def _np_atleast(f):
    def ref(*xs):
        r = f(*xs)
        return tuple(r) if isinstance(r, list) else r
    return ref


def _np_meshgrid(*xs, indexing="ij"):
    return np.meshgrid(*xs, indexing=indexing)


# ---- samples ----

def _cat_samples(dtype, rg):
    a, b = make((2, 3), dtype, rg, seed=1), make((2, 2), dtype, rg, seed=2)
    c = make((1, 3), dtype, rg, seed=3)
    e = make((0,), dtype, rg, seed=4)
    return [Sample(([a, b], 1), name="dim1"), Sample(([a, c, a],), name="dim0"),
            Sample(([a, b], -1), name="neg"), Sample(([a, e, c], 0), name="skip-empty-1d"),
            Sample(([make((4,), dtype, rg, seed=5)],), name="one"),
            Sample(([make((2, 0), dtype, rg, seed=6), b], 1), name="empty-2d")]


def _stack_samples(dtype, rg):
    a, b = make((2, 3), dtype, rg, seed=1), make((2, 3), dtype, rg, seed=2)
    s0, s1 = make((), dtype, rg, seed=3), make((), dtype, rg, seed=4)
    return [Sample(([a, b],), name="0"), Sample(([a, b], 2), name="last"), Sample(([a, b, a], -2), name="neg"),
            Sample(([s0, s1],), name="0-d")]


def _hv_samples(dtype, rg, zero_d=False):
    a, b = make((2, 3), dtype, rg, seed=1), make((2, 3), dtype, rg, seed=2)
    v, w = make((3,), dtype, rg, seed=3), make((3,), dtype, rg, seed=4)
    out = [Sample(([a, b],), name="2d"), Sample(([v, w],), name="1d")]
    if zero_d:
        out.append(Sample(([make((), dtype, rg, seed=5), v],), name="0d"))
    return out


def _h_samples(dtype, rg):
    return _hv_samples(dtype, rg, True)


def _atleast_samples(dtype, rg):
    return [Sample((make((), dtype, rg, seed=1),), name="0d"), Sample((make((3,), dtype, rg, seed=2),), name="1d"),
            Sample((make((2, 3), dtype, rg, seed=3),), name="2d"),
            Sample((make((2, 3, 2), dtype, rg, seed=4),), name="3d"),
            Sample((make((), dtype, rg, seed=5), make((3,), dtype, rg, seed=6)), name="several")]


def _meshgrid_samples(dtype, rg):
    a, b, c = make((2,), dtype, rg, seed=1), make((3,), dtype, rg, seed=2), make((4,), dtype, rg, seed=3)
    return [Sample((a, b)), Sample((a, b, c)), Sample((a, b), {"indexing": "xy"}), Sample((a, b, c), {"indexing": "xy"})]


def _broadcast_samples(dtype, rg):
    return [Sample((make((2, 1), dtype, rg, seed=1), make((3,), dtype, rg, seed=2))),
            Sample((make((), dtype, rg, seed=3), make((2, 3), dtype, rg, seed=4), make((1, 3), dtype, rg, seed=5)))]


def _ri_samples(dtype, rg):
    x = make((2, 3), dtype, rg, seed=1)
    return [Sample((x, 2), name="int-flat"), Sample((x, 2), {"dim": 1}, name="int-dim"),
            Sample((x, st.tensor([1, 0, 2])), {"dim": 1}, name="tensor"),
            Sample((x, st.tensor([3])), {"dim": 0}, name="one-count")]


def _view_as_samples(dtype, rg):
    return [Sample((make((2, 6), dtype, rg), st.ones(3, 4)), name="view_as"),
            Sample((make((2, 3), dtype, rg), st.ones(6)), name="flat")]


def _expand_as_samples(dtype, rg):
    return [Sample((make((3, 1), dtype, rg), st.ones(2, 3, 4)), name="expand_as")]


OPS = [
    V("view", _np_view, _one(((2, 6), (3, 4), {}), ((2, 6), (-1,), {}), ((2, 6), ((4, -1),), {}),
                             ((), (1, 1), {}), ((0, 3), (3, 0), {})),
      _errors(((2, 3), (2, 5), {}, RuntimeError, r"shape '\[2, 5\]' is invalid for input of size 6"),
              ((2, 3), (-1, -1), {}, RuntimeError, "only one dimension can be inferred"),
              ((2, 3), (2.0, 3), {}, TypeError, "must be a tuple of ints"))),
    V("view_as", lambda x, o: x.reshape(o.shape), _view_as_samples),
    V("reshape", _np_view, _one(((2, 6), (3, 4), {}), ((3, 4), ((-1,),), {}), ((2, 3, 2), (6, 2), {})),
      _errors(((2, 3), (-2, 3), {}, RuntimeError, "invalid shape dimension -2"))),
    V("reshape_as", lambda x, o: x.reshape(o.shape), _view_as_samples),
    V("transpose", lambda x, a, b: np.swapaxes(x, a, b) if x.ndim else x,
      _one(((2, 3), (0, 1), {}), ((2, 3, 4), (-1, 0), {}), ((), (0, -1), {})),
      _errors(((2, 3), (0, 2), {}, IndexError, "Dimension out of range")), inplace="transpose_"),
    V("swapaxes", lambda x, a, b: np.swapaxes(x, a, b), _one(((2, 3, 4), (0, 2), {}))),
    V("t", lambda x: x.T, _one(((2, 3), (), {}), ((3,), (), {}), ((), (), {})),
      _errors(((2, 3, 4), (), {}, RuntimeError, r"t\(\) expects a tensor with <= 2 dimensions")),
      inplace="t_"),
    V("permute", lambda x, *d: np.transpose(x, d[0] if len(d) == 1 else d),
      _one(((2, 3, 4), (2, 0, 1), {}), ((2, 3, 4), ((1, -1, 0),), {}), ((), (), {})),
      _errors(((2, 3), (0,), {}, RuntimeError, "does not match the length"),
              ((2, 3), (0, 0), {}, RuntimeError, "duplicate dims"))),
    V("movedim", lambda x, s, d: np.moveaxis(x, s, d),
      _one(((2, 3, 4), (0, 2), {}), ((2, 3, 4), ((0, 1), (2, 0)), {})),
      _errors(((2, 3), ((0, 1), (1,)), {}, RuntimeError, "same number of dims"))),
    V("squeeze", _np_squeeze, _one(((2, 1, 3, 1), (), {}), ((2, 1, 3), (1,), {}), ((2, 1, 3), (0,), {}),
                                   ((1, 2, 1), ((0, -1),), {}), ((), (), {})),
      _errors(((2, 3), (2,), {}, IndexError, "Dimension out of range")), inplace="squeeze_"),
    V("unsqueeze", np.expand_dims, _one(((2, 3), (0,), {}), ((2, 3), (-1,), {}), ((), (0,), {})),
      _errors(((2, 3), (3,), {}, IndexError, "Dimension out of range")), inplace="unsqueeze_"),
    V("expand", _np_expand, _one(((3, 1), (2, 3, 4), {}), ((3,), (2, -1), {}), ((1, 3), ((4, 3),), {}),
                                 ((), (2, 2), {})),
      _errors(((3,), (2, 4), {}, RuntimeError, "must match the existing size"),
              ((2, 3), (3,), {}, RuntimeError, "number of sizes provided"),
              ((3,), (-1, 3), {}, RuntimeError, "leading, non-existing dimension"))),
    V("expand_as", lambda x, o: np.broadcast_to(x, o.shape), _expand_as_samples),
    V("broadcast_to", lambda x, s: np.broadcast_to(x, s), _one(((3, 1), ((2, 3, 4),), {})), method=False),
    V("flatten", _np_flatten, _one(((2, 3, 4), (), {}), ((2, 3, 4), (1,), {}), ((2, 3, 4), (0, 1), {}),
                                   ((), (), {})),
      _errors(((2, 3, 4), (2, 1), {}, RuntimeError, "start_dim cannot come after end_dim"))),
    V("unflatten", lambda x, d, s: x.reshape(x.shape[:d] + tuple(s) + x.shape[d + 1:]),
      _one(((2, 12), (1, (3, 4)), {}), ((2, 12), (1, (3, -1)), {})),
      _errors(((2, 12), (1, (5, 2)), {}, RuntimeError, "don't multiply up to the size"))),
    V("ravel", np.ravel, _one(((2, 3), (), {}), ((), (), {}))),
    V("narrow", _np_narrow, _one(((5, 3), (0, 1, 3), {}), ((5, 3), (1, -2, 2), {}), ((5, 3), (0, 5, 0), {})),
      _errors(((5,), (0, 4, 2), {}, RuntimeError, r"start \(4\) \+ length \(2\) exceeds dimension size \(5\)"),
              ((5,), (0, 6, 0), {}, IndexError, "start out of range"),
              ((), (0, 0, 1), {}, RuntimeError, "0-dim"))),
    V("select", lambda x, d, i: np.take(x, i, axis=d), _one(((4, 3), (0, 1), {}), ((4, 3), (-1, -1), {})),
      _errors(((5,), (0, 5), {}, IndexError, r"index 5 out of range"),
              ((), (0, 0), {}, IndexError, "0-dim"))),
    V("split", _np_split, _one(((5, 2), (2,), {}), ((5, 2), ([1, 4],), {}), ((3, 4), (2, 1), {}),
                               ((0, 2), (2,), {})),
      _errors(((5,), ([2, 2],), {}, RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 5"),
              ((5,), (0,), {}, RuntimeError, "split_size can only be 0"),
              ((), (1,), {}, RuntimeError, "at least a 1-dimensional"))),
    V("chunk", _np_chunk, _one(((5, 2), (3,), {}), ((6,), (4,), {}), ((3, 4), (2, 1), {})),
      _errors(((5,), (0,), {}, RuntimeError, "greater than 0"))),
    V("unbind", _np_unbind, _one(((3, 2), (), {}), ((3, 2), (1,), {}), ((0, 2), (), {})),
      _errors(((), (), {}, IndexError, "no dimensions"))),
    V("flip", lambda x, *d: np.flip(x, d[0] if len(d) == 1 and isinstance(d[0], (tuple, list)) else d),
      _one(((2, 3), (0,), {}), ((2, 3, 4), ((0, 2),), {}), ((2, 3), (-1, 0), {}), ((), ((),), {})),
      _errors(((2, 3), (0, 0), {}, RuntimeError, "appears multiple times"))),
    V("fliplr", np.fliplr, _one(((2, 3), (), {})), _errors(((3,), (), {}, RuntimeError, ">= 2-d"))),
    V("flipud", np.flipud, _one(((2, 3), (), {})), _errors(((), (), {}, RuntimeError, ">= 1-d"))),
    V("roll", _np_roll, _one(((2, 3), (1,), {}), ((2, 3), ((1, -1), (0, 1)), {}), ((2, 3), (4, 1), {}),
                             ((0, 3), (1, 0), {})),
      _errors(((2, 3), ((1, 1), 0), {}, RuntimeError, "shifts and dimensions must align"))),
    V("repeat", _np_repeat, _one(((2, 3), (2, 2), {}), ((3,), (2, 1, 2), {}), ((), (3,), {})),
      _errors(((2, 3), (2,), {}, RuntimeError, "can not be smaller than number of dimensions"))),
    V("tile", _np_tile, _one(((2, 3), ((2,),), {}), ((3,), ((2, 2),), {}))),
    V("repeat_interleave", _np_repeat_interleave, _ri_samples,
      lambda: [ErrorInput(Sample((st.ones(2, 3), st.tensor([1, 2])), {"dim": 1}), RuntimeError,
                          "repeats must have the same size as input along dim"),
               ErrorInput(Sample((st.ones(3), -1)), RuntimeError, "non-negative")]),
    V("unfold", _np_unfold, _one(((7,), (0, 3, 2), {}), ((2, 7), (1, 2, 1), {}), ((6, 2), (0, 3, 3), {})),
      _errors(((7,), (0, 8, 2), {}, RuntimeError, "maximum size for tensor at dimension 0 is 7"),
              ((7,), (0, 3, 0), {}, RuntimeError, "step is 0 but must be > 0"))),
    V("cat", _np_cat, _cat_samples, lambda: [
        ErrorInput(Sample(([],)), ValueError, "expected a non-empty list"),
        ErrorInput(Sample(([st.ones(2, 3), st.ones(2, 2)], 0)), RuntimeError,
                   "Sizes of tensors must match except in dimension 0"),
        ErrorInput(Sample(([st.ones(2, 3), st.ones(3)],)), RuntimeError, "same number of dimensions"),
        ErrorInput(Sample(([st.tensor(1.0)],)), RuntimeError, "zero-dimensional tensor"),
        ErrorInput(Sample((st.ones(2),)), TypeError, "must be tuple of Tensors"),
        ErrorInput(Sample(([st.ones(2, 3)], 2)), IndexError, "Dimension out of range")], method=False),
    V("stack", lambda ts, dim=0: np.stack(ts, axis=dim), _stack_samples, lambda: [
        ErrorInput(Sample(([st.ones(2, 3), st.ones(3, 2)],)), RuntimeError, "stack expects each tensor to be equal size"),
        ErrorInput(Sample(([],)), RuntimeError, "non-empty")], method=False),
    V("hstack", lambda ts: np.hstack(ts), _h_samples, method=False),
    V("vstack", lambda ts: np.vstack(ts), _hv_samples, method=False),
    V("dstack", lambda ts: np.dstack(ts), _hv_samples, method=False),
    V("column_stack", lambda ts: np.column_stack(ts), _hv_samples, method=False),
    V("atleast_1d", _np_atleast(np.atleast_1d), _atleast_samples, method=False),
    V("atleast_2d", _np_atleast(np.atleast_2d), _atleast_samples, method=False),
    V("atleast_3d", _np_atleast(np.atleast_3d), _atleast_samples, method=False),
    V("broadcast_tensors", lambda *xs: np.broadcast_arrays(*xs), _broadcast_samples, method=False),
    V("meshgrid", _np_meshgrid, _meshgrid_samples, lambda: [
        ErrorInput(Sample((st.ones(2, 2),)), RuntimeError, "Expected 0D or 1D tensor"),
        ErrorInput(Sample((st.ones(2),), {"indexing": "foo"}), RuntimeError, "indexing must be one of")],
      method=False),
]
