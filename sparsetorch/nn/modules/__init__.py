"""Layers of sparsetorch.nn (torch.nn.modules): re-exports only."""

from .module import Module  # noqa: F401
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401

# ---- core layers ----
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .dropout import (  # noqa: F401
    AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout,
)
from .activation import (  # noqa: F401
    CELU, ELU, GELU, GLU, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, ReLU, ReLU6, RReLU, SELU,
    SiLU, Sigmoid, Softmax, Softmin, Softplus, Softsign, Tanh, Tanhshrink, Threshold,
)
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HingeEmbeddingLoss,
    HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss, SoftMarginLoss,
)

# ---- sparse layers (Embedding, EmbeddingBag, sparse linear) ----
from .sparse import Embedding, EmbeddingBag  # noqa: F401,E402
from .sparse_linear import SparseLinear  # noqa: F401,E402

# ---- conv / pooling / rnn layers ----
from .conv import Conv1d, Conv2d, Conv3d  # noqa: F401,E402
from .pooling import (  # noqa: F401,E402
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d,
    MaxPool1d, MaxPool2d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401,E402

# ---- attention / transformer layers ----
from .attention import MultiheadAttention  # noqa: F401,E402
from .transformer import (  # noqa: F401,E402
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer,
)
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401,E402
from .group_norm import GroupNorm, PReLU  # noqa: F401,E402
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401,E402

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AlphaDropout", "AvgPool1d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d",
    "BatchNorm2d", "Bilinear", "CELU", "Conv1d", "Conv2d", "Conv3d", "CosineEmbeddingLoss",
    "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "EmbeddingBag", "Flatten", "GELU", "GLU",
    "GRU", "GRUCell", "Hardtanh", "HingeEmbeddingLoss", "HuberLoss", "Identity", "KLDivLoss",
    "L1Loss", "LSTM", "LSTMCell", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax",
    "MSELoss", "MarginRankingLoss", "MaxPool1d", "MaxPool2d", "Mish", "Module", "ModuleDict",
    "ModuleList", "NLLLoss", "ParameterDict", "ParameterList", "RNN", "RNNBase", "RNNCell",
    "RNNCellBase", "ReLU", "ReLU6", "SELU", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss",
    "SoftMarginLoss", "Softmax", "Softmin", "Softplus", "Softsign", "SparseLinear", "Tanh",
    "Tanhshrink", "Threshold", "Unflatten",
]
__all__ += [  # attention / transformer layers
    "MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerEncoderLayer",
]
__all__ += ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "GroupNorm", "PReLU"]
__all__ += ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
__all__ += ["Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout", "RReLU"]
