"""torch.optim: optimizers (all accept sparse gradients; see ``Optimizer``'s ``sparse_mode``) and
learning-rate schedulers."""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rowwise_adagrad import RowWiseAdagrad
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "RowWiseAdagrad",
           "SparseAdam", "lr_scheduler"]

# as torch.optim does: the optimizer modules stay importable (``sparsetorch.optim.adam``) but are
# not names of the package (tests/test_namespaces.py)
del adadelta, adagrad, adam, lbfgs, optimizer, rmsprop, rowwise_adagrad, sgd, sparse_adam  # noqa: F821
