"""torch's warnings where torch warns: same category, same text (checked against torch when installed)."""

import subprocess
import sys
import warnings

import pytest

import sparsetorch as torch
from sparsetorch.nn import functional as F
from sparsetorch.optim import lr_scheduler as S


def _caught(fn):
    """(category name, message) of every warning ``fn()`` raises."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(x.category.__name__, str(x.message)) for x in w]


def _same_as_torch(case):
    """The warnings of ``case(mod)`` for sparsetorch equal torch's (torch's C++ warnings end with a
    '(Triggered internally at ...)' note that has no meaning here, so it is cut off)."""
    th = pytest.importorskip("torch")
    ours = _caught(lambda: case(torch))
    theirs = [(c, m.split(" (Triggered internally at ")[0]) for c, m in _caught(lambda: case(th))]
    assert ours == theirs
    return ours


# ---- nn.functional: the deprecated size_average / reduce pair names the reduction it maps to ----

@pytest.mark.parametrize("kw, reduction", [({"reduce": False}, "none"), ({"size_average": False}, "sum"),
                                          ({"size_average": True, "reduce": True}, "mean")])
def test_legacy_reduction_names_the_equivalent_reduction(kw, reduction):
    with pytest.warns(UserWarning, match=f"please use reduction='{reduction}' instead"):
        F.mse_loss(torch.ones(2), torch.zeros(2), **kw)


@pytest.mark.parametrize("kw", [{"reduce": False}, {"size_average": False}])
def test_legacy_reduction_as_torch(kw):
    got = _same_as_torch(lambda m: m.nn.functional.l1_loss(m.ones(2), m.zeros(2), **kw))
    assert len(got) == 1


# ---- lr_scheduler: step order, the epoch argument, get_lr() ----

def _opt_sched(mod):
    p = mod.zeros(2, requires_grad=True)
    opt = mod.optim.SGD([p], lr=0.1)
    return opt, mod.optim.lr_scheduler.StepLR(opt, step_size=1)


def test_scheduler_step_before_optimizer_step_warns():
    _, sch = _opt_sched(torch)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before "
                                         r"`optimizer.step\(\)`"):
        sch.step()
    assert _caught(sch.step) == []  # only the first step is checked, as in torch


def test_scheduler_in_the_right_order_is_silent():
    opt, sch = _opt_sched(torch)
    for _ in range(3):
        opt.step()
        assert _caught(sch.step) == []
    assert sch.get_last_lr() == pytest.approx([0.1 * 0.1 ** 3])
    # the wrapped step is still the optimizer's step: same name, doc, closure argument
    assert opt.step.__name__ == "step" and opt.step(lambda: 3.0) == 3.0


def test_scheduler_step_overridden_after_init_warns():
    opt, sch = _opt_sched(torch)
    opt.step = lambda closure=None: None
    with pytest.warns(UserWarning, match=r"Seems like `optimizer.step\(\)` has been overridden"):
        sch.step()


def test_scheduler_epoch_argument_deprecated():
    opt, sch = _opt_sched(torch)
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        sch.step(3)
    assert sch.last_epoch == 3
    plateau = S.ReduceLROnPlateau(opt)
    with pytest.warns(UserWarning, match="The epoch parameter"):
        plateau.step(1.0, 2)


def test_get_lr_outside_step_warns():
    _, sch = _opt_sched(torch)
    with pytest.warns(UserWarning, match=r"please use `get_last_lr\(\)`"):
        assert sch.get_lr() == pytest.approx([0.1])
    assert _caught(sch.get_last_lr) == []


@pytest.mark.parametrize("case", ["order", "epoch", "get_lr", "right_order"])
def test_scheduler_warnings_as_torch(case):
    def run(mod):
        opt, sch = _opt_sched(mod)
        if case == "order":
            sch.step()
        elif case == "epoch":
            opt.step()
            sch.step(2)
        elif case == "get_lr":
            sch.get_lr()
        else:
            opt.step()
            sch.step()
    got = _same_as_torch(run)
    assert len(got) == (0 if case == "right_order" else 1)


# ---- nn.Module.state_dict: positional arguments are deprecated (FutureWarning) ----

def test_state_dict_positional_arguments_warn():
    m = torch.nn.Linear(2, 2)
    dest = {}
    with pytest.warns(FutureWarning, match="Positional args are being deprecated, use kwargs instead"):
        out = m.state_dict(dest, "lin.")
    assert out is dest and sorted(dest) == ["lin.bias", "lin.weight"]
    assert _caught(lambda: m.state_dict(destination={}, prefix="p.")) == []


def test_state_dict_positional_as_torch():
    got = _same_as_torch(lambda mod: mod.nn.Linear(2, 2).state_dict({}, "x."))
    assert [c for c, _ in got] == ["FutureWarning"]


# ---- .grad of a non-leaf, Tensor.T on non-2-D, Variable(volatile=True) ----

def test_non_leaf_grad_read_warns():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match=r"The \.grad attribute of a Tensor that is not a leaf Tensor "
                                         r"is being accessed") as rec:
        assert y.grad is None
    assert rec[0].filename == __file__  # points at the user's line
    y.retain_grad()
    y.sum().backward()
    assert _caught(lambda: (x.grad, y.grad)) == []  # a leaf, and a non-leaf that retains its grad
    assert y.grad.tolist() == [1.0, 1.0] and x.grad.tolist() == [2.0, 2.0]
    z = x.detach() * 2
    assert _caught(lambda: z.grad) == []  # no history: a leaf


def test_non_leaf_grad_as_torch():
    got = _same_as_torch(lambda m: (m.ones(2, requires_grad=True) * 3).grad)
    assert [c for c, _ in got] == ["UserWarning"]


def test_training_loop_reads_grads_silently():
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            opt.zero_grad()
            model(torch.ones(4, 3)).pow(2).sum().backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    assert model.weight.grad is not None


def test_grad_property_keeps_the_slot_semantics():
    x = torch.ones(2, requires_grad=True)
    x.grad = torch.full((2,), 3.0)
    assert x.grad.tolist() == [3.0, 3.0]
    del x.grad
    assert x.grad is None
    assert "gradient" in torch.Tensor.grad.__doc__


def test_T_on_non_2d_warns_once_per_kind(monkeypatch):
    from sparsetorch import _torch_warnings

    monkeypatch.setattr(_torch_warnings, "_warned_once", set())
    with pytest.warns(UserWarning, match=r"The use of `x.T` on tensors of dimension other than 2"):
        assert torch.ones(2, 3, 4).T.shape == (4, 3, 2)
    assert _caught(lambda: torch.ones(3).T) == []  # once per process, as torch's TORCH_WARN_ONCE
    with pytest.warns(UserWarning, match="Tensor.T is deprecated on 0-D tensors"):
        assert torch.ones(()).T.shape == ()
    assert _caught(lambda: torch.ones(2, 3).T) == []


def test_variable_volatile_warns():
    with pytest.warns(UserWarning, match=r"volatile was removed and now has no effect"):
        v = torch.autograd.Variable(torch.ones(2), volatile=True)
    assert not v.requires_grad
    assert _caught(lambda: torch.autograd.Variable(torch.ones(2))) == []


def test_once_warnings_texts_as_torch():
    """torch warns these once per process: compare with a fresh torch interpreter."""
    pytest.importorskip("torch")
    code = (
        "import warnings, torch\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    torch.ones(3).T; torch.ones(()).T\n"
        "    torch.autograd.Variable(torch.ones(2), volatile=True)\n"
        "    torch.cross(torch.eye(3), torch.eye(3)); torch.eye(3).cross(torch.eye(3))\n"
        "    torch.meshgrid(torch.ones(2), torch.ones(3)); torch.meshgrid(torch.ones(2), torch.ones(3))\n"
        "for x in w: print(x.category.__name__ + '|' + str(x.message).split(' (Triggered internally')[0])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=True)
    from sparsetorch import _torch_warnings as tw

    assert out.stdout.splitlines() == ["UserWarning|" + tw._T_ND, "UserWarning|" + tw._T_0D,
                                       "UserWarning|" + tw._VOLATILE, *("UserWarning|" + tw._CROSS).split("\n"),
                                       "UserWarning|" + tw._MESHGRID]


# ---- var/std without degrees of freedom, kl_div's 'mean', cross without dim ----

@pytest.mark.parametrize("case", [
    lambda m: m.ones(1).std(), lambda m: m.ones(1).var(), lambda m: m.ones(2).var(correction=2),
    lambda m: m.ones(2, 3).std(dim=1, correction=3), lambda m: m.var_mean(m.ones(1)),
    lambda m: m.std_mean(m.ones(1)), lambda m: m.ones(0).var(),
    lambda m: m.ones(2, 3).var(dim=0), lambda m: m.ones(3).std(unbiased=False),  # silent
])
def test_degrees_of_freedom_as_torch(case):
    _same_as_torch(case)


def test_degrees_of_freedom_warns_at_the_call_and_names_the_op():
    with pytest.warns(UserWarning, match=r"^var_mean\(\): degrees of freedom is <= 0") as rec:
        v, _ = torch.var_mean(torch.ones(1))
    assert rec[0].filename == __file__ and v.isnan().item()
    with pytest.warns(UserWarning, match=r"^std\(\): degrees of freedom") as rec:
        torch.std(torch.ones(2, 1), dim=1)
    assert rec[0].filename == __file__


@pytest.mark.parametrize("kw", [{}, {"reduction": "mean"}, {"reduction": "batchmean"},
                                {"reduction": "sum"}, {"size_average": True}])
def test_kl_div_mean_as_torch(kw):
    got = _same_as_torch(lambda m: m.nn.functional.kl_div(m.zeros(2, 3), m.ones(2, 3) / 3, **kw))
    assert len(got) == (1 if kw in ({}, {"reduction": "mean"}, {"size_average": True}) else 0)


def test_kl_div_mean_warns_at_the_call():
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss") as rec:
        F.kl_div(torch.zeros(2, 3), torch.ones(2, 3) / 3)
    assert rec[0].filename == __file__


def test_cross_without_dim_warns_once(monkeypatch):
    from sparsetorch import _torch_warnings

    monkeypatch.setattr(_torch_warnings, "_warned_once", set())
    a = torch.eye(3)
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        torch.cross(a, a)
    assert _caught(lambda: (torch.cross(a, a), a.cross(a))) == []
    assert _caught(lambda: torch.cross(a, a, dim=1)) == []


# ---- meshgrid without indexing (once), uint8 masks (every time) ----

def test_meshgrid_without_indexing_warns_once(monkeypatch):
    from sparsetorch import _torch_warnings

    monkeypatch.setattr(_torch_warnings, "_warned_once", set())
    a, b = torch.arange(2), torch.arange(3)
    with pytest.warns(UserWarning, match="torch.meshgrid: in an upcoming release, it will be required "
                                         "to pass the indexing argument") as rec:
        gx, _ = torch.meshgrid(a, b)
    assert rec[0].filename == __file__ and gx.shape == (2, 3)  # 'ij', torch's default
    assert _caught(lambda: torch.meshgrid(a, b)) == []
    assert _caught(lambda: torch.meshgrid(a, b, indexing="xy")) == []


def test_uint8_mask_index_as_torch():
    got = _same_as_torch(lambda m: m.arange(3.0)[m.tensor([1, 0, 1], dtype=m.uint8)])
    assert len(got) == 1
    x = torch.arange(3.0)
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        assert x[torch.tensor([1, 0, 1], dtype=torch.uint8)].tolist() == [0.0, 2.0]
    assert _caught(lambda: x[torch.tensor([True, False, True])]) == []


def test_tensor_from_a_list_of_ndarrays_warns_once_as_torch(monkeypatch):
    # dlrm's Criteo loader calls torch.tensor(list of per-sample arrays); torch warns once
    th = pytest.importorskip("torch")
    import numpy as np
    from sparsetorch import _torch_warnings as tw
    monkeypatch.setattr(tw, "_warned_once", set())
    code = ("import warnings, numpy as np, torch\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    torch.tensor(np.array([1, 2])); torch.tensor([np.float32(1), 2.0])\n"
            "    torch.tensor([np.array([1., 2.]), np.array([3., 4.])])\n"
            "    torch.as_tensor([[1, 2], np.array([3, 4])])\n"
            "for x in w: print(x.category.__name__ + '|' + str(x.message).split(' (Triggered')[0])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=True)
    assert out.stdout.splitlines() == ["UserWarning|" + tw._LIST_OF_NDARRAYS]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.tensor(np.array([1, 2]))
        torch.tensor([np.float32(1), 2.0])
        a = torch.tensor([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
        b = torch.as_tensor([[1, 2], np.array([3, 4])])
    assert [(x.category, str(x.message), x.filename) for x in w] == [
        (UserWarning, tw._LIST_OF_NDARRAYS, __file__)]
    assert a.tolist() == [[1.0, 2.0], [3.0, 4.0]] and b.tolist() == [[1, 2], [3, 4]]
    assert th.tensor([np.array([1.0, 2.0])]).dtype == th.float64 and a.dtype is torch.float64
