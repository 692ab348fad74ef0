"""torch._dynamo.config: the compiler's settings, with torch's defaults. sparsetorch compiles
nothing (``torch.compile`` runs eagerly), so they are recorded only; an unknown name raises
torch's AttributeError, so a misspelt setting is caught as in torch."""

import sys
import types

_DEFAULTS = {
    "cache_size_limit": 8,
    "recompile_limit": 8,
    "accumulated_cache_size_limit": 256,
    "accumulated_recompile_limit": 256,
    "suppress_errors": False,
    "verbose": False,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
    "optimize_ddp": True,
    "specialize_int": False,
    "dynamic_shapes": True,
    "guard_nn_modules": True,
    "force_parameter_static_shapes": True,
    "error_on_recompile": False,
    "inline_inbuilt_nn_modules": True,
    "raise_on_ctx_manager_usage": True,
    "allow_unspec_int_on_nn_module": False,
}


class _Config(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name, value):
        if not name.startswith("_") and name not in self.__dict__:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        super().__setattr__(name, value)

    def patch(self, arg1=None, arg2=None, **kwargs):
        """Context manager / decorator setting some values for a block."""
        import contextlib

        changes = dict(arg1) if isinstance(arg1, dict) else ({arg1: arg2} if arg1 else {})
        changes.update(kwargs)

        @contextlib.contextmanager
        def cm():
            old = {k: getattr(self, k) for k in changes}
            for k, v in changes.items():
                setattr(self, k, v)
            try:
                yield
            finally:
                for k, v in old.items():
                    setattr(self, k, v)

        return cm()

    def get_config_copy(self):
        return {k: getattr(self, k) for k in _DEFAULTS}


globals().update(_DEFAULTS)
sys.modules[__name__].__class__ = _Config
