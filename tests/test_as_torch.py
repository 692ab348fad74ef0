"""``python -m sparsetorch.as_torch script.py``: an unchanged PyTorch program runs on sparsetorch
(run in subprocesses: installing the alias in this process would unload a real torch)."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.parameter import Parameter
    from torch.nn.modules.module import Module
    import sparsetorch

    assert torch is sparsetorch and nn is sparsetorch.nn and F is sparsetorch.nn.functional
    assert Parameter is sparsetorch.nn.Parameter and Module is sparsetorch.nn.Module
    assert sys.argv[1:] == ["--epochs", "3"], sys.argv
    w = Parameter(torch.FloatTensor(2, 3).uniform_(-1, 1))
    adj = torch.sparse.FloatTensor(torch.LongTensor([[0, 1], [1, 0]]), torch.FloatTensor([1, 2]),
                                   torch.Size([2, 2]))
    out = torch.spmm(adj, torch.mm(torch.ones(2, 2), w))
    out.sum().backward()
    assert w.grad.shape == (2, 3)
    try:
        import torch.no_such_module  # noqa: F401
    except ModuleNotFoundError as e:
        assert "torch.no_such_module" in str(e)
    else:
        raise AssertionError("a missing module must not import")
    print("ok", type(out).__module__)
""")


def _run(args, cwd):
    return subprocess.run([sys.executable, "-m", "sparsetorch.as_torch", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_script_runs_unchanged_with_torch_names(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    r = _run(["train.py", "--epochs", "3"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok sparsetorch._tensor"


def test_script_directory_is_importable_and_module_mode(tmp_path):
    (tmp_path / "helper_mod.py").write_text("import torch\nVALUE = torch.tensor([1.0, 2.0]).sum().item()\n")
    (tmp_path / "main.py").write_text("import helper_mod\nprint(helper_mod.VALUE)\n")
    r = _run(["main.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "3.0"
    r = _run(["-m", "helper_mod"], tmp_path)
    assert r.returncode == 0, r.stderr


def test_usage_and_missing_script(tmp_path):
    r = _run([], tmp_path)
    assert r.returncode == 2 and "usage" in r.stdout
    r = _run(["nope.py"], tmp_path)
    assert r.returncode == 2 and "no such file: nope.py" in r.stderr


PRINTS = textwrap.dedent("""
    import torch
    x = torch.ones(2, dtype=torch.float64)
    print(x)
    print(x.dtype, torch.int64, torch.sparse_coo, x.to_sparse().layout)
    print(x.to_sparse())
    print(torch.finfo(torch.float32), torch.finfo(torch.float16), torch.iinfo(torch.uint8))
""")


def test_printed_dtypes_and_layouts_are_torchs(tmp_path):
    """The program imported torch: it prints ``dtype=torch.float64`` as torch does (the prefix
    goes back to ``sparsetorch.`` at uninstall)."""
    import pytest

    torch = pytest.importorskip("torch")  # noqa: F841 - the oracle runs in its own process
    (tmp_path / "p.py").write_text(PRINTS)
    ours = _run(["p.py"], tmp_path)
    theirs = subprocess.run([sys.executable, "p.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr + theirs.stderr
    assert ours.stdout == theirs.stdout
    r = subprocess.run([sys.executable, "-c", "import sparsetorch, sparsetorch.as_torch as a; "
                        "a.install(); a.uninstall(); print(sparsetorch.float32)"],
                       capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "sparsetorch.float32"
