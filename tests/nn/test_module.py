"""nn.Module behaviour: attribute routing, hooks, iteration, state_dict, modes, conversions,
containers, repr."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import sparsetorch as st
import sparsetorch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.BatchNorm1d(4))
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(st.ones(2))
        self.register_buffer("steps", st.tensor(0))
        self.register_buffer("cache", st.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.block(self.fc1(x))) * self.scale


# ---- attribute routing ----

def test_setattr_routes_into_dicts():
    m = Net()
    assert list(m._parameters) == ["scale"]
    assert list(m._modules) == ["fc1", "block", "fc2"]
    assert list(m._buffers) == ["steps", "cache"]
    assert m.scale is m._parameters["scale"] and m.fc1 is m._modules["fc1"]
    assert "scale" not in m.__dict__ and "fc1" not in m.__dict__
    # reassigning a name with another kind moves it between dicts
    m.fc1 = nn.Parameter(st.zeros(1))
    assert "fc1" in m._parameters and "fc1" not in m._modules
    with pytest.raises(TypeError, match="cannot assign 'Identity' as parameter 'scale'"):
        m.scale = nn.Identity()  # as torch: a parameter name only takes a Parameter or None
    m.block = nn.Parameter(st.zeros(1))
    assert "block" in m._parameters and "block" not in m._modules
    m.steps = st.tensor(5)  # assigning a tensor to a buffer name updates the buffer
    assert m._buffers["steps"].item() == 5


def test_setattr_errors():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(st.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Bad()
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'weight'"):
        m.weight = st.ones(2, 2)
    with pytest.raises(TypeError, match="parameter 'w'"):
        m.register_parameter("w", st.ones(2))
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("in_features", st.ones(1))
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        m.nope
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)


def test_register_parameter_none_and_delattr():
    m = nn.Linear(2, 2, bias=False)
    assert m.bias is None and "bias" in m._parameters
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert list(m.state_dict()) == ["weight"]
    m.bias = nn.Parameter(st.zeros(2))
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    del m.bias
    assert "bias" not in m._parameters
    m.register_buffer("b", st.ones(1))
    del m.b
    assert "b" not in m._buffers
    m.foo = 3
    del m.foo
    assert not hasattr(m, "foo")


def test_non_persistent_buffer_and_buffer_class():
    m = Net()
    assert "cache" not in m.state_dict() and "steps" in m.state_dict()
    assert [n for n, _ in m.named_buffers(recurse=False)] == ["steps", "cache"]
    m.extra = nn.Buffer(st.ones(3), persistent=False)
    assert "extra" in m._buffers and "extra" not in m.state_dict()


def test_dir_lists_members():
    m = Net()
    d = dir(m)
    assert "fc1" in d and "scale" in d and "steps" in d and "forward" in d


# ---- iteration ----

def test_named_parameters_modules_nested():
    m = Net()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "block.0.weight", "block.0.bias",
                     "block.2.weight", "block.2.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in m.named_parameters(prefix="net", recurse=False)] == ["net.scale"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "block", "block.0", "block.1",
                                                 "block.2", "fc2"]
    assert [n for n, _ in m.named_children()] == ["fc1", "block", "fc2"]
    assert len(list(m.modules())) == 7 and len(list(m.children())) == 3
    assert [n for n, _ in m.named_buffers()] == ["steps", "cache", "block.2.running_mean",
                                                 "block.2.running_var",
                                                 "block.2.num_batches_tracked"]
    assert len(list(m.parameters())) == 9 and len(list(m.buffers())) == 5


def test_shared_parameters_deduplicated():
    lin = nn.Linear(2, 2)
    m = nn.Sequential(lin, lin)
    assert len(list(m.parameters())) == 2
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "1.weight", "1.bias"]
    assert [n for n, _ in m.named_modules()] == ["", "0"]
    assert len(list(m.named_modules(remove_duplicate=False))) == 3


def test_torch_parity_names():
    torch = pytest.importorskip("torch")
    ours = Net()
    theirs = torch.nn.Sequential(OrderedDict(
        fc1=torch.nn.Linear(3, 4),
        block=torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.BatchNorm1d(4)),
        fc2=torch.nn.Linear(4, 2)))
    ours_sd = [k for k in ours.state_dict() if k not in ("scale", "steps")]
    assert ours_sd == list(theirs.state_dict())


# ---- hooks ----

def test_forward_hooks_order_and_results():
    log = []
    m = nn.Linear(2, 2)
    h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kw: log.append("prek"), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append("fwd"))
    m.register_forward_hook(lambda mod, args, kw, out: log.append("fwdk"), with_kwargs=True)
    m(st.ones(1, 2))
    assert log == ["pre0", "pre1", "prek", "fwd", "fwdk"]
    h1.remove()
    log.clear()
    m(st.ones(1, 2))
    assert log == ["pre0", "prek", "fwd", "fwdk"]


def test_hooks_replace_args_and_output():
    m = nn.Identity()
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    h = m.register_forward_hook(lambda mod, args, out: out + 1)
    assert m(st.tensor([1.0])).item() == 3.0
    h.remove()
    assert m(st.tensor([1.0])).item() == 2.0


def test_full_backward_hook():
    m = nn.Linear(3, 2)
    with st.no_grad():
        m.weight.copy_(st.tensor([[1.0, 2, 3], [4, 5, 6]]))
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    x = st.ones(1, 3, requires_grad=True)
    m(x).sum().backward()
    (gi, go), = seen
    assert go[0].tolist() == [[1.0, 1.0]]
    assert gi[0].tolist() == [[5.0, 7.0, 9.0]]
    # a hook may replace grad_input
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
    x = st.ones(1, 3, requires_grad=True)
    m(x).sum().backward()
    assert x.grad.tolist() == [[10.0, 14.0, 18.0]]
    # parameters still get their gradients
    assert m.weight.grad is not None


def test_full_backward_hook_no_input_grad():
    m = nn.Linear(3, 2)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(gi))
    m(st.ones(1, 3)).sum().backward()
    assert seen == [(None,)]


class _Mul(nn.Module):
    def forward(self, a, b, c=3):
        return a * b


def test_full_backward_hook_grad_input_per_argument():
    # torch: one grad_input entry per positional argument; every Tensor gets its gradient once
    # one input requires grad; non-Tensor arguments get None
    m = _Mul()
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(gi))
    a, b = st.full((2,), 3.0), st.ones(2, requires_grad=True)
    m(a, b, 5).sum().backward()
    (gi,) = seen
    assert len(gi) == 3 and gi[2] is None
    assert gi[0].tolist() == [1.0, 1.0] and gi[1].tolist() == [3.0, 3.0]
    assert b.grad.tolist() == [3.0, 3.0]
    seen.clear()
    m(st.ones(2), st.ones(2)).sum()  # nothing requires grad: no graph, no hook call
    assert seen == []


def test_always_call_forward_hook_runs_when_forward_raises():
    m = _Mul()
    log = []
    m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("plain", out)))
    with pytest.raises(TypeError):
        m(st.ones(2), "x")
    assert log == [("always", None)]
    log.clear()
    m(st.ones(2), st.ones(2))
    assert [k for k, _ in log] == ["always", "plain"]


def test_always_call_hook_error_is_a_warning_when_forward_raised():
    m = _Mul()

    def bad(mod, args, out):
        raise ValueError("hook failed too")

    m.register_forward_hook(bad, always_call=True)
    with pytest.warns(UserWarning, match="hook failed too"), pytest.raises(TypeError):
        m(st.ones(2), "x")


# ---- state_dict ----

def test_state_dict_round_trip():
    a, b = Net(), Net()
    a.steps = st.tensor(7)
    sd = a.state_dict()
    assert all(not v.requires_grad for v in sd.values())
    w_obj = b.fc1.weight
    res = b.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    assert b.fc1.weight is w_obj  # copied into the existing tensor
    for k, v in b.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), sd[k].numpy())
    assert b.steps.item() == 7
    assert a.state_dict(keep_vars=True)["scale"] is a.scale


def test_state_dict_strict_missing_unexpected():
    m = Net()
    sd = m.state_dict()
    del sd["fc1.bias"]
    sd["fc3.weight"] = st.zeros(1)
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "fc1.bias"'):
        m.load_state_dict(sd)
    with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "fc3.weight"'):
        m.load_state_dict(sd)
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["fc1.bias"] and res.unexpected_keys == ["fc3.weight"]
    missing, unexpected = res
    assert missing == ["fc1.bias"]


def test_state_dict_shape_mismatch():
    m = nn.Linear(3, 4)
    sd = nn.Linear(3, 5).state_dict()
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        m.load_state_dict(sd)


def test_state_dict_sparse_keeps_layout():
    m = nn.Module()
    i = st.tensor([[0, 1], [1, 0]])
    m.register_buffer("s", st.sparse_coo_tensor(i, st.tensor([1.0, 2.0]), (2, 2)))
    sd = m.state_dict()
    assert sd["s"].layout is st.sparse_coo
    m2 = nn.Module()
    m2.register_buffer("s", st.sparse_coo_tensor(st.tensor([[0], [0]]), st.tensor([5.0]), (2, 2)))
    m2.load_state_dict(sd)
    assert m2.s.layout is st.sparse_coo
    np.testing.assert_array_equal(m2.s.to_dense().numpy(), [[0, 1], [2, 0]])


# ---- modes, grads, conversions ----

def test_train_eval_propagates():
    m = Net()
    assert m.training and m.block[2].training
    assert m.eval() is m
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    with pytest.raises(ValueError):
        m.train("yes")


def test_zero_grad_and_requires_grad():
    m = Net()
    m(st.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and (p.grad.numpy() == 0).all() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_to_double_and_apply():
    m = Net()
    params = list(m.parameters())
    m(st.randn(5, 3)).sum().backward()
    assert m.double() is m
    assert all(p.dtype is st.float64 for p in m.parameters())
    assert all(p.grad.dtype is st.float64 for p in m.parameters())
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]  # objects kept
    assert m.steps.dtype is st.int64  # integer buffers keep their dtype
    assert m(st.randn(5, 3, dtype=st.float64)).dtype is st.float64
    m.to(st.float32)
    assert m.fc1.weight.dtype is st.float32
    m.to("cpu").cpu().float()
    m.to(st.zeros(1, dtype=st.float64))
    assert m.fc1.weight.dtype is st.float64
    with pytest.raises(TypeError, match="floating point"):
        m.to(st.int32)
    order = []
    m.apply(lambda mod: order.append(type(mod).__name__))
    assert order == ["Linear", "Linear", "ReLU", "BatchNorm1d", "Sequential", "Linear", "Net"]


def test_deepcopy_and_pickle():
    m = Net()
    m2 = copy.deepcopy(m)
    assert m2.fc1.weight is not m.fc1.weight
    assert isinstance(m2.fc1.weight, nn.Parameter)
    np.testing.assert_array_equal(m2.fc1.weight.detach().numpy(), m.fc1.weight.detach().numpy())
    m3 = pickle.loads(pickle.dumps(m))
    assert isinstance(m3.scale, nn.Parameter) and m3.scale.requires_grad


def test_parameter_basics():
    t = st.randn(2, 3)
    p = nn.Parameter(t)
    assert p.requires_grad and p.is_leaf and isinstance(p, st.Tensor)
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert type(p * 2) is st.Tensor
    assert nn.Parameter().shape == (0,)


# ---- containers ----

def test_sequential():
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(s) == 3 and isinstance(s[-1], nn.Linear)
    sub = s[1:]
    assert isinstance(sub, nn.Sequential) and len(sub) == 2
    assert [type(x).__name__ for x in s] == ["Linear", "ReLU", "Linear"]
    s.append(nn.Sigmoid())
    assert len(s) == 4 and s(st.randn(5, 2)).shape == (5, 1)
    del s[1]
    assert list(s._modules) == ["0", "1", "2"]
    od = nn.Sequential(OrderedDict([("a", nn.Linear(2, 2)), ("b", nn.Tanh())]))
    assert od.a is od[0] and list(dict(od.named_children())) == ["a", "b"]
    with pytest.raises(IndexError):
        s[10]


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    ml.insert(0, nn.Identity())
    assert len(ml) == 6 and isinstance(ml[0], nn.Identity) and isinstance(ml[-1], nn.Tanh)
    assert len(list(ml.parameters())) == 6
    assert "(1-3): 3 x Linear" in repr(ml)
    md = nn.ModuleDict({"a": nn.Linear(2, 2)})
    md["b"] = nn.ReLU()
    md.update([("c", nn.Tanh())])
    assert list(md.keys()) == ["a", "b", "c"] and "a" in md and len(md) == 3
    assert md.pop("b").__class__ is nn.ReLU and len(md) == 2


def test_parameter_list_and_dict():
    pl = nn.ParameterList([nn.Parameter(st.ones(2)), st.zeros(3)])
    assert len(pl) == 2 and isinstance(pl[1], nn.Parameter)
    pl.append(st.ones(1))
    assert len(list(pl.parameters())) == 3
    assert list(pl.state_dict()) == ["0", "1", "2"]
    pd = nn.ParameterDict({"w": st.ones(2)})
    pd["b"] = nn.Parameter(st.zeros(1))
    assert isinstance(pd["w"], nn.Parameter) and list(pd.keys()) == ["w", "b"]
    assert [n for n, _ in pd.named_parameters()] == ["w", "b"]


def test_repr_matches_torch():
    torch = pytest.importorskip("torch")

    def build(lib):
        n = lib.nn
        m = n.Sequential(n.Linear(3, 4), n.ReLU(inplace=True), n.LeakyReLU(), n.ELU(),
                         n.GELU(approximate="tanh"), n.SiLU(), n.Softmax(dim=1), n.LogSoftmax(1),
                         n.Softplus(), n.Dropout(0.2), n.LayerNorm(4), n.BatchNorm1d(4),
                         n.BatchNorm2d(4, momentum=None, affine=False), n.Flatten(),
                         n.Unflatten(1, (2, 2)), n.Bilinear(2, 3, 4, bias=False),
                         n.ModuleList([n.Identity(), n.Sigmoid(), n.Sigmoid()]),
                         n.ModuleDict({"a": n.Tanh()}), n.CrossEntropyLoss(), n.MSELoss())
        m.pl = n.ParameterList([n.Parameter(lib.zeros(2, 3))])
        return m

    assert repr(build(st)).replace("sparsetorch", "torch") == repr(build(torch))


def test_load_state_dict_assign_and_dense_from_sparse():
    m = nn.Linear(2, 2)
    w = st.tensor([[1.0, 0.0], [0.0, 2.0]])
    sd = {"weight": w.to_sparse(), "bias": st.zeros(2)}
    obj = m.weight
    m.load_state_dict(sd)
    assert m.weight is obj and m.weight.layout is st.strided
    np.testing.assert_array_equal(m.weight.detach().numpy(), w.numpy())
    new_w = st.ones(2, 2)
    m.load_state_dict({"weight": new_w, "bias": st.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert m.weight is not obj and (m.weight.detach().numpy() == 1).all()


def test_state_dict_hooks():
    m = nn.Linear(2, 2)
    log = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append("pre"))
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(sorted(sd)))
    m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *rest: log.append("load_pre"))
    m.register_load_state_dict_post_hook(lambda mod, keys: log.append(tuple(keys)))
    m.load_state_dict(m.state_dict())
    assert log == ["pre", ["bias", "weight"], "load_pre", ([], [])]


def test_state_dict_metadata_versions():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    sd = m.state_dict()
    assert sd._metadata[""] == {"version": 1} and sd._metadata["1"] == {"version": 2}


def test_batchnorm_loads_checkpoint_without_num_batches_tracked():
    # torch: version-1 checkpoints (no _metadata, no num_batches_tracked) load strictly
    src = nn.BatchNorm1d(3)
    src.num_batches_tracked.fill_(5)
    old = {k: v for k, v in src.state_dict().items() if k != "num_batches_tracked"}
    dst = nn.BatchNorm1d(3)
    dst.num_batches_tracked.fill_(9)
    r = dst.load_state_dict(old)
    assert r.missing_keys == [] and r.unexpected_keys == []
    assert dst.num_batches_tracked.item() == 0
    # with version-2 metadata the key is required
    new = src.state_dict()
    del new["num_batches_tracked"]
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        nn.BatchNorm1d(3).load_state_dict(new)
