"""What the float32 fast-math kernel tests share: the skip when the kernels are off, and the
error in units of the last place."""

import numpy as np
import pytest

from sparsetorch import _jit
from sparsetorch.nn._kernels import pointwise as PK


def needs_numba_kernels():
    if _jit.kernels("nn_pointwise", PK._build) is None:
        pytest.skip("numba kernels off or missing")


def ulps(got, ref, scale, tiny):
    """|got - ref| in float32 spacings of |scale| (at least ``tiny``: the denormal floor)."""
    sp = np.maximum(np.spacing(np.abs(scale).astype(np.float32)).astype(np.float64), tiny)
    return np.abs(got.astype(np.float64) - ref) / sp
