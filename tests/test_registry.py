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
    fn = inspect.unwrap(vars(_tensor_methods.TensorMethods)[name])  # past the axis=/keepdims= layer
    if "_linalg" in fn.__code__.co_names:  # forwards to sparsetorch.linalg._aliases
        from sparsetorch.linalg import _aliases

        targets = [n for n in fn.__code__.co_names if n != "_linalg"]
        assert all(hasattr(_aliases, t) for t in targets), f"Tensor.{name} -> {targets}"
        return
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
    # each is either public (in _ops.__all__) or a declared Tensor-method helper, never both
    for name in _ops.pointwise.__all__:
        assert hasattr(st, name) != (name in _ops._METHOD_ONLY), name


def test_zero_preserving_flags_match_f0():
    """An op that claims to be zero-preserving maps 0 to 0 (the pydata fill-value idea)."""
    for info in OP_DB:
        op = getattr(info.op, "op", None)
        if not isinstance(op, Op) or op.zero_preserving is None or len(op.inputs) != 1 or op.params:
            continue
        z = info.op(st.zeros(3, dtype=info.dtypes[0]))
        is_zero = bool((z == 0).all())
        assert is_zero == op.zero_preserving, f"{op.name}: zero_preserving={op.zero_preserving} but f(0)={z}"


# Public names of the op families that are not table rows, each with the reason.
NOT_TABLE_OPS = {
    "rsub": "reflected operator helper (x.__rsub__), covered by sub",
    "rdiv": "reflected operator helper, covered by div",
    "rfloordiv": "reflected operator helper, covered by floor_divide",
    "rremainder": "reflected operator helper, covered by remainder",
    "rpow": "reflected operator helper, covered by pow",
    "rmatmul": "reflected operator helper, covered by matmul",
    "concat": "alias of cat", "concatenate": "alias of cat",
    "broadcast_shapes": "takes shapes, not tensors (tests/test_shape_indexing.py)",
    "data_ptr": "metadata", "is_contiguous": "metadata", "stride": "metadata",
    # _ops/creation.py (and the _ranges it re-exports): constructors from data and uninitialized
    # memory are tested in tests/test_creation.py
    "tensor": "constructor from data", "as_tensor": "constructor from data (shares memory)",
    "asarray": "constructor from data (shares memory)", "from_numpy": "shares a NumPy array",
    "empty": "uninitialized values", "empty_like": "uninitialized values",
    "empty_strided": "uninitialized values", "range": "deprecated inclusive arange (warns)",
    "sparse_coo_tensor": "constructor (tests/test_sparse_core.py, tests/test_sparse_errors.py)",
    "sparse_csr_tensor": "constructor (tests/test_sparse_core.py, tests/test_sparse_errors.py)",
    "is_coalesced": "flag accessor", "indices": "accessor", "values": "accessor",
    "crow_indices": "accessor", "col_indices": "accessor", "to_scipy": "interop (test_sparse_core)",
    "with_values": "primitive under every sparse row (each sparse gradcheck goes through it)",
    "mask_grad": "internal gradient masking (every sparse gradcheck goes through it)",
    "sparse_softmax": "torch.sparse.softmax: tests/test_sparse_elementwise.py",
    "sparse_log_softmax": "torch.sparse.log_softmax: tests/test_sparse_elementwise.py",
    # _ops/predicates.py: global switches return Python values (tests/test_set_ops_misc.py); the
    # predicates on tensors have rows (tests/opdb/queries.py)
    "is_tensor": "takes any object, not a tensor", "trapz": "alias of trapezoid",
    "get_num_threads": "global setting", "set_num_threads": "global setting",
    "use_deterministic_algorithms": "global flag", "are_deterministic_algorithms_enabled": "flag",
    "is_deterministic_algorithms_warn_only_enabled": "flag",
    "set_deterministic_debug_mode": "global flag (tests/test_platform.py)",
    "get_deterministic_debug_mode": "flag (tests/test_platform.py)",
}
OP_FAMILIES = ("pointwise", "shape", "indexing", "reduction", "statistics", "sorting", "linalg",
               "einsum", "matrix", "sparse_core", "sparse_shape", "sparse_linalg", "sparse_reduction",
               "set_ops", "predicates", "arranging", "complex_views", "logexp_gcd", "quantile_cov",
               "distance", "special_fns", "sparse_legacy", "_join", "_slicing", "_masked", "_scatter",
               "_index_ops", "creation")
# Tensor-method-only ops (no top-level name, so in no family's __all__) that have rows too
METHOD_ONLY_ROWS = ("pin_memory", "is_pinned")  # _ops/pinning.py


def test_every_op_has_a_table_row():
    """Every public op of the op families is a row of OP_DB (or is listed above with a reason)."""
    covered = set()
    for info in OP_DB:
        covered.update({info.name, info.name.split(".")[0], getattr(info.op, "__name__", "")})
    missing = []
    for fam in OP_FAMILIES:
        mod = getattr(_ops, fam)
        for n in getattr(mod, "__all__", ()):
            if n.endswith("_") or n in NOT_TABLE_OPS:
                continue
            if n not in covered and getattr(getattr(mod, n), "__name__", n) not in covered:
                missing.append(f"{fam}.{n}")
    missing += [f"Tensor.{n}" for n in METHOD_ONLY_ROWS if n not in covered]
    assert not missing, f"ops without a table row: {missing}"
