"""``help()`` works: every public function, class and Tensor method of the public namespaces has a
docstring (a signature or summary at least), as torch's do."""

import importlib
import inspect
import types

import pytest

import sparsetorch

NAMESPACES = ["", "nn", "nn.functional", "nn.init", "sparse", "linalg", "special", "fft", "optim",
              "optim.lr_scheduler", "utils.data", "autograd", "random"]


def _undocumented(obj, names):
    out = []
    for name in names:
        try:
            v = inspect.getattr_static(obj, name)
        except AttributeError:  # a name a module's __getattr__ provides
            v = getattr(obj, name)
        if isinstance(v, (staticmethod, classmethod)):
            v = v.__func__
        if isinstance(v, types.MemberDescriptorType):  # a slot: its doc is in __slots__
            doc = inspect.getdoc(v)
        elif isinstance(v, types.ModuleType) or not (callable(v) or isinstance(v, property)):
            continue
        else:
            doc = getattr(v, "__doc__", None)
        if not (doc or "").strip():
            out.append(name)
    return sorted(out)


@pytest.mark.parametrize("ns", NAMESPACES)
def test_every_public_function_has_a_docstring(ns):
    mod = importlib.import_module("sparsetorch" + ("." + ns if ns else ""))
    assert _undocumented(mod, [n for n in dir(mod) if not n.startswith("_")]) == []


def test_every_public_tensor_method_property_and_attribute_has_a_docstring():
    T = sparsetorch.Tensor
    assert _undocumented(T, [n for n in dir(T) if not n.startswith("_")]) == []


def test_method_docstrings_name_their_signature_and_function():
    assert sparsetorch.Tensor.sum.__doc__.startswith("sum(dim=None, keepdim=False")
    assert "sparsetorch.sum" in sparsetorch.Tensor.sum.__doc__
    assert "In-place version of :meth:`~Tensor.abs`" in sparsetorch.Tensor.abs_.__doc__


def test_ops_with_sparse_kernels_say_so():
    # an op of the table with a COO or CSR kernel documents its sparse behaviour
    from sparsetorch import _ops
    from sparsetorch._dispatch import Op

    ops = {}
    for mod in vars(_ops).values():
        if isinstance(mod, types.ModuleType):
            for v in vars(mod).values():
                op = getattr(v, "op", v)
                if isinstance(op, Op):
                    ops.setdefault(op.name, op)
    silent = []
    for name in _ops.__all__:
        op = ops.get(name)
        layouts = {lay.name for key in op.kernels for lay in key} if op is not None else set()
        doc = getattr(sparsetorch, name).__doc__ or ""
        if layouts & {"sparse_coo", "sparse_csr"} and not any(w in doc for w in ("sparse", "COO", "CSR")):
            silent.append(name)
    assert len(ops) > 100 and silent == []
