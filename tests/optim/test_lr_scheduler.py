"""Learning-rate schedulers: closed forms, and step-by-step parity with torch when installed."""

import math

import pytest

import sparsetorch as torch
from sparsetorch import optim
from sparsetorch.optim import lr_scheduler as S


def _opt(mod, cls="SGD", lr=0.1, **kw):
    p = mod.zeros(2, requires_grad=True)
    q = mod.zeros(3, requires_grad=True)
    return getattr(mod.optim, cls)([{"params": [p]}, {"params": [q], "lr": lr * 2}], lr=lr, **kw)


SCHEDULES = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}, "SGD", {}),
    ("MultiStepLR", {"milestones": [2, 5, 7], "gamma": 0.3}, "SGD", {}),
    ("ExponentialLR", {"gamma": 0.9}, "SGD", {}),
    ("CosineAnnealingLR", {"T_max": 6, "eta_min": 0.01}, "SGD", {}),
    ("LambdaLR", {"lr_lambda": lambda e: 1.0 / (e + 1)}, "SGD", {}),
    ("LinearLR", {"start_factor": 0.25, "end_factor": 1.0, "total_iters": 4}, "SGD", {}),
    ("LinearLR", {}, "SGD", {}),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 12}, "SGD", {"momentum": 0.9}),
    ("OneCycleLR", {"max_lr": [1.0, 0.5], "total_steps": 12, "three_phase": True,
                        "anneal_strategy": "linear"}, "Adam", {}),
    ("OneCycleLR", {"max_lr": 0.3, "epochs": 2, "steps_per_epoch": 5, "pct_start": 0.4}, "Adam", {}),
]


def _lrs(mod, name, kw, cls, okw, n):
    opt = _opt(mod, cls, **okw)
    sch = getattr(mod.optim.lr_scheduler, name)(opt, **kw)
    out = [list(sch.get_last_lr())]
    moms = []
    for _ in range(n):
        opt.step()
        sch.step()
        out.append(list(sch.get_last_lr()))
        g = opt.param_groups[0]
        moms.append(g["betas"][0] if "betas" in g else g.get("momentum"))
    return out, moms


@pytest.mark.parametrize("name,kw,cls,okw", SCHEDULES, ids=[s[0] + str(i) for i, s in enumerate(SCHEDULES)])
def test_torch_parity(name, kw, cls, okw):
    T = pytest.importorskip("torch")
    n = 9 if name == "OneCycleLR" else 10
    ours, om = _lrs(torch, name, kw, cls, okw, n)
    theirs, tm = _lrs(T, name, kw, cls, okw, n)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12)
    assert om == pytest.approx(tm, rel=1e-9)


def test_closed_forms():
    opt = _opt(torch)
    sch = S.StepLR(opt, step_size=2, gamma=0.1)
    seen = [sch.get_last_lr()[0]]
    for _ in range(5):
        opt.step()
        sch.step()
        seen.append(sch.get_last_lr()[0])
    assert seen == pytest.approx([0.1, 0.1, 0.01, 0.01, 0.001, 0.001])
    opt = _opt(torch)
    sch = S.CosineAnnealingLR(opt, T_max=4)
    for e in range(1, 5):
        sch.step()
        assert opt.param_groups[1]["lr"] == pytest.approx(0.2 * (1 + math.cos(math.pi * e / 4)) / 2)
    opt = _opt(torch)
    sch = S.ExponentialLR(opt, gamma=0.5)
    sch.step()
    sch.step()
    assert sch.get_last_lr() == pytest.approx([0.025, 0.05]) and sch.last_epoch == 2
    opt = _opt(torch)
    sch = S.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    assert opt.param_groups[0]["lr"] == pytest.approx(1.0 / 25)
    for _ in range(9):
        sch.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(1.0 / 25 / 1e4)
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        sch.step()
        sch.step()


def test_reduce_lr_on_plateau():
    opt = _opt(torch)
    sch = S.ReduceLROnPlateau(opt, patience=2, factor=0.5, cooldown=1, min_lr=[0.02, 0.0])
    lrs = []
    for m in [1.0, 0.9] + [0.95] * 12:
        sch.step(m)
        lrs.append(tuple(sch.get_last_lr()))
    assert lrs[4] == pytest.approx((0.05, 0.1))
    assert lrs[8] == pytest.approx((0.025, 0.05))
    assert lrs[-1] == pytest.approx((0.02, 0.025))  # clamped at min_lr


def test_reduce_lr_on_plateau_torch_parity():
    T = pytest.importorskip("torch")
    metrics = [1.0, 0.9, 0.95, 0.89, 0.95, 0.95, 0.95, 0.2, 0.3, 0.3, 0.3, 0.3, 0.3]
    for kw in ({"patience": 1}, {"mode": "max", "threshold_mode": "abs", "threshold": 0.05, "cooldown": 2}):
        res = []
        for mod in (torch, T):
            opt = _opt(mod)
            sch = mod.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
            out = []
            for m in metrics:
                sch.step(m)
                out.append(sch.get_last_lr())
            res.append(out)
        flat = [[x for row in r for x in row] for r in res]
        assert flat[0] == pytest.approx(flat[1])


def test_state_dict_and_resume():
    opt = _opt(torch)
    sch = S.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
    for _ in range(3):
        sch.step()
    sd = sch.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3
    opt2 = _opt(torch)
    sch2 = S.MultiStepLR(opt2, milestones=[1], gamma=0.9)
    sch2.load_state_dict(sd)
    sch.step()
    sch2.step()
    assert sch2.get_last_lr() == sch.get_last_lr() == pytest.approx([0.025, 0.05])
    with pytest.raises(KeyError, match="initial_lr"):
        S.StepLR(_opt(torch), step_size=1, last_epoch=3)


def test_bad_arguments():
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        S.LinearLR(_opt(torch), start_factor=0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        S.ReduceLROnPlateau(_opt(torch), factor=1.5)
    with pytest.raises(ValueError, match="total_steps"):
        S.OneCycleLR(_opt(torch), max_lr=1.0)
    with pytest.raises(ValueError, match="momentum or beta1"):
        S.OneCycleLR(_opt(torch, "Adagrad"), max_lr=1.0, total_steps=3)
    with pytest.raises(TypeError):
        S.StepLR(object(), step_size=1)
    assert isinstance(optim.lr_scheduler.LRScheduler, type)
