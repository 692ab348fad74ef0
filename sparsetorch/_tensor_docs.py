"""Docstrings of the Tensor methods and properties that ``_tensor.py`` defines (the data
model) and of the forwards whose op has no summary of its own, in torch's style: signature,
then what it does (and what it does for the sparse layouts). ``_tensor_methods._document``
applies them at import (the forwards to public ops get theirs from the op: "See
:func:`sparsetorch.abs`"). Data only.
"""

DOCS = {
    # ---- metadata ----
    "shape": (
        "Size of ``self`` (a ``sparsetorch.Size``); for sparse tensors the logical dense shape."
    ),
    "size": (
        "size(dim=None) -> Size or int\n\n"
        "The shape of ``self``, or the size of dimension ``dim``. Sparse tensors report their "
        "logical dense shape."
    ),
    "dim": (
        "dim() -> int\n\n"
        "Number of dimensions of ``self`` (``ndimension()`` is an alias); sparse tensors count "
        "sparse and dense dims."
    ),
    "ndim": "Number of dimensions of ``self``; alias for :meth:`~Tensor.dim`.",
    "numel": (
        "numel() -> int\n\n"
        "Number of elements of ``self``'s (logical) shape, stored or not for sparse tensors "
        "(``nelement()`` is an alias). For the stored count use ``_nnz()``."
    ),
    "element_size": (
        "element_size() -> int\n\n"
        "Size in bytes of one element of ``self``'s dtype."
    ),
    "itemsize": (
        "Size in bytes of one element of ``self``'s dtype; alias for "
        ":meth:`~Tensor.element_size`."
    ),
    "nbytes": "``numel() * element_size()``: bytes of ``self``'s logical (dense) shape.",
    "stride": (
        "stride(dim=None) -> tuple or int\n\n"
        "Strides of ``self`` in elements, or the stride of dimension ``dim``. Sparse tensors "
        "have no strides (RuntimeError, as torch)."
    ),
    "data_ptr": (
        "data_ptr() -> int\n\n"
        "Address of the first element of ``self`` (strided tensors only; RuntimeError for "
        "sparse tensors)."
    ),
    "get_device": (
        "get_device() -> int\n\n"
        "The CUDA device index of ``self``, or -1 on the CPU."
    ),
    "is_cpu": "True if ``self`` is stored on the CPU.",
    "is_cuda": "True if ``self`` is stored on a CUDA GPU.",
    "is_sparse": "True if ``self`` has the ``sparse_coo`` layout.",
    "is_sparse_csr": "True if ``self`` has the ``sparse_csr`` layout.",
    "is_complex": (
        "is_complex() -> bool\n\n"
        "True if ``self``'s dtype is a complex type."
    ),
    "is_floating_point": (
        "is_floating_point() -> bool\n\n"
        "True if ``self``'s dtype is a floating-point type."
    ),
    "is_contiguous": (
        "is_contiguous(memory_format=torch.contiguous_format) -> bool\n\n"
        "True if ``self`` is laid out in row-major order without gaps (False for sparse "
        "tensors, as torch)."
    ),
    "contiguous": (
        "contiguous(memory_format=torch.contiguous_format) -> Tensor\n\n"
        "``self`` if it is contiguous, else a contiguous copy; a sparse tensor is returned as "
        "it is."
    ),
    # ---- autograd ----
    "requires_grad": "True if gradients need to be computed for ``self`` (settable on leaves).",
    "requires_grad_": (
        "requires_grad_(requires_grad=True) -> Tensor\n\n"
        "Set ``self.requires_grad`` in place and return ``self`` (leaves only, as torch)."
    ),
    "is_leaf": "True if ``self`` was not produced by a recorded operation (``grad_fn is None``).",
    "output_nr": "Index of ``self`` among the outputs of its ``grad_fn`` (0 for leaves).",
    "retains_grad": (
        "True if a non-leaf ``self`` keeps its ``.grad`` (see :meth:`~Tensor.retain_grad`)."
    ),
    "retain_grad": (
        "retain_grad() -> None\n\n"
        "Make a non-leaf ``self`` keep its ``.grad`` after backward."
    ),
    "data": "``self`` detached from the graph, sharing its storage (torch's ``.data``).",
    "detach": (
        "detach() -> Tensor\n\n"
        "A new tensor sharing ``self``'s data and layout (dense or sparse), detached from the "
        "graph."
    ),
    "detach_": (
        "detach_() -> Tensor\n\n"
        "Detach ``self`` from the graph in place (not allowed for views)."
    ),
    "backward": (
        "backward(gradient=None, retain_graph=None, create_graph=False, inputs=None)\n\n"
        "Compute the gradient of ``self`` w.r.t. the graph leaves and accumulate it into their "
        "``.grad`` (sparse leaves get gradients of their layout). ``gradient`` is needed for "
        "non-scalar ``self``."
    ),
    "register_hook": (
        "register_hook(hook) -> RemovableHandle\n\n"
        "Register ``hook(grad)``, called with ``self``'s gradient; it may return a replacement "
        "gradient."
    ),
    "register_post_accumulate_grad_hook": (
        "register_post_accumulate_grad_hook(hook) -> RemovableHandle\n\n"
        "Register ``hook(tensor)`` on a leaf, called after its ``.grad`` has been accumulated."
    ),
    "T": (
        "``self`` with its dimensions reversed (``permute(n-1, ..., 0)``); works for sparse "
        "tensors."
    ),
    "mT": (
        "``self`` with its last two dimensions transposed (batched matrix transpose); works for"
        " sparse tensors."
    ),
    # ---- copies and conversions ----
    "clone": (
        "clone(*, memory_format=torch.preserve_format) -> Tensor\n\n"
        "A copy of ``self`` of the same layout (a sparse clone copies indices and values), "
        "recorded in the graph."
    ),
    "to": (
        "to(*args, **kwargs) -> Tensor\n\n"
        "Dtype and/or device conversion: ``to(dtype)``, ``to(device=None, dtype=None)``, "
        "``to(other)``, with ``non_blocking=False, copy=False``. Keeps the layout; returns "
        "``self`` when nothing changes."
    ),
    "cpu": (
        "cpu() -> Tensor\n\n"
        "A copy of ``self`` in CPU memory (``self`` if already there); keeps the layout."
    ),
    "cuda": (
        "cuda(device=None, non_blocking=False) -> Tensor\n\n"
        "A copy of ``self`` in CUDA memory (CuPy); keeps the layout."
    ),
    "type": (
        "type(dtype=None, non_blocking=False) -> str or Tensor\n\n"
        "With no ``dtype`` the type name (``'torch.FloatTensor'``), else ``self`` converted to "
        "that type."
    ),
    "type_as": (
        "type_as(other) -> Tensor\n\n"
        "``self`` converted to ``other``'s dtype (the layout is kept)."
    ),
    "item": (
        "item() -> number\n\n"
        "The value of a one-element tensor as a Python number (sparse tensors included)."
    ),
    "tolist": (
        "tolist() -> list or number\n\n"
        "``self`` as nested Python lists (a number for a 0-d tensor); sparse tensors raise "
        "(call ``to_dense()`` first)."
    ),
    "numpy": (
        "numpy(*, force=False) -> numpy.ndarray\n\n"
        "A NumPy array sharing memory with a CPU strided ``self``; ``force=True`` also detaches"
        " and copies from the GPU. Sparse tensors raise (use ``to_dense()`` or "
        "``sparsetorch.sparse.to_scipy``)."
    ),
    "new_tensor": (
        "new_tensor(data, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
        "A tensor from ``data`` with ``self``'s dtype and device unless given."
    ),
    "new_zeros": (
        "new_zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
        "A tensor of zeros of ``self``'s layout, dtype and device unless given (for a sparse "
        "``self``, a sparse tensor with no stored entries, as torch)."
    ),
    "new_empty": (
        "new_empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
        "An uninitialised tensor of ``self``'s layout (for a sparse ``self``, one with no "
        "stored entries), dtype and device unless given."
    ),
    "new_ones": (
        "new_ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
        "A strided tensor of ones with ``self``'s dtype and device unless given."
    ),
    "new_full": (
        "new_full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor\n\n"
        "A strided tensor filled with ``fill_value``, ``self``'s dtype and device unless given."
    ),
    # ---- sparse accessors and conversions (their ops have no summary) ----
    "crow_indices": (
        "crow_indices() -> Tensor\n\n"
        "The compressed row pointers of a CSR ``self`` (``nrows + 1`` entries, int64)."
    ),
    "col_indices": (
        "col_indices() -> Tensor\n\n"
        "The column indices of the stored entries of a CSR ``self``."
    ),
    "sparse_dim": (
        "sparse_dim() -> int\n\n"
        "Number of sparse dimensions of a sparse ``self`` (0 for strided tensors, as torch)."
    ),
    "dense_dim": (
        "dense_dim() -> int\n\n"
        "Number of dense dimensions of a sparse ``self`` (those of each stored value of a "
        "hybrid tensor; 0 for strided tensors)."
    ),
    "is_coalesced": (
        "is_coalesced() -> bool\n\n"
        "True if a COO ``self`` has sorted indices without duplicates (see "
        ":meth:`~Tensor.coalesce`)."
    ),
    "to_sparse_coo": (
        "to_sparse_coo() -> Tensor\n\n"
        "``self`` in the COO layout (from strided or CSR)."
    ),
    "to_sparse_csr": (
        "to_sparse_csr(dense_dim=None) -> Tensor\n\n"
        "``self`` in the CSR layout (from strided or COO; 2-D, or batched 3-D)."
    ),
    "expand_as": (
        "expand_as(other) -> Tensor\n\n"
        "``self.expand(other.size())``."
    ),
    "reshape_as": (
        "reshape_as(other) -> Tensor\n\n"
        "``self.reshape(other.shape)``."
    ),
}

_CASTS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
          "int": "int32", "long": "int64", "short": "int16", "char": "int8", "byte": "uint8",
          "bool": "bool", "cfloat": "complex64", "cdouble": "complex128"}
for _name, _dt in _CASTS.items():
    DOCS[_name] = (f"{_name}() -> Tensor\n\n``self.to(torch.{_dt})``: ``self`` converted to "
                   f"{_dt} (``self`` if it already is); keeps the layout.")
del _name, _dt
