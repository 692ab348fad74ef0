"""Sparse layers: Embedding and EmbeddingBag (thin modules over nn.functional.embedding*)."""

from ... import _jit
from ... import _ops as _st
from ..._backend import CPU
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .._kernels import embedding as _kernels
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _check_padding_idx(padding_idx, num_embeddings):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        if padding_idx >= num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = num_embeddings + padding_idx
    return padding_idx


def _init_weight(module, num_embeddings, embedding_dim, _weight, device, dtype, requires_grad):
    if _weight is None:
        w = _st.empty((num_embeddings, embedding_dim), device=device, dtype=dtype)
        if w.device.type == "cpu" and w.dtype.np.kind == "f":
            # rows from a cache-line boundary (DLRM batch 128, 100k x 16 tables: the embedding
            # forward took 0.81x torch's time on NumPy's 16-byte alignment, 0.67x on 64)
            w = _st.from_numpy(_kernels.aligned_empty(CPU.xp, tuple(w.shape), w.dtype.np))
        module.weight = Parameter(w, requires_grad=requires_grad)
        module.reset_parameters()
    else:
        if list(_weight.shape) != [num_embeddings, embedding_dim]:
            raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
        module.weight = Parameter(_weight, requires_grad=requires_grad)
    _warm_kernels(module.weight)


def _warm_kernels(w):
    """Load the cached numba kernels of the lookup and its gradient now (sparsetorch._jit.warm),
    so that the first training iteration runs at its steady speed; nothing off the CPU."""
    if w.device.type == "cpu" and w.dtype.np.kind == "f":
        _jit.warm(_kernels.kernels(CPU), w.dtype.np)


class _TableModule(Module):
    """What Embedding and EmbeddingBag share: an N(0, 1) table whose padding row is zero."""

    def reset_parameters(self):
        with no_grad():
            self.weight.normal_()
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)


class Embedding(_TableModule):
    r"""A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``.

    Args:
        num_embeddings (int): size of the dictionary of embeddings
        embedding_dim (int): the size of each embedding vector
        padding_idx (int, optional): the entries at ``padding_idx`` do not contribute to the
            gradient; the row is initialised to zeros.
        max_norm (float, optional): each looked-up vector with a norm larger than ``max_norm``
            is renormalised (in place) to have norm ``max_norm``.
        norm_type (float, optional): the p of the p-norm for ``max_norm``. Default ``2``.
        scale_grad_by_freq (bool, optional): scale gradients by the inverse of the words'
            frequency in the mini-batch. Default ``False``.
        sparse (bool, optional): the gradient w.r.t. ``weight`` is a sparse COO tensor
            (uncoalesced, one row per looked-up id, as torch's).

    Attributes:
        weight (Tensor): the learnable weights ``(num_embeddings, embedding_dim)``, from N(0, 1).
    """

    __constants__ = ("num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse")

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _check_padding_idx(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        _init_weight(self, num_embeddings, embedding_dim, _weight, device, dtype, not _freeze)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        r"""An Embedding whose weight is the given 2-D ``embeddings`` (shared, not copied);
        ``freeze=True`` (default) leaves it out of training (``requires_grad=False``)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(_TableModule):
    r"""Sums, means, maxes or sqrtn-combines bags of embeddings without building the lookups.

    Args as :class:`Embedding`, plus:
        mode (str): ``'sum'``, ``'mean'`` (default), ``'max'`` or ``'sqrtn'`` (the sum divided
            by the square root of the bag size, TensorFlow's combiner).
        sparse (bool): the gradient w.r.t. ``weight`` is a *coalesced* sparse COO tensor; in
            every mode, ``'max'`` included (torch refuses it there).
        include_last_offset (bool): ``offsets`` has one more element, the end of the last bag.
        padding_idx (int, optional): ids equal to it are left out of the bags (and of their
            sizes in ``'mean'``/``'sqrtn'``).

    ``forward(input, offsets=None, per_sample_weights=None)``: ``per_sample_weights`` works in
    ``'sum'``, ``'mean'`` and ``'sqrtn'`` (torch: ``'sum'`` only); the weighted sum is divided
    by the bag's number of ids (resp. its square root).
    """

    __constants__ = ("num_embeddings", "embedding_dim", "max_norm", "norm_type",
                     "scale_grad_by_freq", "mode", "sparse", "include_last_offset", "padding_idx")

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        if mode not in ("sum", "mean", "max", "sqrtn"):
            raise ValueError("mode has to be one of sum, mean, max or sqrtn")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _check_padding_idx(padding_idx, num_embeddings)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        _init_weight(self, num_embeddings, embedding_dim, _weight, device, dtype, True)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        s += ", mode={mode!r}"
        if self.sparse is not False:
            s += ", sparse=True"
        if self.include_last_offset is not False:
            s += ", include_last_offset={include_last_offset}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        return s.format(**{k: getattr(self, k) for k in self.__constants__})

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        r"""An EmbeddingBag whose weight is the given 2-D ``embeddings`` (shared, not copied)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode,
                  sparse=sparse, include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
