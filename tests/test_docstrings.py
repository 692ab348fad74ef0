"""``help()`` works: every public function, class and Tensor method of the public namespaces has a
docstring (a signature or summary at least), as torch's do."""

import importlib
import inspect
import types

import pytest

import sparsetorch

NAMESPACES = ["", "nn.functional", "sparse", "linalg", "special", "fft"]


def _undocumented(obj, names):
    out = []
    for name in names:
        try:
            v = inspect.getattr_static(obj, name)
        except AttributeError:  # a name a module's __getattr__ provides
            v = getattr(obj, name)
        if isinstance(v, (staticmethod, classmethod)):
            v = v.__func__
        if isinstance(v, types.ModuleType) or not (callable(v) or isinstance(v, property)):
            continue
        if not (getattr(v, "__doc__", None) or "").strip():
            out.append(name)
    return sorted(out)


@pytest.mark.parametrize("ns", NAMESPACES)
def test_every_public_function_has_a_docstring(ns):
    mod = importlib.import_module("sparsetorch" + ("." + ns if ns else ""))
    assert _undocumented(mod, [n for n in dir(mod) if not n.startswith("_")]) == []


def test_every_public_tensor_method_and_property_has_a_docstring():
    T = sparsetorch.Tensor
    assert _undocumented(T, [n for n in dir(T) if not n.startswith("_")]) == []


def test_method_docstrings_name_their_signature_and_function():
    assert sparsetorch.Tensor.sum.__doc__.startswith("sum(dim=None, keepdim=False")
    assert "sparsetorch.sum" in sparsetorch.Tensor.sum.__doc__
    assert "In-place version of :meth:`~Tensor.abs`" in sparsetorch.Tensor.abs_.__doc__
