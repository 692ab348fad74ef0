"""sparsetorch.nn.functional (torch.nn.functional): stateless functions over sparsetorch ops.

Sections below are owned by different parts of nn; each adds its functions in its own section.
"""

# ---- core: activations, linear, dropout, normalization, losses (nn core) ----
from ._functional.activation import (  # noqa: F401,E402
    celu, elu, elu_, gelu, glu, hardtanh, hardtanh_, leaky_relu, leaky_relu_, log_softmax,
    logsigmoid, mish, relu, relu6, relu_, selu, sigmoid, silu, softmax, softmin, softplus,
    softsign, tanh, tanhshrink, threshold,
)
from ._functional.linear import (  # noqa: F401,E402
    alpha_dropout, batch_norm, bilinear, cosine_similarity, dropout, layer_norm, linear, normalize,
    one_hot, pairwise_distance,
)
from ._functional.loss import (  # noqa: F401,E402
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss, cross_entropy,
    hinge_embedding_loss, huber_loss, kl_div, l1_loss, margin_ranking_loss, mse_loss, nll_loss,
    smooth_l1_loss, soft_margin_loss,
)

# ---- sparse: embedding, embedding_bag, sparse linear ----
from ._functional.embedding import embedding, embedding_bag  # noqa: F401,E402

# ---- conv / pooling / rnn ----
from ._functional.conv import conv1d, conv2d, conv3d, fold, pad, unfold  # noqa: F401,E402
from ._functional.pooling import (  # noqa: F401,E402
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d,
    avg_pool2d, max_pool1d, max_pool2d,
)

# ---- attention (scaled_dot_product_attention with dense / sparse masks, multi-head) ----
from ._functional.attention import (  # noqa: F401,E402
    _canonical_mask, _none_or_dtype, multi_head_attention_forward, scaled_dot_product_attention,
)

# ---- transposed convolution, group_norm, prelu, interpolate ----
from ._functional.conv_transpose import (  # noqa: F401,E402
    conv_transpose1d, conv_transpose2d, conv_transpose3d,
)
from ._functional.group_norm import group_norm, prelu  # noqa: F401,E402
from ._functional.upsampling import (  # noqa: F401,E402
    interpolate, upsample, upsample_bilinear, upsample_nearest,
)

# ---- channel-wise dropout, gumbel_softmax, rrelu (torch's random streams) ----
from ._functional.stochastic import (  # noqa: F401,E402
    dropout1d, dropout2d, dropout3d, feature_alpha_dropout, gumbel_softmax, rrelu, rrelu_,
)

# ---- distances (issue 15) ----
from .._ops.distance import pdist  # noqa: F401,E402 - F.pdist is torch.pdist


def __getattr__(name):  # PEP 562: only names not found above reach here
    if name == "__all__":  # help() lists, and ``import *`` takes, every public name of the moment
        return sorted(n for n in globals() if not n.startswith("_"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
