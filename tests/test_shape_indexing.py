"""Shape/view and indexing semantics: shared memory and versions, view rules, getitem/setitem
with autograd (CopySlices), gradient accumulation, in-place metadata ops, and parity with torch."""

import numpy as np
import pytest

import sparsetorch as st


def arange(*shape, dtype=st.float32):
    n = int(np.prod(shape)) if shape else 1
    return st.arange(n, dtype=dtype).reshape(shape)


# ---- views share memory and the version counter ----

def test_view_shares_memory_and_version():
    x = arange(4, 4).clone()
    v = x.view(-1, 8)
    assert v.shape == (2, 8) and v._base is x
    v[0, 0] = 100.0
    assert x[0, 0].item() == 100.0
    assert x._version == v._version == 1
    x.add_(1)
    assert v[0, 0].item() == 101.0 and v._version == 2


@pytest.mark.parametrize("make_view", [
    lambda x: x[:, 1], lambda x: x[1], lambda x: x.t(), lambda x: x.transpose(0, 1),
    lambda x: x.view(12), lambda x: x.reshape(2, 6), lambda x: x.narrow(1, 1, 2),
    lambda x: x.select(0, 2), lambda x: x.unsqueeze(0), lambda x: x[None, ..., None].squeeze(),
    lambda x: x.permute(1, 0), lambda x: x.split(2)[1], lambda x: x.chunk(2, 1)[0],
    lambda x: x.unbind(1)[3], lambda x: x.unfold(1, 2, 1), lambda x: x.flatten(),
    lambda x: x[::2, 1:3], lambda x: x.movedim(0, 1), lambda x: x.unflatten(1, (2, 2)),
])
def test_basic_views_write_through(make_view):
    x = arange(3, 4)
    v = make_view(x)
    assert np.shares_memory(v.numpy(), x.numpy())
    before = x.clone()
    v.mul_(0)
    assert x._version == 1 and v._version == 1
    assert (x == 0).sum().item() > (before == 0).sum().item()


def test_view_incompatible_strides_raises_reshape_copies():
    x = arange(2, 3).t()
    with pytest.raises(RuntimeError, match=r"view size is not compatible.*Use \.reshape"):
        x.view(6)
    r = x.reshape(6)
    assert r.tolist() == [0, 3, 1, 4, 2, 5]
    assert not np.shares_memory(r.numpy(), x.numpy())
    r[0] = 7
    assert x[0, 0].item() == 0 and x._version == 0


def test_view_forms_and_dtype():
    x = arange(2, 6)
    assert x.view(3, 4).shape == x.view((3, 4)).shape == x.view([3, -1]).shape == (3, 4)
    assert x.view(st.Size([12])).shape == (12,)
    assert x.view(st.int32).dtype is st.int32
    assert x.view(st.float16).shape == (2, 12)


def test_advanced_index_is_a_copy():
    x = arange(3, 4)
    y = x[[0, 2]]
    y.zero_()
    assert x.sum().item() == 66 and x._version == 0


def test_expanded_views_are_read_only():
    e = st.zeros(3).expand(2, 3)
    assert e.stride() == (0, 1)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e.add_(1)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e[0] = 1.0


def test_strides_contiguity_data_ptr():
    x = arange(2, 3)
    assert x.stride() == (3, 1) and x.t().stride() == (1, 3) and x.stride(-1) == 1
    assert x.is_contiguous() and not x.t().is_contiguous()
    assert x[1].data_ptr() == x.data_ptr() + 3 * 4
    assert x.t().contiguous().is_contiguous()


def test_inplace_metadata_ops():
    x = arange(2, 3)
    r = x.t_()
    assert r is x and x.shape == (3, 2) and x._version == 1
    x.unsqueeze_(0)
    assert x.shape == (1, 3, 2)
    x.squeeze_()
    assert x.shape == (3, 2)
    x.transpose_(0, 1)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
    leaf = st.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.t_()
    a = leaf * 2
    a.t_()
    (a * st.tensor([[1.0, 2.0]])).sum().backward()
    assert leaf.grad.tolist() == [[2, 2, 2], [4, 4, 4]]


def test_index_forms():
    x = arange(2, 3)
    assert x[()]._base is x._base and x[()].shape == (2, 3)
    assert x[np.array([1, 0])].tolist() == [[3, 4, 5], [0, 1, 2]]
    assert x[:, np.array([True, False, True])].tolist() == [[0, 2], [3, 5]]
    assert x[st.tensor(1)]._base is x._base  # a 0-d integer index acts like an int: a view
    assert x[[]].shape == (0, 3)
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        x[st.tensor([0, 2])] = 1.0
    assert x._version == 0  # a failed write changes nothing


def test_index_put_accumulates_in_place_without_grad():
    w = st.zeros(3, requires_grad=True)
    with st.no_grad():
        w.index_put_((st.tensor([0, 0, 2]),), st.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert w.tolist() == [3.0, 0.0, 3.0] and w._version == 1


# ---- autograd through indexing ----

def test_repeated_indices_accumulate():
    w = st.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = w[st.tensor([0, 0, 2, 0])]
    (y * st.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert w.grad.tolist() == [7.0, 0.0, 3.0]
    w.grad = None
    w[[1, 1]].sum().backward()
    assert w.grad.tolist() == [0.0, 2.0, 0.0]


def test_setitem_gives_value_a_gradient():
    w = st.tensor([1.0, 2.0], requires_grad=True)
    x = st.zeros(3)
    x[1] = w[0] * 3
    x[2] = w[1]
    (x * st.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert w.grad.tolist() == [6.0, 3.0]


def test_setitem_broadcast_value_gradient_is_summed():
    v = st.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = st.zeros(4, 3)
    x[1:3] = v
    x.sum().backward()
    assert v.grad.tolist() == [2.0, 2.0, 2.0]


def test_setitem_on_leaf_requiring_grad_raises():
    w = st.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w[0] = 1.0
    with st.no_grad():
        w[0] = 1.0
    assert w.tolist() == [1.0, 0.0, 0.0] and w.grad_fn is None


def test_copy_slices_inplace_on_view():
    leaf = arange(2, 3).requires_grad_()
    a = leaf.clone()
    v = a[0]
    v.mul_(2)
    assert a.tolist() == [[0, 2, 4], [3, 4, 5]]
    a.sum().backward()
    assert leaf.grad.tolist() == [[2, 2, 2], [1, 1, 1]]


def test_setitem_casts_value():
    x = st.zeros(3, dtype=st.int64)
    x[0] = 2.7
    x[1] = st.tensor(3.9)
    assert x.tolist() == [2, 3, 0]
    y = st.zeros(3)
    y[0] = st.tensor(5, dtype=st.int64)
    y[1:] = 2
    assert y.tolist() == [5.0, 2.0, 2.0] and y.dtype is st.float32
    with pytest.raises(TypeError, match="can't assign a list"):
        y[0] = [1.0]
    with pytest.raises(RuntimeError, match="shape mismatch"):
        y[1:] = st.ones(3)


def test_double_backward_through_getitem():
    from sparsetorch.autograd import gradgradcheck

    x = arange(3, 4, dtype=st.float64).requires_grad_()
    idx = st.tensor([0, 2, 2])
    assert gradgradcheck(lambda t: (t[idx, 1:] ** 2), (x,))
    assert gradgradcheck(lambda t: (t[1] ** 3), (x,))


# ---- parity with torch ----

torch = pytest.importorskip("torch")


def _to_torch(x):
    if isinstance(x, st.Tensor):
        return torch.from_numpy(np.array(x.detach().numpy()))
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(v) for v in x)
    return x


def _compare(a, b):
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            _compare(x, y)
        return
    if isinstance(b, torch.Tensor):
        assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
        assert a.dtype.name == str(b.dtype).split(".")[1], (a.dtype, b.dtype)
        np.testing.assert_allclose(a.detach().numpy().astype(np.float64),
                                   b.detach().numpy().astype(np.float64), rtol=1e-6, atol=1e-6)
    else:
        assert a == b


def _lib_key(lib, key):
    out = []
    for k in key:
        if isinstance(k, np.ndarray):
            out.append(lib.tensor(k.tolist(), dtype=lib.bool if k.dtype == bool else lib.int64))
        else:
            out.append(k)
    return tuple(out)


_KEYS = [
    (0, slice(None), np.array([0, 1])), (np.array([0, 1]), slice(None), np.array([0, 1])),
    (slice(None), 0, np.array([0, 1])), (Ellipsis, np.array([0, 1]), 0), (np.array([1, 0]), Ellipsis, 1),
    (0, np.array([0, 1]), None), (None, 0, np.array([0, 1])), (np.array([0, 1]), 0, None),
    (slice(None), np.array([0, 1]), 1, None), (np.array([[0], [1]]), slice(1, None), np.array([0, 3])),
    (None, np.array([0, 1]), None, np.array([0, 1])), (np.array([0, 1]), None, np.array([0, 1])),
    (0, np.array([True, False, True]), slice(None)), (np.array([True, False]), 0),
    (1, slice(None, None, 2), np.array([3, 3, 0])), (slice(0, 1), np.array([2]), np.array([[1], [2]])),
    (np.array([[True, False, True], [False, True, True]]),), (0, Ellipsis, np.array([1, 1])),
    (-1, -2, -3), (slice(1, None), None, Ellipsis, None), (np.array(1), np.array([0, 2])),
    (np.array(1), slice(0, 2)),
]


@pytest.mark.parametrize("key", _KEYS, ids=[str(i) for i in range(len(_KEYS))])
def test_getitem_setitem_match_torch(key):
    data = np.arange(24.0).reshape(2, 3, 4)
    xs = st.tensor(data, dtype=st.float64, requires_grad=True)
    xt = torch.tensor(data, requires_grad=True)
    ys, yt = xs[_lib_key(st, key)], xt[_lib_key(torch, key)]
    _compare(ys, yt)
    w = np.arange(1.0, 1.0 + yt.numel()).reshape(tuple(yt.shape))
    (ys * st.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    _compare(xs.grad, xt.grad)
    # setitem with a value that requires grad
    vs = st.tensor(w, dtype=st.float64, requires_grad=True)
    vt = torch.tensor(w, requires_grad=True)
    a, b = (xs * 1).detach().clone(), (xt * 1).detach().clone()
    a[_lib_key(st, key)] = vs * 2
    b[_lib_key(torch, key)] = vt * 2
    _compare(a, b)
    (a * a).sum().backward()
    (b * b).sum().backward()
    if len(set(map(str, key))) == len(key) and not any(isinstance(k, np.ndarray) and k.size > 2 for k in key):
        _compare(vs.grad, vt.grad)  # repeated writes: which value wins is unspecified in torch


def _case(name, fn, grad=True):
    return pytest.param(fn, grad, id=name)


_CASES = [
    _case("narrow", lambda L, x: x.narrow(1, -3, 2)),
    _case("split", lambda L, x: x.split([1, 2], 1)),
    _case("chunk", lambda L, x: x.chunk(3, -1)),
    _case("unbind", lambda L, x: x.unbind(0)),
    _case("expand", lambda L, x: x[:, :1].expand(3, 2, 2, -1)),
    _case("expand_as", lambda L, x: x[0:1].expand_as(L.ones(4, 3, 4))),
    _case("repeat", lambda L, x: x.repeat(2, 1, 1, 2)),
    _case("tile", lambda L, x: x.tile((2,))),
    _case("roll", lambda L, x: x.roll((1, -2), (0, 2))),
    _case("roll-flat", lambda L, x: x.roll(5)),
    _case("flip", lambda L, x: x.flip(0, 2)),
    _case("unfold", lambda L, x: x.unfold(2, 2, 1)),
    _case("unfold-step", lambda L, x: x.unfold(1, 2, 2)),
    _case("movedim", lambda L, x: x.movedim((0, 1), (2, 0))),
    _case("squeeze-tuple", lambda L, x: x[:, :1, :1].squeeze((1, 2))),
    _case("repeat_interleave", lambda L, x: x.repeat_interleave(L.tensor([1, 0, 2]), dim=1)),
    _case("repeat_interleave-flat", lambda L, x: x.repeat_interleave(2)),
    _case("cat-promote", lambda L, x: L.cat([x, x[:1].double(), L.zeros(0)], 0)),
    _case("stack", lambda L, x: L.stack([x, x * 2], -1)),
    _case("hstack", lambda L, x: L.hstack([x, x])),
    _case("vstack", lambda L, x: L.vstack([x[0], x[1]])),
    _case("dstack", lambda L, x: L.dstack([x[0, 0], x[1, 0]])),
    _case("column_stack", lambda L, x: L.column_stack([x[0, :, 0], x[1]])),
    _case("meshgrid-xy", lambda L, x: L.meshgrid(x[0, 0], x[1, 1, :2], indexing="xy")),
    _case("broadcast_tensors", lambda L, x: L.broadcast_tensors(x[:, :1], x[0])),
    _case("atleast_3d", lambda L, x: L.atleast_3d(x[0, 0], x[0])),
    _case("take", lambda L, x: x.take(L.tensor([[0, -1], [5, 5]]))),
    _case("take_along_dim", lambda L, x: x.take_along_dim(L.tensor([[[0], [3], [1]]]), 2)),
    _case("gather", lambda L, x: x.gather(2, L.tensor([[[0, 0], [3, 1], [2, 2]]]))),
    _case("index_select", lambda L, x: x.index_select(1, L.tensor([2, 2, 0]))),
    _case("index_add", lambda L, x: x.index_add(1, L.tensor([2, 2]), x[:, :2] * 3, alpha=2)),
    _case("index_copy", lambda L, x: x.index_copy(2, L.tensor([3, 0]), x[..., 1:3] * 2)),
    _case("index_fill", lambda L, x: x.index_fill(2, L.tensor([1, -1]), -2.5)),
    _case("index_fill-tensor", lambda L, x: x.index_fill(2, L.tensor([1, 1]), x[0, 0, 0] * 2)),
    _case("masked_fill", lambda L, x: x.masked_fill(x > 10, 0.5)),
    _case("masked_fill-tensor", lambda L, x: x.masked_fill(x > 10, x[0, 0, 1] * 3)),
    _case("masked_select", lambda L, x: x.masked_select(L.tensor([True, False, True, True]))),
    _case("masked_scatter", lambda L, x: x.masked_scatter(x > 15, x[0] * 10)),
    _case("scatter", lambda L, x: x.scatter(2, L.tensor([[[3, 1]], [[0, 2]]]), x[:, :1, :2] * 2)),
    _case("scatter-value", lambda L, x: x.scatter(2, L.tensor([[[3, 1]], [[0, 2]]]), 9.0)),
    _case("scatter_add", lambda L, x: x.scatter_add(1, L.tensor([[[2, 2, 2, 2]], [[0, 0, 1, 1]]]), x[:, :1] * 2)),
    _case("index_put-acc", lambda L, x: x.index_put((L.tensor([1, 1, 0]), L.tensor([2, 2, 0])), x[0] * 1, True)),
    _case("nonzero", lambda L, x: (x > 12).nonzero(), False),
    _case("nonzero-tuple", lambda L, x: (x > 12).nonzero(as_tuple=True), False),
    _case("argwhere", lambda L, x: L.argwhere(x[0] > 5), False),
    _case("repeat_interleave-counts", lambda L, x: L.repeat_interleave(L.tensor([2, 0, 1])), False),
] + [
    _case(f"scatter_reduce-{r}-{inc}",
          lambda L, x, r=r, inc=inc: x.scatter_reduce(2, L.tensor([[[0, 0, 3]], [[1, 1, 1]]]), x[:, :1, 1:] * 1.5,
                                                      r, include_self=inc))
    for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)
]


@pytest.mark.parametrize("fn,grad", _CASES)
def test_ops_match_torch(fn, grad):
    data = np.arange(24.0).reshape(2, 3, 4) - 7
    xs = st.tensor(data, dtype=st.float64, requires_grad=grad)
    xt = torch.tensor(data, requires_grad=grad)
    rs, rt = fn(st, xs), fn(torch, xt)
    _compare(rs, rt)
    if not grad:
        return
    outs_s = rs if isinstance(rs, tuple) else (rs,)
    outs_t = rt if isinstance(rt, tuple) else (rt,)
    total_s = sum(((o.double() * (i + 1) * st.arange(o.numel(), dtype=st.float64).reshape(tuple(o.shape))).sum()
                   for i, o in enumerate(outs_s)), st.tensor(0.0, dtype=st.float64))
    total_t = sum(((o.double() * (i + 1) * torch.arange(o.numel(), dtype=torch.float64).reshape(o.shape)).sum()
                   for i, o in enumerate(outs_t)), torch.tensor(0.0, dtype=torch.float64))
    total_s.backward()
    total_t.backward()
    _compare(xs.grad, xt.grad)


_ERRORS = [
    lambda L: L.zeros(2, 3)[L.tensor([1.0])],
    lambda L: L.zeros(2, 3)[:, 3],
    lambda L: L.zeros(2, 3)[0, 0, 0],
    lambda L: L.zeros(3)[::-1],
    lambda L: L.zeros(2, 3).view(4),
    lambda L: L.zeros(2, 3).t().view(6),
    lambda L: L.zeros(2, 3, 4).t(),
    lambda L: L.zeros(3).expand(2, 4),
    lambda L: L.zeros(2, 3).permute(0, 0),
    lambda L: L.zeros(5).narrow(0, 4, 2),
    lambda L: L.zeros(5).select(0, 5),
    lambda L: L.cat([L.zeros(2, 3), L.zeros(2, 2)]),
    lambda L: L.cat([]),
    lambda L: L.stack([L.zeros(2), L.zeros(3)]),
    lambda L: L.zeros(2, 3).gather(1, L.tensor([[0, 5]])),
    lambda L: L.zeros(2, 3).gather(1, L.tensor([[0, 1]]).short()),
    lambda L: L.zeros(2, 3).index_select(0, L.tensor([2])),
    lambda L: L.zeros(2, 3).index_fill(1, L.tensor([5]), 1.0),
    lambda L: L.zeros(2, 3).index_copy(0, L.tensor([-1]), L.ones(1, 3)),
    lambda L: L.zeros(2, 3).take(L.tensor([6])),
    lambda L: L.zeros(2, 3).masked_fill(L.tensor([1, 0, 1]), 1.0),
    lambda L: L.zeros(2, 3).scatter(1, L.tensor([[0, 0]]), L.ones(2, 3).double()),
    lambda L: L.zeros(2, 3).unbind(2),
    lambda L: L.zeros(()).unbind(),
    lambda L: L.zeros(2, 3).flip(0, 0),
    lambda L: L.zeros(2, 3).split([1, 1], 1),
    lambda L: L.zeros(2, 3).unfold(1, 4, 1),
    lambda L: L.zeros(2, 3).repeat(2),
    lambda L: L.broadcast_tensors(L.zeros(2, 2), L.zeros(3)),
]


@pytest.mark.parametrize("fn", _ERRORS, ids=[str(i) for i in range(len(_ERRORS))])
def test_error_types_match_torch(fn):
    with pytest.raises(Exception) as et:
        fn(torch)
    with pytest.raises(Exception) as es:
        fn(st)
    assert type(es.value) is type(et.value), (es.value, et.value)


@pytest.mark.parametrize("shape,fn", [
    ((2, 3), lambda x: x.t()), ((2, 3, 4), lambda x: x.permute(2, 0, 1)), ((2, 3), lambda x: x[:, 1]),
    ((2, 3), lambda x: x.unsqueeze(1)), ((3,), lambda x: x.expand(2, 3)), ((4, 5), lambda x: x[::2, 1::2]),
    ((7,), lambda x: x.unfold(0, 3, 2)), ((2, 3), lambda x: x[:, None]), ((2, 3), lambda x: x[None, ..., None]), ((2, 3), lambda x: x.view(3, 2)), ((2, 1, 3), lambda x: x.squeeze(1)),
])
def test_strides_match_torch(shape, fn):
    a = fn(arange(*shape))
    b = fn(torch.arange(float(np.prod(shape))).reshape(shape))
    assert a.stride() == b.stride() and a.is_contiguous() == b.is_contiguous()
