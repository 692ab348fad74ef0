"""sparsetorch's public namespaces against torch 2.13's: every difference is listed with its reason.

torch's public names of a namespace are its ``__all__`` (plus its torch sub-packages) where it has
one, else its ``dir()``; stdlib modules imported into torch's modules and leading-underscore names
are never counted. A name of ours is an addition (``OURS``) only when torch's module has no such
attribute at all. Keys are qualified by namespace (``"nn.functional.ctc_loss"``; top level bare).
Adding a torch name here means deleting its ``MISSING`` entry (the stale check says so).
"""

import importlib
import inspect
import json
import subprocess
import sys
import types

import pytest

torch = pytest.importorskip("torch")

import sparsetorch
import sparsetorch.as_torch  # imported on demand elsewhere; its name is listed in OURS
import sparsetorch.warmup  # likewise

NAMESPACES = ["", "nn", "nn.functional", "sparse", "optim", "utils.data"]


def _names(reason, names):
    return dict.fromkeys(names.split(), reason)


# torch names we lack, with the reason
MISSING = {
    **_names('not implemented yet', """
    AcceleratorError Event OutOfMemoryError Stream adjoint as_strided as_strided_ binomial
    bitwise_left_shift bitwise_right_shift celu_ chain_matmul channel_shuffle cholesky_inverse
    cholesky_solve cond ctc_loss cumulative_trapezoid detach_ diagflat dsmm
    empty_permuted fill frexp frobenius_norm frombuffer geqrf get_default_device get_device
    get_device_module gradient hardshrink hash_tensor histogram histogramdd hsmm index_reduce
    init_num_threads instance_norm is_conj is_distributed is_inference is_inference_mode_enabled
    is_neg is_signed is_warn_always_enabled ldexp ldexp_ lobpcg lu_solve lu_unpack
    max_pool1d_with_indices max_pool3d memory_format nextafter nn.AdaptiveLogSoftmaxWithLoss
    nn.CTCLoss nn.ChannelShuffle nn.Container nn.CosineSimilarity nn.CrossMapLRN2d nn.Fold
    nn.FractionalMaxPool2d nn.GaussianNLLLoss nn.Hardshrink nn.Hardsigmoid nn.Hardswish
    nn.InstanceNorm1d nn.InstanceNorm2d nn.LPPool1d nn.LPPool2d nn.LinearCrossEntropyLoss
    nn.LinearCrossEntropyOptions nn.LocalResponseNorm nn.MaxUnpool1d nn.MaxUnpool2d
    nn.MultiLabelMarginLoss nn.MultiLabelSoftMarginLoss nn.MultiMarginLoss nn.NLLLoss2d
    nn.PairwiseDistance nn.PixelShuffle nn.PixelUnshuffle nn.PoissonNLLLoss nn.RMSNorm
    nn.Softmax2d nn.Softshrink nn.SyncBatchNorm nn.TripletMarginLoss
    nn.TripletMarginWithDistanceLoss nn.Unfold nn.factory_kwargs
    nn.functional.adaptive_max_pool1d_with_indices
    nn.functional.adaptive_max_pool2d_with_indices nn.functional.affine_grid nn.functional.celu_
    nn.functional.channel_shuffle nn.functional.conv_tbc nn.functional.ctc_loss
    nn.functional.fractional_max_pool2d nn.functional.fractional_max_pool2d_with_indices
    nn.functional.gaussian_nll_loss nn.functional.grid_sample nn.functional.grouped_mm
    nn.functional.hardshrink nn.functional.hardsigmoid nn.functional.hardswish
    nn.functional.instance_norm nn.functional.linear_cross_entropy
    nn.functional.local_response_norm nn.functional.lp_pool1d nn.functional.lp_pool2d
    nn.functional.max_pool1d_with_indices nn.functional.max_pool2d_with_indices
    nn.functional.max_unpool1d nn.functional.max_unpool2d nn.functional.multi_margin_loss
    nn.functional.multilabel_margin_loss nn.functional.multilabel_soft_margin_loss
    nn.functional.native_channel_shuffle nn.functional.pixel_shuffle
    nn.functional.pixel_unshuffle nn.functional.poisson_nll_loss nn.functional.rms_norm
    nn.functional.scaled_grouped_mm nn.functional.scaled_mm nn.functional.selu_
    nn.functional.softshrink nn.functional.threshold_ nn.functional.triplet_margin_loss
    nn.functional.triplet_margin_with_distance_loss nonzero_static nuclear_norm optim.swa_utils
    optim.swap_in_optimizer_params_and_state orgqr ormqr pixel_shuffle pixel_unshuffle
    poisson_nll_loss positive put renorm resize_as_ resize_as_sparse_ resolve_conj resolve_neg
    rms_norm saddmm selu_ set_default_device set_warn_always slice_inverse
    sparse.as_sparse_gradcheck sparse.solve split_with_sizes thread_safe_generator threshold_
    triangular_solve triplet_margin_loss unsafe_chunk unsafe_split unsafe_split_with_sizes
    vander
    """),
    **_names('TorchScript internals (torch._C); sparsetorch.jit runs eagerly, no IR/types', """
    AVG AggregationType AliasDb AnyType Argument ArgumentSpec AwaitType BenchmarkConfig
    BenchmarkExecutionStats Block BoolType BufferDict CallStack Capsule ClassType Code
    CompilationUnit CompleteArgumentSpec ComplexType ConcreteModuleType
    ConcreteModuleTypeBuilder DeepCopyMemoTable DeserializationStorageContext DeviceObjType
    DictType DisableTorchFunction DisableTorchFunctionSubclass DispatchKey DispatchKeySet
    EnumType ErrorReport ExcludeDispatchKeyGuard ExecutionPlan FatalError FileCheck FloatType
    FunctionSchema Future FutureType Gradient Graph GraphExecutorState IODescriptor InferredType
    IntType InterfaceType JITException ListType LiteScriptModule LockingLogger ModuleDict Node
    NoneType NoopLogger NumberType OperatorInfo OptionalType ParameterDict PyObjectType
    PyTorchFileReader PyTorchFileWriter RRefType SUM ScriptClass ScriptClassFunction ScriptDict
    ScriptDictIterator ScriptDictKeyIterator ScriptFunction ScriptList ScriptListIterator
    ScriptMethod ScriptModule ScriptModuleSerializer ScriptObject ScriptObjectProperty
    SerializationStorageContext StaticModule StreamObjType StringType Tag TensorType
    ThroughputBenchmark TracingState TupleType Type UnionType Use Value fork import_ir_module
    import_ir_module_from_buffer merge_type_from_type_comment parse_ir parse_schema
    parse_type_comment unify_type_list wait
    """),
    **_names('undocumented ATen binding behind an nn layer; not provided', """
    affine_grid_generator alpha_dropout_ batch_norm_backward_elemt batch_norm_backward_reduce
    batch_norm_elemt batch_norm_gather_stats batch_norm_gather_stats_with_counts
    batch_norm_stats batch_norm_update_stats constant_pad_nd conv_tbc convolution dropout_
    embedding_renorm_ feature_alpha_dropout_ feature_dropout feature_dropout_ grid_sampler
    grid_sampler_2d grid_sampler_3d gru gru_cell lstm lstm_cell native_batch_norm
    native_channel_shuffle native_dropout native_group_norm native_layer_norm native_norm
    norm_except_dim rnn_relu rnn_relu_cell rnn_tanh rnn_tanh_cell
    """),
    **_names('dtype without NumPy/CuPy support (sub-byte, float8, bits, complex32, uint16+)', """
    bit bits16 bits1x8 bits2x4 bits4x2 bits8 chalf complex32 float4_e2m1fn_x2 float8_e4m3fn
    float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu int1 int2 int3 int4 int5 int6
    int7 uint1 uint16 uint2 uint3 uint32 uint4 uint5 uint6 uint64 uint7
    """),
    **_names('top-level ATen alias of the nn.functional function we have; use that', """
    adaptive_avg_pool1d adaptive_max_pool1d alpha_dropout avg_pool1d batch_norm bilinear
    binary_cross_entropy_with_logits celu conv1d conv2d conv3d conv_transpose1d conv_transpose2d
    conv_transpose3d cosine_embedding_loss dropout embedding embedding_bag feature_alpha_dropout
    group_norm hinge_embedding_loss kl_div layer_norm margin_ranking_loss max_pool1d max_pool2d
    prelu rrelu rrelu_ selu threshold
    """),
    **_names('*_copy/*_scatter variant of a view op (compile functionalization); not provided', """
    alias_copy as_strided_copy as_strided_scatter ccol_indices_copy col_indices_copy
    crow_indices_copy detach_copy diagonal_copy diagonal_scatter expand_copy indices_copy
    permute_copy row_indices_copy select_copy select_scatter slice_copy slice_scatter split_copy
    split_with_sizes_copy squeeze_copy t_copy transpose_copy unbind_copy unfold_copy
    unsqueeze_copy values_copy view_as_complex_copy view_as_real_copy view_copy
    """),
    **_names('quantized tensors and their ops are not supported', """
    choose_qparams_optimized dequantize empty_quantized fake_quantize_per_channel_affine
    fake_quantize_per_tensor_affine fused_moving_avg_obs_fake_quant int_repr q_per_channel_axis
    q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point qint32 qint8 qscheme
    quantize_per_channel quantize_per_tensor quantize_per_tensor_dynamic quantized_batch_norm
    quantized_gru_cell quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d
    quantized_max_pool3d quantized_rnn_relu_cell quantized_rnn_tanh_cell quint2x4 quint4x2
    quint8
    """),
    **_names('vendor-library entry point (cuDNN, MIOpen, oneDNN, FBGEMM); no NumPy/CuPy twin', """
    cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution cudnn_convolution_add_relu
    cudnn_convolution_relu cudnn_convolution_transpose cudnn_grid_sampler cudnn_is_acceptable
    fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation
    fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation
    fbgemm_linear_quantize_weight fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix
    miopen_batch_norm miopen_convolution miopen_convolution_add_relu miopen_convolution_relu
    miopen_convolution_transpose miopen_ctc_loss miopen_depthwise_convolution miopen_rnn
    mkldnn_adaptive_avg_pool2d mkldnn_convolution mkldnn_linear_backward_weights
    mkldnn_max_pool2d mkldnn_max_pool3d mkldnn_rnn_layer
    """),
    **_names('3-D (volumetric) variant not implemented yet', """
    nn.AdaptiveAvgPool3d nn.AdaptiveMaxPool3d nn.AvgPool3d nn.BatchNorm3d nn.FractionalMaxPool3d
    nn.InstanceNorm3d nn.LPPool3d nn.MaxPool3d nn.MaxUnpool3d nn.functional.adaptive_avg_pool3d
    nn.functional.adaptive_max_pool3d nn.functional.adaptive_max_pool3d_with_indices
    nn.functional.avg_pool3d nn.functional.fractional_max_pool3d
    nn.functional.fractional_max_pool3d_with_indices nn.functional.lp_pool3d
    nn.functional.max_pool3d nn.functional.max_pool3d_with_indices nn.functional.max_unpool3d
    """),
    **_names("typing/helper name imported into torch's module, not part of its API", """
    nn.functional.BroadcastingList1 nn.functional.BroadcastingList2
    nn.functional.BroadcastingList3 nn.functional.Callable nn.functional.DType
    nn.functional.GRID_SAMPLE_INTERPOLATION_MODES nn.functional.GRID_SAMPLE_PADDING_MODES
    nn.functional.ScalingType nn.functional.SwizzleType nn.functional.TYPE_CHECKING
    nn.functional.Tensor nn.functional.assert_int_or_pair nn.functional.boolean_dispatch
    nn.functional.handle_torch_function nn.functional.has_torch_function
    nn.functional.has_torch_function_unary nn.functional.has_torch_function_variadic
    """),
    **_names('symbolic shapes (torch.compile/export tracing); sparsetorch.compile runs eagerly', """
    SymBool SymBoolType SymFloat SymInt SymIntType sym_constrain_range
    sym_constrain_range_for_size sym_float sym_fresh_size sym_int sym_ite sym_max sym_min
    sym_not sym_sqrt sym_sum
    """),
    **_names('lazy modules (shapes inferred at first call) not implemented yet', """
    nn.LazyBatchNorm1d nn.LazyBatchNorm2d nn.LazyBatchNorm3d nn.LazyConv1d nn.LazyConv2d
    nn.LazyConv3d nn.LazyConvTranspose1d nn.LazyConvTranspose2d nn.LazyConvTranspose3d
    nn.LazyInstanceNorm1d nn.LazyInstanceNorm2d nn.LazyInstanceNorm3d nn.LazyLinear
    nn.UninitializedBuffer nn.UninitializedParameter
    """),
    **_names('padding module not implemented yet (nn.functional.pad exists)', """
    nn.CircularPad1d nn.CircularPad2d nn.CircularPad3d nn.ConstantPad1d nn.ConstantPad2d
    nn.ConstantPad3d nn.ReflectionPad1d nn.ReflectionPad2d nn.ReflectionPad3d
    nn.ReplicationPad1d nn.ReplicationPad2d nn.ReplicationPad3d nn.ZeroPad1d nn.ZeroPad2d
    nn.ZeroPad3d
    """),
    **_names('DataPipes (deprecated upstream) not provided', """
    utils.data.DFIterDataPipe utils.data.DataChunk utils.data.IterDataPipe
    utils.data.MapDataPipe utils.data.argument_validation utils.data.datapipes
    utils.data.functional_datapipe utils.data.graph utils.data.graph_settings
    utils.data.guaranteed_datapipes_determinism utils.data.non_deterministic
    utils.data.runtime_validation utils.data.runtime_validation_disabled
    """),
    **_names('switch for XLA/IPU/Vulkan/interop threads/denormals; no NumPy/CuPy twin', """
    get_autocast_ipu_dtype get_autocast_xla_dtype get_num_interop_threads
    is_autocast_ipu_enabled is_autocast_xla_enabled is_vulkan_available set_autocast_ipu_dtype
    set_autocast_ipu_enabled set_autocast_xla_dtype set_autocast_xla_enabled set_flush_denormal
    set_num_interop_threads
    """),
    **_names('Storage objects: tensors hold NumPy/CuPy payloads, not torch Storages', """
    BoolStorage ByteStorage CharStorage DoubleStorage FloatStorage IntStorage LongStorage
    ShortStorage TypedStorage UntypedStorage from_file
    """),
    **_names('optimizer not implemented yet', """
    optim.ASGD optim.Adafactor optim.Adamax optim.Muon optim.NAdam optim.RAdam optim.Rprop
    """),
    **_names('2:4 semi-structured sparsity (cuSPARSELt/CUTLASS kernels) not supported', """
    sparse.SparseSemiStructuredTensor sparse.SparseSemiStructuredTensorCUSPARSELT
    sparse.SparseSemiStructuredTensorCUTLASS sparse.semi_structured
    sparse.to_sparse_semi_structured
    """),
    **_names('module constant not provided yet', """
    e inf nan newaxis pi
    """),
    **_names('window functions not implemented yet', """
    bartlett_window blackman_window hamming_window hann_window kaiser_window
    """),
    **_names('BSR/BSC/CSC layouts are not supported (COO and CSR only, DESIGN.md)', """
    sparse_bsc_tensor sparse_bsr_tensor sparse_compressed_tensor sparse_csc_tensor
    """),
    **_names('build-configuration flag of the torch binary; not provided', """
    has_lapack has_mkl has_openmp has_spectral
    """),
    **_names('quantization is not supported', """
    nn.qat nn.quantizable nn.quantized quantization
    """),
    **_names("docstring fragment torch's docs interpolate; not an API", """
    nn.functional.reproducibility_notes nn.functional.sparse_support_notes
    nn.functional.tf32_notes
    """),
    **_names('STFT not implemented yet (torch.fft transforms exist)', """
    istft stft
    """),
    **_names('torch.nn.grad (conv input/weight grads) not provided', """
    nn.functional.grad nn.grad
    """),
    **_names('Apple MPS backend: no counterpart on NumPy/CuPy', """
    mps
    """),
    **_names('C++ extension helpers (torch.cpp) not provided', """
    cpp
    """),
    **_names('Intel XPU backend: no counterpart on NumPy/CuPy', """
    xpu
    """),
    **_names('MTIA backend: no counterpart on NumPy/CuPy', """
    mtia
    """),
    **_names('SobolEngine (torch.quasirandom) not implemented yet', """
    quasirandom
    """),
    **_names('TorchScript custom classes (torch.classes) not provided', """
    classes
    """),
    **_names('__torch_function__ override machinery not provided', """
    overrides
    """),
    **_names('functorch transforms (vmap) not implemented yet', """
    vmap
    """),
    **_names('functorch transforms (vmap, grad, jacrev) not implemented yet', """
    func
    """),
    **_names("graph capture (torch.fx) needs torch's tracer; sparsetorch.compile runs eagerly", """
    fx
    """),
    **_names('masked tensors (torch.masked, prototype) not provided', """
    masked
    """),
    **_names('nested/jagged tensors not supported', """
    nested
    """),
    **_names('quantization is not supported (fused quantized modules)', """
    nn.intrinsic
    """),
    **_names('quantization/sparsity toolkit (torch.ao): quantization is not supported', """
    ao
    """),
    **_names('storage module: tensors hold NumPy/CuPy payloads, no Storage objects', """
    storage
    """),
    **_names('torch.export needs graph capture; not provided', """
    export
    """),
    **_names('torch.functional module (its functions are top-level names here)', """
    functional
    """),
    **_names('torch.futures (RPC/JIT futures) not provided', """
    futures
    """),
    **_names('torch.library (custom ATen operators) not provided; ops live in _ops', """
    library
    """),
    **_names('torch.monitor (C++ event counters) not provided', """
    monitor
    """),
    **_names('torch.package (hermetic model archives) not provided; use save/load', """
    package
    """),
    **_names('torch.return_types not provided (named tuples are returned directly)', """
    return_types
    """),
    **_names('torch.signal (window functions) not implemented yet', """
    signal
    """),
    **_names('torch.types (typing aliases) not provided', """
    types
    """),
    **_names('typing aliases module not provided', """
    nn.common_types
    """),
    **_names('window functions (torch.signal.windows) not implemented yet', """
    windows
    """),
}

# our names torch lacks, with what they are
OURS = {
    "DenseAllocationError": "raised where an op would densify a sparse tensor beyond the limit "
                            "(docs/reliability.md)",
    "as_torch": "module: run an unchanged torch program (python -m sparsetorch.as_torch)",
    "warmup": "module: compile the numba kernels ahead (python -m sparsetorch.warmup)",
    "to_dense": "function form of Tensor.to_dense (docs/reliability.md)",
    "nn.SparseLinear": "linear layer with a sparse COO/CSR weight (only stored entries learn)",
    "sparse.DenseAllocationError": "re-export of sparsetorch.DenseAllocationError",
    "sparse.densify_limit": "context manager setting the densify limit inside a block",
    "sparse.get_densify_limit": "the densify limit in force, in bytes",
    "sparse.set_densify_limit": "set the largest dense tensor materialised from a sparse one",
    "sparse.from_scipy": "COO/CSR tensor sharing a scipy.sparse matrix's buffers",
    "sparse.to_scipy": "scipy.sparse matrix sharing a 2-D sparse tensor's buffers",
    "sparse.sparse_coo_tensor": "re-export of sparsetorch.sparse_coo_tensor",
    "sparse.sparse_csr_tensor": "re-export of sparsetorch.sparse_csr_tensor",
    "optim.RowWiseAdagrad": "row-wise Adagrad for embedding tables (one accumulator per row)",
    "utils.data.WorkerInfo": "class of get_worker_info()'s result (torch's _utils.worker)",
    "utils.data.collate": "module of the collate functions (torch's utils.data._utils.collate)",
    "utils.data.collate_id_lists": "collate id lists into (ids, offsets) for EmbeddingBag",
}


def _module(root, ns):
    return importlib.import_module(root + ("." + ns if ns else ""))


def _torch_public(mod):
    names = getattr(mod, "__all__", None)
    if names is None:
        names = dir(mod)
    else:
        names = set(names) | {n for n in dir(mod) if isinstance(getattr(mod, n), types.ModuleType)}
    out = set()
    for n in names:
        v = getattr(mod, n, None)
        stdlib = isinstance(v, types.ModuleType) and not v.__name__.startswith("torch.")
        if n.startswith("_") or stdlib:  # private, or a stdlib module imported into torch's
            continue
        if getattr(v, "__module__", None) == "typing":
            continue
        out.add(n)
    return out


def _ours(mod):
    return {n for n in dir(mod) if not n.startswith("_")}


def _key(ns, n):
    return f"{ns}.{n}" if ns else n


_FRESH = {}


def _torch_public_fresh(ns):
    """``_torch_public`` of torch's namespace as a fresh interpreter sees it: torch loads some
    sub-packages lazily (``onnx``, ``numa``, ...), so in this process its ``dir()`` depends on
    what earlier tests touched. One subprocess computes every namespace once."""
    if not _FRESH:
        code = "\n".join([
            "import importlib, json, sys, types",
            inspect.getsource(_torch_public),
            f"print(json.dumps({{ns: sorted(_torch_public(importlib.import_module("
            f"'torch' + ('.' + ns if ns else ''))) ) for ns in {list(NAMESPACES)!r}}}))",
        ])
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        _FRESH.update({k: set(v) for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items()})
    return _FRESH[ns]


def _diff(ns):
    t, s = _module("torch", ns), _module("sparsetorch", ns)
    ours = _ours(s)
    missing = {_key(ns, n) for n in _torch_public_fresh(ns) - ours}
    extra = {_key(ns, n) for n in ours if not hasattr(t, n)}
    return missing, extra


@pytest.mark.parametrize("ns", NAMESPACES)
def test_every_torch_name_we_lack_is_listed_with_a_reason(ns):
    missing, _ = _diff(ns)
    assert sorted(missing - MISSING.keys()) == []


@pytest.mark.parametrize("ns", NAMESPACES)
def test_every_name_of_ours_torch_lacks_is_listed(ns):
    _, extra = _diff(ns)
    assert sorted(extra - OURS.keys()) == []


@pytest.mark.parametrize("ns", NAMESPACES)
def test_no_stale_entries(ns):
    missing, extra = _diff(ns)
    prefix = ns + "." if ns else ""

    def mine(key):
        rest = key[len(prefix):]
        return key.startswith(prefix) and "." not in rest if ns else "." not in key

    assert sorted(k for k in MISSING if mine(k) and k not in missing) == []  # now present: delete
    assert sorted(k for k in OURS if mine(k) and k not in extra) == []  # gone, or torch has it


def test_every_entry_names_a_known_namespace_and_a_reason():
    for key, reason in {**MISSING, **OURS}.items():
        ns = key.rpartition(".")[0]
        assert ns in NAMESPACES, key
        assert reason.strip(), key


def test_the_top_level_shows_no_internal_modules_or_helpers():
    # the op modules and Tensor-method helpers of sparsetorch._ops stay private
    for name in ("creation", "pointwise", "conversion", "reduction", "shape", "view", "setitem",
                 "getitem", "payload_numpy", "tensor_repr", "dense", "with_values"):
        assert not hasattr(sparsetorch, name), name
    assert "pointwise" not in dir(sparsetorch) and "to_dense" in dir(sparsetorch)
    assert sparsetorch._ops.with_values is not None  # still reachable where it is used
