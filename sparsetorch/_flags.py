"""Process-wide switches that kernels read (ground floor: imports nothing from sparsetorch).

- ``deterministic()``: True when ``torch.use_deterministic_algorithms(True)`` or
  ``torch.backends.cudnn.deterministic = True`` is set. The CUDA backend then replaces the
  atomic scatter kernels (CuPy's ``add.at``, whose float sums depend on thread timing) by a
  sort-and-segment-sum with a fixed order (``_xpcompat``). Every CPU kernel is deterministic
  whatever the flags (see docs/design-notes.md, "Determinism").
- the float32 matmul precision and the backend flags that ``sparsetorch.backends`` exposes.
"""

import warnings

__all__ = ["STATE", "alert_nondeterministic", "deterministic", "uninitialized_fill"]

# torch's defaults (torch 2.13, CPU build): see sparsetorch/backends/
STATE = {
    "deterministic": False,        # torch.use_deterministic_algorithms
    "warn_only": False,
    "cudnn_deterministic": False,  # torch.backends.cudnn.deterministic
    "cudnn_enabled": True,
    "cudnn_benchmark": False,
    "cudnn_allow_tf32": True,
    "matmul_precision": "highest",  # torch.set_float32_matmul_precision
    "fp16_reduced": True,          # backends.cuda.matmul.allow_fp16_reduced_precision_reduction
    "bf16_reduced": True,
    "fp16_accumulation": False,
    "mkldnn_enabled": True,
    "mkldnn_deterministic": False,
    "mkldnn_allow_tf32": None,  # torch 2.13 reports None until it is set
    "fill_uninitialized_memory": True,  # torch.utils.deterministic.fill_uninitialized_memory
}


def deterministic():
    """Whether kernels must give bit-identical results from run to run."""
    s = STATE
    return s["deterministic"] or s["cudnn_deterministic"]


def uninitialized_fill(np_dtype):
    """The value ``empty`` fills new memory with (None: leave it uninitialized): under
    ``use_deterministic_algorithms(True)`` with ``fill_uninitialized_memory``, as torch: NaN for
    floating and complex types, the largest value for integers, True for bool."""
    if not (STATE["deterministic"] and STATE["fill_uninitialized_memory"]):
        return None
    kind = np_dtype.kind
    if kind == "b":
        return True
    if kind in "iu":
        import numpy as np

        return np.iinfo(np_dtype).max
    if kind == "c":
        return complex(float("nan"), 0.0)
    return float("nan")


def alert_nondeterministic(caller):
    """For an op without a deterministic implementation: under
    ``use_deterministic_algorithms(True)`` raise torch's RuntimeError (warn with
    ``warn_only=True``); otherwise nothing."""
    if not STATE["deterministic"]:
        return
    if STATE["warn_only"]:
        warnings.warn(f"{caller} does not have a deterministic implementation, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)'.",
                      UserWarning, stacklevel=3)
        return
    raise RuntimeError(
        f"{caller} does not have a deterministic implementation, but you set "
        "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
        "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
        "application.")
