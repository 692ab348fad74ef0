"""torch.utils.tensorboard: ``SummaryWriter`` writing TensorBoard event files.

Built on the ``tensorboard`` package (its protobufs and ``EventFileWriter``), which is required:
``pip install tensorboard``. Accepts sparsetorch tensors, NumPy arrays and Python numbers.
"""

try:
    import tensorboard as _tensorboard
except ImportError as e:  # torch needs the package too; say how to get it
    raise ImportError(
        "TensorBoard logging requires the tensorboard package: pip install tensorboard") from e

if tuple(int(p) for p in _tensorboard.__version__.split(".")[:2] if p.isdigit()) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")
del _tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
