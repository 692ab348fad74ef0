"""Run an unchanged PyTorch program on sparsetorch: ``import torch`` resolves to sparsetorch.

    python -m sparsetorch.as_torch train.py --epochs 10     # the script sees sparsetorch as torch

or, in Python, ``import sparsetorch.as_torch; sparsetorch.as_torch.install()`` before the program
imports torch. Every ``torch`` / ``torch.X`` import (``import torch.nn.functional as F``,
``from torch.nn.parameter import Parameter``, ``from torch._ops import ops``) gets the module object
of ``sparsetorch`` / ``sparsetorch.X`` itself (one copy of each class, so ``isinstance`` holds
across both names); a module sparsetorch does not have raises ``ModuleNotFoundError`` naming it.
``install()`` goes first on ``sys.meta_path``, so it wins over an installed torch.
"""

import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys

from . import _dtype

__all__ = ["install", "uninstall", "main"]


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``torch[.X]`` -> the already-importable ``sparsetorch[.X]`` module object."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        real = "sparsetorch" + fullname[len("torch"):]
        try:
            if importlib.util.find_spec(real) is None:
                return None
        except ModuleNotFoundError:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return importlib.import_module("sparsetorch" + spec.name[len("torch"):])

    def exec_module(self, module):  # already executed under its own name
        return None


_FINDER = _TorchAlias()


def install():
    """Make ``import torch`` (and every ``torch.X``) resolve to sparsetorch in this process."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    _dtype.NAMESPACE[0] = "torch."  # dtypes and layouts print as torch's: dtype=torch.float64
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]  # a real torch imported earlier is not mixed in


def uninstall():
    """Undo ``install()`` (the aliased modules leave ``sys.modules``)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    _dtype.NAMESPACE[0] = "sparsetorch."
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        if getattr(sys.modules[name], "__name__", "").startswith("sparsetorch"):
            del sys.modules[name]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[0])
        print("usage: python -m sparsetorch.as_torch SCRIPT.py [ARGS...]  |  -m MODULE [ARGS...]")
        return 0 if argv else 2
    install()
    if argv[0] == "-m" and len(argv) > 1:
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"sparsetorch.as_torch: no such file: {script}", file=sys.stderr)
        return 2
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
