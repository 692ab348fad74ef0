"""torch.compile, run eagerly: torch's ``backend="eager"`` semantics for every backend.

``compile(model)`` validates its arguments as torch does (``mode``, ``backend``, ``mode`` with
``options``) and returns:

- for an ``nn.Module``: an :class:`OptimizedModule` wrapping it, as torch's (``_orig_mod`` is
  the original; its ``state_dict`` keys carry the ``_orig_mod.`` prefix, as in torch; other
  attributes are read through to the original);
- for a function: a wrapper (``functools.wraps``, ``__wrapped__`` is the function);
- without ``model``: a decorator taking the model (``@torch.compile(mode="max-autotune")``).

The compiled object runs the original Python code at every call: results are the eager ones,
bit for bit. ``disable=True`` returns the model itself.
"""

import functools

from ..nn.modules.module import Module
from . import exc

__all__ = ["OptimizedModule", "compile", "list_backends", "lookup_backend", "register_backend"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# torch 2.13's registered backends with their tags (list_backends(exclude_tags=())); each
# runs eagerly here
_DBG, _EXP = ("debug",), ("experimental",)
_BACKENDS = {
    "aot_eager": _DBG, "aot_eager_decomp_partition": _DBG, "aot_eager_default_partitioner": _DBG,
    "aot_ts": _EXP, "cudagraphs": (), "eager": _DBG, "eager_debug": _DBG, "eager_noexcept": _DBG,
    "inductor": (), "openxla": (), "openxla_eval": _EXP, "pre_dispatch_eager": _DBG,
    "ts": _EXP, "tvm": (),
}
_USER_BACKENDS = {}


def list_backends(exclude_tags=("debug", "experimental")):
    """Backend names torch.compile accepts (torch 2.13's list; all run eagerly here)."""
    exclude = set(exclude_tags or ())
    names = [n for n, tags in _BACKENDS.items() if not exclude & set(tags)]
    return sorted(set(names) | set(_USER_BACKENDS))


def register_backend(compiler_fn=None, name=None, tags=()):
    """Registers a custom backend name (decorator); its function is never called here."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    _USER_BACKENDS[name or compiler_fn.__name__] = compiler_fn
    return compiler_fn


def lookup_backend(compiler_fn):
    if isinstance(compiler_fn, str):
        if compiler_fn not in _BACKENDS and compiler_fn not in _USER_BACKENDS:
            raise exc.InvalidBackend(compiler_fn)
        return _USER_BACKENDS.get(compiler_fn, compiler_fn)
    return compiler_fn


class OptimizedModule(Module):
    """A compiled module (eager): calls ``_orig_mod``; attributes read through to it."""

    def __init__(self, mod, dynamo_ctx=None):
        super().__init__()
        self._orig_mod = mod
        self.training = mod.training
        self.dynamo_ctx = dynamo_ctx

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None,
            options=None, name=None, disable=False, recompile_limit=None,
            isolate_recompiles=False, shapes_spec=None):
    """Optimizes a model or function with TorchDynamo in torch; here it runs eagerly with the
    same results (torch's ``backend="eager"``), after torch's argument checks."""
    if model is None:
        def decorator(m):
            return compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, name=name, disable=disable,
                           recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
        return decorator
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified "
                           "at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if backend is None:
        backend = "inductor"
    lookup_backend(backend)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)
    if not callable(model):
        raise RuntimeError(f"torch.compile: expected a callable (a function or an nn.Module), "
                           f"got {type(model).__name__}")

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)

    return compiled
