"""The Tensor methods that run ops, bound onto ``Tensor`` once, from the top (floor 8).

``_tensor.py`` holds the data model only (slots, metadata, autograd fields); this module is the
one writer of ``Tensor`` attributes (``_bind`` below, run on import by the face
``sparsetorch/__init__.py``). An op declares its methods and in-place variants where it is
declared (``@method``, ``unary(..., inplace=True)``: ``_variants.py``); here each declared method
gets its forward, generated once from the op's signature (``x.op(*a)`` is ``_ops.op(x, *a)``,
the op's parameters after its first, less ``out=``). ``TensorMethods`` holds the generated forwards
and, written out below, the adapters whose method differs from the op function (varargs shapes,
other argument names, properties, methods of ``sparsetorch.linalg``); ``tests/test_registry.py``
checks every forward reaches a public op. ``_tensor_datamodel.py`` has the conversions, autograd
entry points and Python operators. Where a forward only passes its arguments through to an op
function with the very same signature, and for the Python operators (always called as
``op(self, other)``), ``Tensor`` gets the op function itself: one Python call less per method
call. No logic lives here.
"""

import dis
import inspect

from . import _ops, _torch_warnings, _variants
from ._ops import pointwise as _pw  # operators call the op objects directly
from ._tensor import Tensor
from ._tensor_datamodel import _DataModelForwards

__all__ = ["TensorMethods"]


class TensorMethods:
    """The generated forwards (``_declare_forwards``) and the adapters below: a method whose
    signature or target differs from the op function's."""

    __slots__ = ()

    # ---- named differently from the op (the op's name is not a public torch name) ----
    def pin_memory(self, device=None):
        return _ops._pin_memory(self, device)

    def is_pinned(self, device=None):
        return _ops._is_pinned(self, device)

    def storage(self):
        return _ops._tensor_storage(self)

    def untyped_storage(self):
        return _ops._untyped_storage(self)

    def new(self, *args, **kwargs):
        return _ops.tensor_new(self, *args, **kwargs)

    # ---- properties ----
    @property
    def real(self):
        return _ops.real(self)

    @real.setter
    def real(self, value):
        _ops.real(self).copy_(value)

    @property
    def imag(self):
        return _ops.imag(self)

    @imag.setter
    def imag(self, value):
        _ops.imag(self).copy_(value)

    # ---- other argument names, kinds or order than the op function ----
    def heaviside(self, values):  # heaviside(input, other)
        return _ops.heaviside(self, values)

    def where(self, condition, other):  # where(condition, input, other)
        return _ops.where(condition, self, other)

    def sort(self, dim=-1, descending=False, stable=False):  # sort(..., *, stable)
        return _ops.sort(self, dim, descending, stable=stable)

    def argsort(self, dim=-1, descending=False, stable=False):
        return _ops.argsort(self, dim, descending, stable=stable)

    def swapaxes(self, axis0, axis1):  # swapaxes is transpose(input, dim0, dim1)
        return _ops.swapaxes(self, axis0, axis1)

    def split(self, split_size, dim=0):  # split(tensor, split_size_or_sections, dim)
        return _ops.split(self, split_size, dim)

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):  # repeats=None there
        return _ops.repeat_interleave(self, repeats, dim, output_size=output_size)

    def gather(self, dim, index, *, sparse_grad=False):
        return _ops.gather(self, dim, index)

    def copy_(self, src, non_blocking=False):
        return _ops.copy_(self, src)

    def uniform_(self, a=0.0, b=1.0, *, generator=None):  # uniform_(from_, to)
        return _ops.uniform_(self, a, b, generator=generator)

    def random_(self, *args, generator=None, **kwargs):
        return _ops.random_(self, *args, generator=generator, **kwargs)

    # ---- sizes as varargs: x.view(2, 3) as well as x.view((2, 3)) ----
    def view(self, *shape):
        return _ops.view(self, *shape)

    def reshape(self, *shape):
        return _ops.reshape(self, *shape)

    def permute(self, *dims):
        return _ops.permute(self, *dims)

    def expand(self, *sizes):
        return _ops.expand(self, *sizes)

    def flip(self, *dims):
        return _ops.flip(self, *dims)

    def repeat(self, *sizes):
        return _ops.repeat(self, *sizes)

    def tile(self, *dims):
        return _ops.tile(self, *dims)

    # ---- linear algebra: forwards to sparsetorch.linalg._aliases (a library: imported lazily) ----
    def inverse(self):
        return _linalg().inverse(self)

    def det(self):
        return _linalg().det(self)

    def logdet(self):
        return _linalg().logdet(self)

    def slogdet(self):
        return _linalg().slogdet(self)

    def pinverse(self, rcond=1e-15):
        return _linalg().pinverse(self, rcond)

    def matrix_power(self, n):
        return _linalg().matrix_power(self, n)

    def matrix_exp(self):
        return _linalg().matrix_exp(self)

    def cholesky(self, upper=False):
        return _linalg().cholesky(self, upper)

    def qr(self, some=True):
        return _linalg().qr(self, some)

    def svd(self, some=True, compute_uv=True):
        return _linalg().svd(self, some, compute_uv)


def _declare_forwards():
    """The forward of each method an op declares (``_variants.METHODS``), compiled once: exactly
    the one-line forward one would write by hand, ``def name(self, <the op's parameters after the
    first, less out=>): return _ops.name(self, ...)``. Returns ``({name: its return statement},
    {name: its parameters after self, as text})`` for the ``axis=`` layer and the docstrings."""
    P = inspect.Parameter
    bodies, sigs = {}, {}
    for name, fn in _variants.METHODS.items():
        if name in TensorMethods.__dict__:
            raise RuntimeError(f"Tensor.{name}: declared by its op and adapted in TensorMethods")
        params = [p.replace(annotation=P.empty) for p in inspect.signature(fn).parameters.values()]
        if not params or params[0].kind not in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
            raise TypeError(f"Tensor.{name}: its op {fn!r} takes no tensor first")
        params = [P("self", P.POSITIONAL_OR_KEYWORD)] + [
            p for p in params[1:] if not (p.name == "out" and p.default is None)]
        env, args = {"_ops": _ops}, []
        for i, p in enumerate(params):
            if p.default is not P.empty:
                env[f"_d{i}"] = p.default
            if p.kind is P.VAR_POSITIONAL:
                args.append("*" + p.name)
            elif p.kind is P.VAR_KEYWORD:
                args.append("**" + p.name)
            elif p.kind is P.KEYWORD_ONLY:
                args.append(f"{p.name}={p.name}")
            else:
                args.append(p.name)
        sig = inspect.Signature(params)
        text = str(sig.replace(parameters=[
            p if p.default is P.empty else p.replace(default=_Name(f"_d{i}"))
            for i, p in enumerate(params)]))
        body = f"return _ops.{name}({', '.join(args)})"
        src = _IMPORTED + f"def {name}{text}:\n    {body}\n"
        code = compile(src, f"<declared method {name}>", "exec")
        exec(code, env)  # noqa: S102 - our own text
        fwd = env[name]
        fwd.__qualname__ = f"TensorMethods.{name}"
        fwd.__module__ = __name__
        setattr(TensorMethods, name, fwd)
        bodies[name] = body
        sigs[name] = str(sig)[1:-1].removeprefix("self").removeprefix(", ")
    return bodies, sigs


# never run: it makes the compiler treat ``_ops`` as an imported module, so ``_ops.name(...)``
# compiles as in a hand-written forward (LOAD_GLOBAL + LOAD_ATTR, not LOAD_METHOD)
_IMPORTED = "if 0:\n    from . import _ops\n"


class _Name:
    """A default shown by its name in generated source (``dim=_d1``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


_BODIES, _SIGNATURES = _declare_forwards()


def _accept_numpy_kwargs():
    """``axis=`` / ``keepdims=`` on the dim-taking methods torch's parser gives them to."""
    from ._numpy_kwargs import METHODS, return_statements, with_numpy_kwargs

    with open(__file__, encoding="utf-8") as f:  # the forwards' bodies are inlined
        bodies = return_statements(f.read(), [TensorMethods.__dict__[n] for n in METHODS
                                              if n in TensorMethods.__dict__ and n not in _BODIES])
    bodies.update(_BODIES)
    for name in METHODS:
        fn = TensorMethods.__dict__.get(name)
        if fn is not None:
            setattr(TensorMethods, name, with_numpy_kwargs(fn, name, inline=True,
                                                           body=bodies.get(name)))


_accept_numpy_kwargs()


def _linalg():
    """``sparsetorch.linalg._aliases`` (imported on first use: the package imports the ops)."""
    from .linalg import _aliases

    return _aliases


def _document(tensor_cls):
    """Docstrings for the forwards above, in torch's style (``abs()`` then "See :func:`torch.abs`"):
    the signature (from this file, or generated), the op's own summary line; those of ``_tensor_docs.DOCS`` for the
    data model's methods and properties. Run by ``_tensor.py`` once ``_ops`` is bound (``help(x.abs)``;
    tests/test_docstrings.py checks every public method has one)."""
    import re

    from ._tensor_docs import DOCS

    for name, doc in DOCS.items():
        v = tensor_cls.__dict__.get(name, TensorMethods.__dict__.get(name))
        if v is not None and not v.__doc__:
            v.__doc__ = doc
    with open(__file__, encoding="utf-8") as f:
        src = f.read()
    forward = re.compile(r"^    def (\w+)\(self(?:, )?([^:]*?)\):(?:  #[^\n]*)?\n\s+return (_ops|_linalg\(\))"
                         r"\.(\w+)\(", re.MULTILINE)
    public = set(_ops.__all__)
    declared = [(name, sig, "_ops", name) for name, sig in _SIGNATURES.items()]
    for name, sig, via, target in forward.findall(src) + declared:
        fn = TensorMethods.__dict__.get(name)
        if fn is None or fn.__doc__:
            continue
        sig = " ".join(sig.split())
        head = f"{name}({sig})\n\n"
        if name.endswith("_") and name[:-1] in TensorMethods.__dict__:
            fn.__doc__ = head + f"In-place version of :meth:`~Tensor.{name[:-1]}`."
            continue
        doc = (getattr(getattr(_ops, target, None), "__doc__", None) or "").strip() if via == "_ops" else ""
        paras = doc.split("\n\n")
        if len(paras) > 1 and paras[0].startswith(target + "("):  # the op's own signature line
            paras = paras[1:]
        summary = " ".join(paras[0].split())
        if via != "_ops" or target in public:
            fn.__doc__ = head + f"See :func:`sparsetorch.{target}`." + (f" {summary}" if summary else "")
        elif summary:
            fn.__doc__ = head + summary


# Python calls these with (self, other) (or (self,), (self, key[, value]), (self, memo)) only,
# so the op function itself is the method (not __pow__: pow(x, y, mod) passes a third argument).
_OPERATORS = {
    "__add__": "_pw._add", "__radd__": "_pw._add", "__sub__": "_pw._sub",
    "__mul__": "_pw.mul", "__rmul__": "_pw.mul", "__truediv__": "_pw._div",
    "__eq__": "_pw.eq", "__ne__": "_pw.ne", "__lt__": "_pw.lt", "__le__": "_pw.le",
    "__gt__": "_pw.gt", "__ge__": "_pw.ge",
    "__iadd__": "add_", "__rsub__": "rsub", "__isub__": "sub_", "__imul__": "mul_",
    "__rtruediv__": "rdiv", "__itruediv__": "div_", "__floordiv__": "floor_divide",
    "__rfloordiv__": "rfloordiv", "__ifloordiv__": "floor_divide_", "__mod__": "remainder",
    "__rmod__": "rremainder", "__imod__": "remainder_", "__rpow__": "rpow",
    "__ipow__": "pow_", "__matmul__": "matmul", "__rmatmul__": "rmatmul", "__neg__": "neg",
    "__abs__": "abs", "__invert__": "bitwise_not", "__and__": "bitwise_and",
    "__rand__": "bitwise_and", "__iand__": "bitwise_and_", "__or__": "bitwise_or",
    "__ror__": "bitwise_or", "__ior__": "bitwise_or_", "__xor__": "bitwise_xor",
    "__rxor__": "bitwise_xor", "__ixor__": "bitwise_xor_", "__getitem__": "getitem",
    "__setitem__": "setitem", "__repr__": "tensor_repr", "__str__": "tensor_repr",
    "__bool__": "to_bool", "__index__": "index_value", "__deepcopy__": "deepcopy_tensor",
}
_FORWARD_OPS = frozenset(("RESUME", "NOP", "CACHE", "PRECALL", "PUSH_NULL", "LOAD_GLOBAL", "LOAD_ATTR",
                          "LOAD_METHOD", "CALL", "RETURN_VALUE"))
_SKIP = frozenset(("__module__", "__qualname__", "__doc__", "__slots__", "__dict__", "__weakref__",
                   "__firstlineno__", "__static_attributes__"))


def _op_function(path):
    mod, _, name = path.rpartition(".")
    fn = getattr(_pw if mod == "_pw" else _ops, name)
    return fn if inspect.isfunction(fn) else None


def _same_signature_target(name, fn):
    """The op function a forward ``def name(self, a, b=1): return _ops.X(self, a, b)`` may be
    replaced by: X itself when its parameters after the first are exactly the forward's (names,
    kinds, defaults), so every call, good or bad, behaves the same; else None."""
    if not inspect.isfunction(fn) or getattr(fn, "__wrapped__", None) is not None:
        return None
    code = fn.__code__
    if code.co_names[:1] != ("_ops",) or len(code.co_names) != 2:
        return None
    target = getattr(_ops, code.co_names[1], None)
    if not inspect.isfunction(target) or getattr(target, "__wrapped__", None) is not None \
            or not (target.__doc__ or "").strip():  # help(x.name) must still say something
        return None
    try:
        mine = list(inspect.signature(fn).parameters.values())
        theirs = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return None
    if not mine or not theirs or len(mine) != len(theirs) or any(
            p.kind is not p.POSITIONAL_OR_KEYWORD for p in mine) or any(
            (a.name, a.kind, a.default) != (b.name, b.kind, b.default)
            for a, b in zip(mine[1:], theirs[1:])) or theirs[0].kind is not theirs[0].POSITIONAL_OR_KEYWORD:
        return None
    # the body must pass every parameter through positionally, in order (read from the bytecode;
    # any instruction beyond loads, one call and the return keeps the forward)
    loads = []
    for ins in dis.get_instructions(fn):
        op = ins.opname
        if op == "LOAD_FAST":
            loads.append(ins.argval)
        elif op not in _FORWARD_OPS:
            return None
    return target if loads == [p.name for p in mine] else None


def _bind():
    """Write the methods onto ``Tensor``: the one place that does (issue 13, floor 8)."""
    own = set(Tensor.__dict__)
    direct = []
    for cls in (_DataModelForwards, TensorMethods):
        for name, v in cls.__dict__.items():
            if name in _SKIP or name in own:
                continue
            target = _op_function(_OPERATORS[name]) if name in _OPERATORS else \
                _same_signature_target(name, v)
            if target is not None:
                direct.append(name)
                v = target
            setattr(Tensor, name, v)
    return tuple(direct)


DIRECT = _bind()  # the method names bound to their op function itself


def _grad_property(slot):
    """``.grad`` over its slot, with torch's UserWarning when the tensor read is not a leaf, does not
    retain its gradient and has none (torch's ``TensorBase::grad``)."""
    get = slot.__get__

    def grad(self):
        try:
            g = get(self)
        except AttributeError:  # never set: results of ops leave the slot empty (a property
            g = None            # store costs ~100 ns on every op's hot path)
        if g is None and self.grad_fn is not None and not self.retains_grad:
            _torch_warnings.non_leaf_grad()
        return g

    def delete(self):  # ``del x.grad`` leaves None, as in torch
        slot.__set__(self, None)

    return property(grad, slot.__set__, delete, Tensor.__slots__["grad"])


Tensor.grad = _grad_property(Tensor.__dict__["grad"])
_document(Tensor)  # docstrings of the methods (forwards: from the ops)
