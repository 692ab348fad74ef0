"""Anomaly detection for the autograd engine (torch.autograd.detect_anomaly).

While enabled with ``check_nan`` (the default), the engine checks the gradients every backward
node returns and raises torch's ``RuntimeError`` ("Function 'MulBackward0' returned nan values
in its 0th output.") at the first NaN, after a warning naming the node. One process-wide
setting, as torch's. The forward tracebacks torch records for each node are not kept.
When off, the engine's cost is one list lookup per node.
"""

import warnings

__all__ = ["detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled",
           "set_anomaly_enabled", "set_detect_anomaly"]

# [enabled, check_nan]: read by the engine for each node it runs
STATE = [False, True]


def is_anomaly_enabled():
    """Whether anomaly detection is on."""
    return STATE[0]


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection checks backward results for NaN."""
    return STATE[1]


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off process-wide (``check_nan``: also check for NaN)."""
    STATE[0] = bool(enabled)
    STATE[1] = bool(check_nan)


class detect_anomaly:
    """Context manager enabling anomaly detection (torch warns that it slows training)."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Sets anomaly detection on or off, now (a function call) or for a ``with`` block."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def check_nan(node, in_grads):
    """The engine's check of one node's results while anomaly detection is on."""
    for i, g in enumerate(in_grads):
        if g is None or not (g.dtype.is_floating_point or g.dtype.is_complex):
            continue
        v = g.values() if g.layout.name == "sparse_coo" else g
        if v.layout.name != "strided":
            v = g.to_dense()
        if bool(v.isnan().any()):
            warnings.warn(f"Error detected in {node.name()}. (sparsetorch does not record the "
                          "traceback of the forward call that caused the error.)", stacklevel=2)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")
