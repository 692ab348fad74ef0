"""Layers of sparsetorch.nn (torch.nn.modules): re-exports only."""

from .module import Module  # noqa: F401
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401

# ---- core layers (nn core) ----
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .dropout import AlphaDropout, Dropout  # noqa: F401
from .activation import (  # noqa: F401
    CELU, ELU, GELU, GLU, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, ReLU, ReLU6, SELU,
    SiLU, Sigmoid, Softmax, Softmin, Softplus, Softsign, Tanh, Tanhshrink, Threshold,
)
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HingeEmbeddingLoss,
    HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss, SoftMarginLoss,
)

# ---- sparse layers (Embedding, EmbeddingBag, sparse linear): added by their owner ----
from .sparse import Embedding, EmbeddingBag  # noqa: F401,E402
from .sparse_linear import SparseLinear  # noqa: F401,E402

# ---- conv / pooling / rnn layers: added by their owner ----
from .conv import Conv1d, Conv2d, Conv3d  # noqa: F401,E402
from .pooling import (  # noqa: F401,E402
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d,
    MaxPool1d, MaxPool2d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401,E402
