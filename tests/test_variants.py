"""Issue 13 item 3: an op declares its Tensor methods and in-place variants where it is declared
(``sparsetorch/_variants.py``); ``_tensor_methods`` binds them from that registry."""

import inspect

import pytest

import sparsetorch as st
from sparsetorch import _ops, _tensor_methods, _variants

torch = pytest.importorskip("torch")


def _params_after_first(fn):
    return [(p.name, p.kind, p.default) for p in list(inspect.signature(fn).parameters.values())[1:]
            if not (p.name == "out" and p.default is None)]


def test_every_declared_method_is_bound_with_its_ops_signature():
    assert len(_variants.METHODS) > 300
    for name, fn in _variants.METHODS.items():
        bound = getattr(st.Tensor, name)
        target = getattr(_ops, name)  # the method calls the op under its own name
        assert callable(target), name
        if bound is not target:  # a generated forward: def name(self, ...): return _ops.name(self, ...)
            code = inspect.unwrap(bound).__code__
            assert code.co_names == ("_ops", name), name
        assert _params_after_first(inspect.unwrap(bound)) == _params_after_first(fn), name


def _written_out(v):
    fn = inspect.unwrap(v.fget if isinstance(v, property) else v)
    return fn.__code__.co_filename == _tensor_methods.__file__


def test_adapters_are_only_methods_that_differ_from_their_op():
    adapters = {n for n, v in vars(_tensor_methods.TensorMethods).items()
                if (inspect.isfunction(v) or isinstance(v, property)) and _written_out(v)}
    assert 0 < len(adapters) < 45 and not adapters & set(_variants.METHODS)
    for name in ("view", "reshape", "where", "heaviside", "real"):
        assert name in vars(_tensor_methods.TensorMethods) and name not in _variants.METHODS


def test_method_decorator_returns_the_function_itself():
    def probe_op(input, k=2, *, out=None):
        return input

    try:
        assert _variants.method(probe_op) is probe_op
        assert _variants.METHODS["probe_op"] is probe_op
        assert _variants.method("probe_alias")(probe_op) is probe_op
        with pytest.raises(RuntimeError, match="declared twice"):
            _variants.method(lambda input: input, "probe_op")
    finally:
        _variants.METHODS.pop("probe_op", None)
        _variants.METHODS.pop("probe_alias", None)


def test_one_declaration_gives_function_method_and_inplace_forms():
    # abs = unary("abs", ..., inplace=True): torch.abs, x.abs(), torch.abs_, x.abs_()
    assert _variants.METHODS["abs"] is _ops.abs and _variants.METHODS["abs_"] is _ops.abs
    assert _variants.FUNCTIONS["abs_"] is _ops.abs_ is st.abs_
    assert _variants.FUNCTIONS["arcsin_"] is _ops.arcsin_  # aliases at their own line
    for lib in (st, torch):
        x = lib.tensor([-1.5, 2.0, -0.25])
        y = x.abs_()
        assert y is x and x.tolist() == [1.5, 2.0, 0.25]
        z = lib.tensor([0.5, -0.5])
        lib.arcsin_(z)
        assert z.tolist() == pytest.approx([0.5235987, -0.5235987], abs=1e-6)
    assert st.Tensor.absolute_.__doc__.startswith("absolute_()\n\nIn-place version of")


def test_inplace_functions_on_the_face_follow_torch():
    for name in _variants.FUNCTIONS:
        assert hasattr(_ops, name), name
        assert hasattr(st, name) == hasattr(torch, name), name
        assert hasattr(st.Tensor, name) == hasattr(torch.Tensor, name), name


def test_fast_inplace_paths_are_declared_with_their_ops():
    x, y = st.ones(4), st.full((4,), 2.0)
    ptr = x.data_ptr()
    for op, want in (("add_", 3.0), ("mul_", 6.0), ("sub_", 4.0), ("div_", 2.0)):
        assert getattr(x, op)(y) is x
        assert x.tolist() == [want] * 4 and x.data_ptr() == ptr
    assert x.add_(y, alpha=2).tolist() == [6.0] * 4
    w = st.ones(2, requires_grad=True)  # the generic path explains, as torch
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1.0)


def test_conj_physical_is_its_own_op_with_torchs_node():
    torch = pytest.importorskip("torch")
    for lib in (st, torch):
        z = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        y = lib.conj_physical(z)
        assert type(y.grad_fn).__name__ == "ConjPhysicalBackward0"
        x = lib.ones(2)
        assert lib.conj_physical(x) is x and x.conj_physical() is x  # real: the input itself
        w = lib.tensor([1 + 1j])
        assert lib.conj_physical_(w) is w and w.conj_physical_() is w
        assert complex(w[0]) == 1 + 1j  # conjugated twice


def test_round_method_takes_decimals_by_keyword_only_as_torchs():
    for lib in (st, torch):
        x = lib.tensor([1.234, 2.5])
        assert x.round(decimals=1).tolist() == lib.round(x, decimals=1).tolist()
        with pytest.raises(TypeError):
            x.round(2)
        assert x.round_(decimals=1) is x
