"""torch.jit's entry points, run eagerly.

sparsetorch has no TorchScript compiler: ``script`` and ``trace`` give back objects that run the
Python code as written (torch's ``backend="eager"`` semantics), with the same results as the
original. What users touch works:

- ``script(module)`` / ``trace(module, example_inputs)`` return the module itself (same
  parameters, same ``state_dict`` keys, ``train()``/``eval()``, hooks);
- ``script(fn)`` / ``trace(fn, example_inputs)`` return a :class:`ScriptFunction`, a thin
  callable wrapper whose ``.code`` is the Python source; ``.graph`` raises (there is no graph);
- ``trace`` runs the function once on the example inputs, as torch does, so errors surface at
  the same place. Unlike torch's trace, data-dependent control flow is *not* frozen: each call
  runs the Python code again;
- the decorators (``ignore``, ``unused``, ``export``, ``_overload``, ...) return their
  function; ``is_scripting()`` and ``is_tracing()`` are False;
- ``save`` / ``load`` refuse with ``NotImplementedError`` (a TorchScript archive holds compiled
  code): save ``module.state_dict()`` with ``sparsetorch.save`` instead.
"""

import contextlib
import functools
import inspect
import typing
import warnings

from ..nn.modules.module import Module

__all__ = [
    "Attribute", "Error", "Final", "ScriptFunction", "ScriptModule", "annotate",
    "enable_onednn_fusion",
    "export", "freeze", "fuser", "ignore", "interface", "is_scripting", "is_tracing", "isinstance",
    "load", "onednn_fusion_enabled", "optimize_for_inference", "save", "script", "script_method",
    "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused",
]

Final = typing.Final
_builtin_isinstance = isinstance


class Error(RuntimeError):
    """torch.jit.Error: an exception raised from TorchScript code (never, when run eagerly)."""


def _deprecated(name):
    """torch 2.13 deprecates TorchScript's entry points with this warning. As torch's (raised
    with stacklevel 1), it is attributed to the library, not to the caller's line, so Python's
    default filters hide it outside tests (no warning printed by a user's script)."""
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please switch to `torch.compile` or "
                  "`torch.export`.", DeprecationWarning, stacklevel=2)


_NO_GRAPH = ("sparsetorch.jit runs {what} eagerly (torch's backend='eager' semantics): there is "
             "no TorchScript graph to show")


class ScriptFunction:
    """What ``script(fn)`` / ``trace(fn, ...)`` return: calls ``fn`` unchanged."""

    def __init__(self, fn):
        self._fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    @property
    def name(self):
        return getattr(self._fn, "__name__", type(self._fn).__name__)

    @property
    def code(self):
        """The Python source of the function (TorchScript's pretty-printed code in torch)."""
        try:
            return inspect.getsource(self._fn)
        except (OSError, TypeError):
            return f"<source of {self.name} unavailable>"

    @property
    def graph(self):
        raise RuntimeError(_NO_GRAPH.format(what=self.name))

    @property
    def inlined_graph(self):
        raise RuntimeError(_NO_GRAPH.format(what=self.name))

    def save(self, f, _extra_files=None):
        save(self, f, _extra_files)

    def __get__(self, obj, objtype=None):  # a scripted function assigned in a class body
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self):
        return f"<sparsetorch.jit.ScriptFunction {self.name} (eager)>"


class ScriptModule(Module):
    """Base class of TorchScript modules; subclasses run eagerly (``@script_method`` methods are
    plain methods)."""

    @property
    def graph(self):
        raise RuntimeError(_NO_GRAPH.format(what=type(self).__name__))

    @property
    def code(self):
        return inspect.getsource(type(self).forward)

    def save(self, f, _extra_files=None):
        save(self, f, _extra_files)


def script_method(fn):
    """Marks a method of a ScriptModule for compilation: kept as it is."""
    _deprecated("script_method")
    return fn


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Scripts a module, function or class: modules and classes come back unchanged, functions
    as a :class:`ScriptFunction`; all run eagerly with the same results."""
    _deprecated("script")
    if _builtin_isinstance(obj, (Module, ScriptFunction, type)):
        return obj
    if callable(obj):
        return ScriptFunction(obj)
    raise RuntimeError(f"sparsetorch.jit.script: cannot script an object of type "
                       f"'{type(obj).__name__}': pass a Module, a function or a class")


def _run_example(fn, example_inputs, example_kwarg_inputs, who):
    if example_kwarg_inputs is not None:
        if not _builtin_isinstance(example_kwarg_inputs, dict):
            raise RuntimeError(f"{who}: example_kwarg_inputs should be a dict")
        return fn(**example_kwarg_inputs)
    if example_inputs is None:
        raise RuntimeError(f"{who}: example_inputs and example_kwarg_inputs cannot both be None")
    if not _builtin_isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    return fn(*example_inputs)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Traces a function or module: runs it once on the example inputs (as torch does) and
    returns the module itself / a :class:`ScriptFunction`; later calls run the Python code."""
    _deprecated("trace")
    if _builtin_isinstance(func, (Module, ScriptFunction)):
        _run_example(func, example_inputs, example_kwarg_inputs, "trace")
        return func
    if not callable(func):
        raise RuntimeError(f"trace: expected a function or a Module, got {type(func).__name__}")
    _run_example(func, example_inputs, example_kwarg_inputs, "trace")
    return ScriptFunction(func)


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True):
    """Traces the methods named in ``inputs`` (``{"forward": example_inputs}``): each is run once;
    the module comes back unchanged."""
    _deprecated("trace_module")
    if not _builtin_isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not _builtin_isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, ex in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            _run_example(method, None, ex, "trace_module")
        else:
            _run_example(method, ex, None, "trace_module")
    return mod


# ---- decorators and annotations ----

def ignore(drop=False, **kwargs):
    """``@ignore`` / ``@ignore(drop=True)``: leave a function to Python (it always is)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """``@unused``: the function is kept (run eagerly, it can still be called)."""
    return fn


def export(fn):
    """``@export``: marks a method as an entry point; kept as it is."""
    return fn


def _overload(func):
    return func


def _overload_method(func):
    return func


def _script_if_tracing(fn):
    return fn


def interface(obj):
    return obj


def annotate(the_type, the_value):
    """Gives ``the_value`` a type for the TorchScript compiler; returns ``the_value``."""
    return the_value


def Attribute(value, type=None):  # noqa: N802 - torch's name
    """Declares a module attribute's type for the compiler; returns ``value``."""
    return value


def isinstance(obj, target_type):
    """``torch.jit.isinstance``: container-aware isinstance (``List[int]``, ``Dict[str, T]``)."""
    origin = typing.get_origin(target_type)
    if origin is None:
        return _builtin_isinstance(obj, target_type)
    args = typing.get_args(target_type)
    if origin is typing.Union:
        return any(isinstance(obj, a) for a in args)
    if not _builtin_isinstance(obj, origin):
        return False
    if not args:
        return True
    if origin in (list, set, frozenset):
        return all(isinstance(x, args[0]) for x in obj)
    if origin is dict:
        return all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return all(isinstance(x, args[0]) for x in obj)
        return len(obj) == len(args) and all(isinstance(x, a) for x, a in zip(obj, args))
    return True


def is_scripting():
    """True inside TorchScript compilation: never (sparsetorch runs eagerly)."""
    return False


def is_tracing():
    """True while torch.jit.trace records: never (sparsetorch runs eagerly)."""
    return False


# ---- optimisation switches (nothing to optimise) ----

def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Returns ``mod`` (freezing inlines parameters into a TorchScript graph)."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Returns ``mod`` in eval mode."""
    return mod.eval() if _builtin_isinstance(mod, Module) else mod


_FUSION = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled):
    _FUSION["onednn"] = bool(enabled)


def onednn_fusion_enabled():
    return _FUSION["onednn"]


def set_fusion_strategy(strategy):
    old, _FUSION["strategy"] = _FUSION["strategy"], list(strategy)
    return old


@contextlib.contextmanager
def fuser(name):
    """Context manager selecting TorchScript's fuser: nothing to select."""
    yield


@contextlib.contextmanager
def strict_fusion():
    yield


# ---- archives ----

def save(m, f, _extra_files=None):
    """Refuses: a TorchScript archive holds compiled code, which sparsetorch does not produce."""
    raise NotImplementedError(
        "sparsetorch.jit.save: sparsetorch runs modules eagerly and cannot write TorchScript "
        "archives; save the weights with sparsetorch.save(module.state_dict(), f) and rebuild "
        "the module from its Python class")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Refuses: sparsetorch cannot run TorchScript archives."""
    raise NotImplementedError(
        "sparsetorch.jit.load: sparsetorch cannot read or run TorchScript archives (compiled "
        "code); load a state_dict saved with sparsetorch.save into the module's Python class "
        "instead")
