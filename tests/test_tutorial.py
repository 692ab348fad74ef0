"""The issue's 'done when' path: PyTorch's beginner tutorial runs unchanged and gives torch's values."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import sparsetorch as torch

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_tutorial_script_runs():
    import os

    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "tutorial.py")], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]


def _tutorial_values(torch):
    """Plain torch code; returns the values the tutorial prints, for comparison."""
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = torch.tensor([[0.5, 0.25, 2.0], [1.0, -1.0, 0.0]])
    out = {}
    out["add"] = (x + y).tolist()
    result = torch.empty(2, 3)
    torch.add(x, y, out=result)
    out["add_out"] = result.tolist()
    y2 = y.clone()
    y2.add_(x)
    out["add_"] = y2.tolist()
    out["col"] = x[:, 1].tolist()
    out["view"] = list(torch.arange(16).view(-1, 8).shape)
    out["item"] = torch.tensor([3.5]).item()
    a = torch.ones(2, 2, requires_grad=True)
    b = a + 2
    z = b * b * 3
    m = z.mean()
    m.backward()
    out["grad"] = a.grad.tolist()
    out["grad_fn"] = type(b.grad_fn).__name__
    out["next"] = type(z.grad_fn.next_functions[0][0]).__name__
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    yy = torch.tensor([0.5, 1.5, -1.0], requires_grad=True)
    z = x ** 2 + yy ** 3
    z.backward(torch.ones_like(x))
    out["x.grad"] = x.grad.tolist()
    out["y.grad"] = yy.grad.tolist()
    aa = torch.tensor([2.0, 3.0], requires_grad=True)
    (aa * (aa + 2)).sum().backward()
    out["a(a+2)"] = aa.grad.tolist()
    with torch.no_grad():
        out["no_grad"] = (x * 2).requires_grad
    return out


def test_tutorial_values():
    got = _tutorial_values(torch)
    assert got["grad"] == [[4.5, 4.5], [4.5, 4.5]]
    assert got["x.grad"] == [2.0, 4.0, 6.0]
    assert got["y.grad"] == [0.75, 6.75, 3.0]
    assert got["a(a+2)"] == [6.0, 8.0]
    assert got["col"] == [2.0, 5.0]
    assert got["no_grad"] is False
    assert got["grad_fn"] == "AddBackward0" and got["next"] == "MulBackward0"


def test_tutorial_values_match_torch():
    real = pytest.importorskip("torch")
    assert _tutorial_values(torch) == _tutorial_values(real)


def test_numpy_round_trips_share_memory():
    a = torch.ones(5)
    b = a.numpy()
    a.add_(1)
    assert (b == 2).all()
    n = np.ones(5)
    t = torch.from_numpy(n)
    np.add(n, 1, out=n)
    assert t.tolist() == [2.0] * 5
