"""The malformed-input catalogue: (id, callable, expected exception type, message regex).

Each callable takes the library module (``sparsetorch``; ``torch`` in the parity test) and must
raise the given type with a message matching the regex -- a message that names the argument and
what was wrong, never NumPy's or SciPy's from deep inside. Cases that need ``sparsetorch.save`` /
``load`` or ``sparsetorch.utils.data`` live in ``test_malformed.py`` (built only when they exist).
"""

import math

from sparsetorch import DenseAllocationError

V = ValueError
T = TypeError
I = IndexError
R = RuntimeError
N = NotImplementedError
nan = math.nan


def _i(t, rows):
    return t.tensor(rows, dtype=t.int64)


def _coo(t, shape=(3, 4)):
    return t.sparse_coo_tensor(_i(t, [[0, 1, 2], [1, 0, 3]]), t.tensor([1.0, 2.0, 3.0]), shape)


def _uncoalesced(t):
    return t.sparse_coo_tensor(_i(t, [[0, 0], [1, 1]]), t.tensor([1.0, 2.0]), (2, 2))


def _csr(t, crow, col, vals=None, size=None, dt=None):
    dt = dt or t.int64
    v = t.tensor([1.0] * len(col)) if vals is None else vals
    return t.sparse_csr_tensor(t.tensor(crow, dtype=dt), t.tensor(col, dtype=dt), v, size)


def _bag(t, inp, offsets, **kw):
    bag = t.nn.EmbeddingBag(10, 3, mode=kw.pop("mode", "sum"))
    return bag(_i(t, inp), _i(t, offsets) if isinstance(offsets, list) else offsets, **kw)


def _opt_twice(t):
    w = t.nn.Parameter(t.zeros(2))
    return t.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)


def _add_group_twice(t):
    w = t.nn.Parameter(t.zeros(2))
    opt = t.optim.Adam([w])
    opt.add_param_group({"params": [w]})


def _non_leaf(t):
    w = t.zeros(2, requires_grad=True) * 2
    return t.optim.SGD([w], lr=0.1)


def _clip_nonfinite(t):
    w = t.nn.Parameter(t.zeros(2))
    w.grad = t.tensor([nan, 1.0])
    return t.nn.utils.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)


# (id, callable, type, regex). Regexes name the argument/invariant, as the message must.
CASES = [
    # ---- sparse_coo_tensor ----
    ("coo-float-indices", lambda t: t.sparse_coo_tensor(t.tensor([[0.0, 1.0]]), t.tensor([1.0, 2.0]), (3,)), (T, R), r"indices.*(int|Long)"),
    ("coo-bool-indices", lambda t: t.sparse_coo_tensor(t.tensor([[True, False]]), t.tensor([1.0, 2.0]), (3,)), (T, R), r"indices.*(int|Long)"),
    ("coo-indices-3d", lambda t: t.sparse_coo_tensor(t.zeros(1, 1, 2, dtype=t.int64), t.tensor([1.0, 2.0]), (3,)), (V, R), r"indices.*2-?D|indices must be"),
    ("coo-nnz-mismatch", lambda t: t.sparse_coo_tensor(_i(t, [[0, 1]]), t.tensor([1.0]), (3,)), (V, R), r"nnz"),
    ("coo-negative-index", lambda t: t.sparse_coo_tensor(_i(t, [[0, -1]]), t.tensor([1.0, 2.0]), (3,)), (V, R), r"negative"),
    ("coo-index-past-size", lambda t: t.sparse_coo_tensor(_i(t, [[0, 3]]), t.tensor([1.0, 2.0]), (3,)), (V, R), r"size is inconsistent with indices|found index 3"),
    ("coo-size-too-few-dims", lambda t: t.sparse_coo_tensor(_i(t, [[0], [1]]), t.tensor([1.0]), (3,)), (V, R), r"number of dimensions|sparse_dim"),
    ("coo-negative-size", lambda t: t.sparse_coo_tensor(_i(t, [[0]]), t.tensor([1.0]), (-3,)), (V, R), r"(size|dimension).*(non-?negative|negative)"),
    ("coo-values-0d", lambda t: t.sparse_coo_tensor(_i(t, [[0]]), t.tensor(1.0), (3,)), (V, R), r"values.*(0-d|dimension|nnz)"),
    ("coo-dense-dims-mismatch", lambda t: t.sparse_coo_tensor(_i(t, [[0, 1]]), t.ones(2, 3), (5, 4)), (V, R), r"dense"),
    ("coo-is-coalesced-lie", lambda t: t.sparse_coo_tensor(_i(t, [[1, 0]]), t.tensor([1.0, 2.0]), (3,), is_coalesced=True), V, r"is_coalesced=True.*not sorted"),
    ("coo-size-not-ints", lambda t: t.sparse_coo_tensor(_i(t, [[0]]), t.tensor([1.0]), "abc"), T, r"size"),
    ("coo-ragged-indices", lambda t: t.sparse_coo_tensor([[0, 1], [2]], [1.0, 2.0], (3, 3)), (V, T), r"sequence|shape|ragged|length"),
    ("coo-values-sparse", lambda t: t.sparse_coo_tensor(_i(t, [[0]]), _coo(t), (3,)), (T, R), r"values.*dense|Strided|layout"),
    # ---- sparse_csr_tensor ----
    ("csr-crow-first-not-0", lambda t: _csr(t, [1, 1, 2], [0, 1], size=(2, 2)), (V, R), r"crow_indices\[\.\.\., 0\] == 0"),
    ("csr-crow-last-not-nnz", lambda t: _csr(t, [0, 1, 3], [0, 1], size=(2, 2)), (V, R), r"crow_indices\[\.\.\., -1\] == nnz"),
    ("csr-crow-decreasing", lambda t: _csr(t, [0, 2, 1, 2], [0, 1], size=(3, 2)), (V, R), r"non-decreasing|crow_indices\[\.\.\., 1:\]"),
    ("csr-col-past-ncols", lambda t: _csr(t, [0, 1, 2], [0, 2], size=(2, 2)), (V, R), r"col_indices < ncols"),
    ("csr-col-negative", lambda t: _csr(t, [0, 1, 2], [0, -1], size=(2, 2)), (V, R), r"col_indices < ncols"),
    ("csr-col-unsorted", lambda t: _csr(t, [0, 2], [1, 0], size=(1, 2)), (V, R), r"sorted and distinct"),
    ("csr-col-duplicate", lambda t: _csr(t, [0, 2], [1, 1], size=(1, 2)), (V, R), r"sorted and distinct"),
    ("csr-crow-length", lambda t: _csr(t, [0, 1, 2], [0, 1], size=(3, 2)), (V, R), r"crow_indices.*size\[-2\] \+ 1"),
    ("csr-index-dtypes-differ", lambda t: t.sparse_csr_tensor(t.tensor([0, 1], dtype=t.int32), _i(t, [0]), t.tensor([1.0]), (1, 1)), (T, R), r"same dtype|crow_indices and col_indices"),
    ("csr-float-crow", lambda t: t.sparse_csr_tensor(t.tensor([0.0, 1.0]), t.tensor([0.0]), t.tensor([1.0]), (1, 1)), (T, R), r"crow_indices.*(int|Long)"),
    ("csr-values-shape", lambda t: _csr(t, [0, 1, 2], [0, 1], vals=t.ones(3), size=(2, 2)), (V, R), r"values.*(shape|nnz)|col_indices"),
    ("csr-size-1d", lambda t: _csr(t, [0, 1], [0], size=(2,)), (V, R), r"size.*dim"),
    ("csr-negative-size", lambda t: _csr(t, [0], [], size=(0, -2)), (V, R), r"(size|dimension).*(non-?negative|negative)"),
    # ---- dense constructors ----
    ("tensor-ragged", lambda t: t.tensor([[1, 2], [3]]), (V, T), r"sequence|ragged|length"),
    ("tensor-strings", lambda t: t.tensor(["a", "b"]), (T, V), r"'str'"),
    ("tensor-string", lambda t: t.tensor("a"), T, r"invalid data type 'str'"),
    ("tensor-dtype-string", lambda t: t.tensor([1.0], dtype="float32"), T, r"dtype"),
    ("zeros-negative", lambda t: t.zeros(-1), (R, V), r"negative"),
    ("zeros-negative-2d", lambda t: t.zeros((2, -3)), (R, V), r"negative"),
    ("zeros-float-size", lambda t: t.zeros(2.5), T, r"size|float|int"),
    ("empty-negative", lambda t: t.empty(-1), (R, V), r"negative"),
    ("randn-negative", lambda t: t.randn(-2), (R, V), r"negative"),
    ("arange-zero-step", lambda t: t.arange(0, 10, 0), R, r"step"),
    ("arange-wrong-sign", lambda t: t.arange(0, 10, -1), R, r"bound|sign|step"),
    ("linspace-negative-steps", lambda t: t.linspace(0, 1, -1), R, r"steps?"),
    ("full-bad-dtype", lambda t: t.full((2,), 1.0, dtype="x"), T, r"dtype"),
    # ---- conversions / accessors ----
    ("to-sparse-dim-too-big", lambda t: t.ones(2, 2).to_sparse(5), R, r"sparse_dim"),
    ("to-sparse-csr-1d", lambda t: t.ones(3).to_sparse_csr(), R, r"2-D|2D|dim"),
    ("to-sparse-csr-hybrid", lambda t: t.ones(2, 2, 2).to_sparse(2).to_sparse_csr(), R, r"hybrid|dense dim|dense_dim"),
    ("numpy-of-sparse", lambda t: _coo(t).numpy(), (T, R), r"to_dense|sparse"),
    ("item-many", lambda t: t.ones(3).item(), R, r"one element|1 element|numel|a Tensor with 3 elements"),
    ("float-many", lambda t: float(t.ones(3)), (R, T, V), r"one element|only one|elements"),
    ("coalesce-dense", lambda t: t.ones(2).coalesce(), R, r"sparse|strided|Strided"),
    ("values-uncoalesced", lambda t: _uncoalesced(t).values(), R, r"uncoalesced"),
    ("indices-of-csr", lambda t: _csr(t, [0, 1], [0], size=(1, 1)).indices(), R, r"(?i)coordinate|coo|layout"),
    ("crow-of-coo", lambda t: _coo(t).crow_indices(), R, r"(?i)csr|layout|compressed"),
    ("to-unknown-dtype", lambda t: t.ones(2).to("float33"), (T, R, V), r"float33|dtype|device"),
    # ---- products ----
    ("mm-inner-mismatch", lambda t: t.mm(t.ones(2, 3), t.ones(4, 5)), R, r"2x3.*4x5|shapes? cannot be multiplied|size"),
    ("mm-1d", lambda t: t.mm(t.ones(3), t.ones(3, 2)), R, r"2D|2-D|matri"),
    ("matmul-0d", lambda t: t.matmul(t.tensor(1.0), t.ones(2)), R, r"at least 1|1D|dimension|0-d"),
    ("matmul-batch-mismatch", lambda t: t.matmul(t.ones(2, 2, 3), t.ones(3, 3, 4)), R, r"size|broadcast|match"),
    ("sparse-mm-mismatch", lambda t: t.sparse.mm(_coo(t), t.ones(5, 2)), R, r"3x4.*5x2|cannot be multiplied|size|shape"),
    ("csr-mm-mismatch", lambda t: t.mm(_coo(t).to_sparse_csr(), t.ones(3, 2)), R, r"3x4.*3x2|cannot be multiplied|size|shape"),
    ("sparse-sparse-mm-mismatch", lambda t: t.mm(_coo(t), _coo(t)), R, r"3x4.*3x4|cannot be multiplied|size|shape"),
    ("dense-csr-mm-mismatch", lambda t: t.mm(t.ones(2, 2), _coo(t).to_sparse_csr()), R, r"2x2.*3x4|cannot be multiplied|size|shape"),
    ("bmm-batch-mismatch", lambda t: t.bmm(t.ones(2, 2, 3), t.ones(3, 3, 4)), R, r"batch|size|match"),
    ("mv-mismatch", lambda t: t.mv(t.ones(2, 3), t.ones(4)), R, r"size|shape|2x3"),
    ("addmm-input-shape", lambda t: t.addmm(t.ones(5, 7), t.ones(2, 3), t.ones(3, 4)), R, r"size|shape|broadcast|expand"),
    # ---- broadcasting ----
    ("add-no-broadcast", lambda t: t.ones(2, 3) + t.ones(4), R, r"size of tensor a \(3\) must match.*\(4\)|broadcast"),
    ("mul-no-broadcast", lambda t: t.ones(2, 3) * t.ones(3, 2), R, r"must match|broadcast"),
    ("sparse-add-shapes", lambda t: _coo(t) + _coo(t, (4, 4)), R, r"shape|size|broadcast"),
    ("where-no-broadcast", lambda t: t.where(t.ones(2, 3) > 0, t.ones(2, 3), t.ones(4)), R, r"must match|broadcast"),
    ("expand-bad", lambda t: t.ones(2, 3).expand(4, 3), R, r"expand|size"),
    ("reshape-numel", lambda t: t.ones(2, 3).reshape(4, 2), R, r"shape '\[4, 2\]' is invalid for input of size 6"),
    ("view-numel", lambda t: t.ones(6).view(5), R, r"shape '\[5\]' is invalid for input of size 6"),
    ("cat-shapes", lambda t: t.cat([t.ones(2, 3), t.ones(2, 4)], 0), R, r"(?i)sizes of tensors must match"),
    # ---- indices and offsets ----
    ("index-select-out-of-range", lambda t: t.index_select(t.ones(3, 2), 0, _i(t, [0, 3])), I, r"out of range|index"),
    ("index-select-float-index", lambda t: t.index_select(t.ones(3, 2), 0, t.tensor([0.0])), (I, R, T), r"int|Long|dtype"),
    ("gather-out-of-range", lambda t: t.gather(t.ones(2, 2), 1, _i(t, [[0, 2], [0, 0]])), (R, I), r"out of bounds|out of range|index"),
    ("getitem-out-of-range", lambda t: t.ones(3)[5], I, r"index 5 is out of bounds for dimension 0 with size 3"),
    ("getitem-float-tensor", lambda t: t.ones(3)[t.tensor([0.5])], I, r"tensors used as indices must be long|int|bool"),
    ("sum-dim-out-of-range", lambda t: t.ones(2, 2).sum(5), I, r"Dimension out of range"),
    ("sparse-select-out-of-range", lambda t: _coo(t).select(0, 7), I, r"out of range|index"),
    ("narrow-past-end", lambda t: t.ones(4).narrow(0, 2, 5), R, r"start \(2\) \+ length \(5\) exceeds dimension size \(4\)"),
    ("scatter-out-of-range", lambda t: t.zeros(3).scatter_(0, _i(t, [5]), t.ones(1)), (R, I), r"out of bounds|out of range|index"),
    ("embedding-out-of-range", lambda t: t.nn.functional.embedding(_i(t, [0, 10]), t.ones(10, 3)), I, r"index out of range|out of range"),
    ("embedding-float-ids", lambda t: t.nn.functional.embedding(t.tensor([0.0]), t.ones(10, 3)), (R, T, I), r"(?i)long|int|indices"),
    ("embedding-negative-id", lambda t: t.nn.functional.embedding(_i(t, [-1]), t.ones(10, 3)), I, r"index out of range|out of range"),
    ("bag-offsets-decreasing", lambda t: _bag(t, [1, 2, 3, 4], [0, 3, 1]), (R, V), r"offsets"),
    ("bag-offsets-first-not-0", lambda t: _bag(t, [1, 2, 3, 4], [1, 2]), (R, V), r"offsets\[0\]|offsets"),
    ("bag-offsets-past-input", lambda t: _bag(t, [1, 2], [0, 5]), (R, V, I), r"offsets"),
    ("bag-2d-input-with-offsets", lambda t: _bag(t, [[1, 2]], [0]), V, r"offsets has to be None if input is 2D|offsets"),
    ("bag-1d-input-no-offsets", lambda t: _bag(t, [1, 2], None), V, r"offsets has to be a 1D Tensor but got None|offsets"),
    ("bag-weights-with-max", lambda t: _bag(t, [1, 2], [0], mode="max", per_sample_weights=t.ones(2)), N, r"per_sample_weights.*only supported for mode='sum'"),
    ("bag-id-out-of-range", lambda t: _bag(t, [1, 12], [0]), (I, R), r"out of range|index"),
    # ---- optimizers ----
    ("optim-param-in-two-groups", _opt_twice, V, r"more than one parameter group"),
    ("optim-add-group-twice", _add_group_twice, V, r"more than one parameter group"),
    ("optim-non-leaf", _non_leaf, V, r"non-leaf"),
    ("optim-empty-params", lambda t: t.optim.SGD([], lr=0.1), V, r"empty parameter list"),
    ("optim-tensor-not-iterable", lambda t: t.optim.SGD(t.nn.Parameter(t.zeros(2)), lr=0.1), T, r"iterable"),
    ("optim-negative-lr", lambda t: t.optim.SGD([t.nn.Parameter(t.zeros(2))], lr=-1.0), V, r"(?i)invalid learning rate"),
    ("adam-bad-beta", lambda t: t.optim.Adam([t.nn.Parameter(t.zeros(2))], betas=(1.5, 0.9)), V, r"(?i)invalid beta"),
    ("adam-negative-eps", lambda t: t.optim.Adam([t.nn.Parameter(t.zeros(2))], eps=-1.0), V, r"(?i)invalid epsilon"),
    # ---- devices ----
    ("device-unknown", lambda t: t.zeros(2, device="tpu"), R, r"(?i)device.*tpu|tpu.*device|Expected one of"),
    ("device-bad-index", lambda t: t.device("cpu:x"), R, r"(?i)device|cpu:x"),
    # ---- NaN / inf / out-of-domain values ----
    ("multinomial-nan", lambda t: t.multinomial(t.tensor([0.5, nan]), 1), R, r"(?i)probability tensor contains either `inf`, `nan` or element < 0|inf|nan"),
    ("multinomial-negative", lambda t: t.multinomial(t.tensor([0.5, -0.1]), 1), R, r"(?i)element < 0|negative"),
    ("multinomial-all-zero", lambda t: t.multinomial(t.tensor([0.0, 0.0]), 1), R, r"(?i)sum.*(zero|0)|<= 0"),
    ("multinomial-too-many", lambda t: t.multinomial(t.tensor([0.5, 0.5]), 3), R, r"(?i)replacement|categories"),
    ("bernoulli-p-above-1", lambda t: t.bernoulli(t.tensor([1.5])), R, r"0 <= p <= 1|p"),
    ("normal-negative-std", lambda t: t.normal(t.zeros(2), t.tensor([1.0, -1.0])), R, r"std"),
    ("randint-empty-range", lambda t: t.randint(5, 5, (2,)), R, r"from.*to|range|low|high"),
    ("bce-input-out-of-range", lambda t: t.nn.functional.binary_cross_entropy(t.tensor([1.5]), t.tensor([1.0])), R, r"between 0 and 1"),
    ("cross-entropy-bad-class", lambda t: t.nn.functional.cross_entropy(t.ones(2, 3), _i(t, [0, 3])), (I, R), r"[Tt]arget 3 is out of bounds|out of"),
    ("nll-negative-class", lambda t: t.nn.functional.nll_loss(t.ones(2, 3), _i(t, [0, -5])), (I, R), r"[Tt]arget -5 is out of bounds|out of"),
    ("clip-grad-nonfinite", _clip_nonfinite, R, r"non-finite"),

    # ---- shapes, dims and arguments elsewhere in the API ----
    ("mask-wrong-length", lambda t: t.ones(3)[t.tensor([True, False])], I, r"shape of the mask \[2\] at index 0 does not match"),
    ("view-two-inferred", lambda t: t.ones(4).view(-1, -1), R, r"only one dimension can be inferred"),
    ("permute-repeated-dim", lambda t: t.ones(2, 3).permute(0, 0), R, r"repeated dim|permute"),
    ("transpose-dim-range", lambda t: t.ones(2, 3).transpose(0, 5), I, r"Dimension out of range"),
    ("too-many-indices", lambda t: t.ones(2, 3)[:, :, 0], I, r"too many indices"),
    ("split-sizes-sum", lambda t: t.split(t.ones(5), [2, 2]), R, r"split_with_sizes expects split_sizes to sum exactly to 5"),
    ("stack-empty", lambda t: t.stack([]), R, r"stack expects a non-empty TensorList"),
    ("repeat-negative", lambda t: t.ones(3).repeat(2, -1), R, r"negative|repeat"),
    ("topk-k-too-big", lambda t: t.topk(t.ones(3), 5), R, r"(?i)selected index k out of range|k"),
    ("einsum-mismatch", lambda t: t.einsum("ij,jk->ik", t.ones(2, 3), t.ones(4, 5)), R, r"(?i)operand|size|subscript"),
    ("one-hot-class-too-big", lambda t: t.nn.functional.one_hot(_i(t, [3]), num_classes=2), R, r"(?i)class values must be smaller than num_classes"),
    ("one-hot-negative", lambda t: t.nn.functional.one_hot(_i(t, [-1])), R, r"(?i)class values must be non-negative"),
    ("linear-negative-features", lambda t: t.nn.Linear(3, -1), R, r"negative dimension"),
    ("dropout-p-above-1", lambda t: t.nn.functional.dropout(t.ones(2), p=1.5), V, r"dropout probability has to be between 0 and 1, but got 1.5"),
    ("softmax-dim-range", lambda t: t.nn.functional.softmax(t.ones(2, 2), dim=3), I, r"Dimension out of range"),
    ("pad-odd-length", lambda t: t.nn.functional.pad(t.ones(2, 2), (1,)), (R, V), r"(?i)padding length"),
    ("conv-channel-mismatch", lambda t: t.nn.functional.conv2d(t.ones(1, 1, 3, 3), t.ones(1, 2, 2, 2)), R, r"(?i)channels|groups|expected"),
    ("lstm-input-size", lambda t: t.nn.LSTM(3, 4)(t.ones(2, 5, 7)), R, r"input.size\(-1\) must be equal to input_size. Expected 3, got 7"),
    ("mse-shape-mismatch", lambda t: t.nn.functional.mse_loss(t.ones(2, 3), t.ones(4, 3)), R, r"must match|broadcast|size"),
    ("arange-infinite", lambda t: t.arange(0, math.inf), R, r"(?i)unsupported range|inf"),
    ("eye-negative", lambda t: t.eye(-1), R, r"n must be greater or equal to 0"),
    ("randperm-negative", lambda t: t.randperm(-1), R, r"negative|n must be non-negative"),
    ("full-nan-int", lambda t: t.full((2,), nan, dtype=t.int64), R, r"(?i)cannot be converted|overflow|nan"),
    ("from-numpy-list", lambda t: t.from_numpy([1, 2]), T, r"expected np.ndarray \(got list\)"),
    ("from-numpy-strings", lambda t: t.from_numpy(__import__("numpy").array(["a"])), T, r"can't convert np.ndarray of type"),
    # ---- autograd misuse ----
    ("int-requires-grad", lambda t: t.ones(2, dtype=t.int64, requires_grad=True), R, r"Only Tensors of floating point and complex dtype can require gradients"),
    ("backward-non-scalar", lambda t: (t.ones(2, requires_grad=True) * 2).backward(), R, r"grad can be implicitly created only for scalar outputs"),
    ("backward-no-grad", lambda t: t.ones(2).sum().backward(), R, r"does not require grad and does not have a grad_fn"),
    ("inplace-on-leaf", lambda t: t.ones(2, requires_grad=True).add_(1), R, r"leaf Variable that requires grad is being used in an in-place operation"),
    ("grad-unused-input", lambda t: t.autograd.grad(t.ones(2, requires_grad=True).sum(), [t.ones(2, requires_grad=True)]), R, r"appears to not have been used in the graph"),
    # ---- sparse ops given what they can't do ----
    ("sparse-softmax-dim-range", lambda t: t.sparse.softmax(_coo(t), 5), I, r"Dimension out of range|dim"),
    ("sparse-sum-dim-range", lambda t: t.sparse.sum(_coo(t), 7), I, r"Dimension out of range|dim"),
    ("sparse-exp-densifies", lambda t: t.exp(_coo(t)), (N, R), r"to_dense|dense|sparse"),
    ("sparse-plus-scalar", lambda t: _coo(t) + 1, (N, R), r"to_dense|dense|sparse"),
    ("csr-batch-nnz-unequal", lambda t: t.sparse_coo_tensor(_i(t, [[0, 0, 1], [0, 1, 0], [0, 1, 1]]), t.ones(3), (2, 2, 2)).to_sparse_csr(), R, r"(?i)batch|same number"),
    # ---- the densify guard ----
    ("to-dense-terabytes", lambda t: _coo(t, (10**6, 10**6)).to_dense(), DenseAllocationError, r"to_dense\(\).*densify limit.*set_densify_limit"),
    ("csr-to-dense-terabytes", lambda t: _coo(t, (10**6, 10**6)).to_sparse_csr().to_dense(), DenseAllocationError, r"to_dense\(\).*densify limit"),
    ("spmm-terabytes", lambda t: t.sparse.mm(_coo(t, (10**8, 4)), t.ones(4, 10**5)), DenseAllocationError, r"sparse @ dense.*densify limit"),
]
