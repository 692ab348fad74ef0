"""``Summary`` protobufs for scalars, histograms, text and hyperparameters (TensorBoard's formats).

Values are NumPy arrays on the host: :func:`make_np` turns sparsetorch tensors (dense, or sparse
through ``to_dense()``), NumPy arrays and Python/NumPy scalars into one.
"""

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._layout import strided
from ..._tensor import Tensor

__all__ = ["make_np", "scalar", "histogram", "histogram_raw", "make_histogram", "text", "hparams",
           "tensor_proto"]


def make_np(x):
    """A NumPy array holding ``x`` (a Tensor, an ndarray, or a scalar as a 1-element array)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        x = x.detach()
        if x.layout is not strided:
            x = x.to_dense()
        if x.dtype.name == "bfloat16":  # numpy() refuses it, as torch's; torch goes through half
            x = x.half()
        return np.asarray(x.cpu().numpy())
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A ``Summary`` with one scalar value (``simple_value``, or a tensor when ``new_style``)."""
    arr = make_np(tensor).squeeze()
    if arr.ndim != 0:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given size: {arr.size} and "
            f"{arr.ndim} dimensions.")
    value = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    if double_precision:
        proto = TensorProto(double_val=[value], dtype="DT_DOUBLE")
    else:
        proto = TensorProto(float_val=[value], dtype="DT_FLOAT")
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=meta)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name, values, bins, max_bins=None):
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values, bins, max_bins=None):
    """A ``HistogramProto`` of ``values`` with ``np.histogram``'s ``bins``, trimmed to the bins
    between the first and the last non-empty one (TensorBoard stores right edges only, so one
    empty bin is kept on the left), at most ``max_bins`` bins (neighbours merged)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        k = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % k)).reshape(-1, k).sum(axis=1)
        limits = np.append(limits[:-1:k], limits[-1])
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:  # every value outside the bins
        raise ValueError("The histogram is empty, please file a bug report.")
    first, last = int(nonzero[0]), int(nonzero[-1])
    if first > 0:
        counts, limits = counts[first - 1:last + 1], limits[first:last + 2]
    else:
        counts, limits = np.concatenate([[0], counts[:last + 1]]), limits[:last + 2]
    return HistogramProto(
        min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
        sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def text(tag, text):
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode(encoding="utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


# ---- whole tensors (the "tensor" plugin) ----

def _half_bits(a):
    return a.astype(np.float16).view(np.uint16).ravel().tolist()


def _bfloat16_bits(a):  # ``a``: the float32 values of a bfloat16 tensor (exact), top 16 bits
    return (a.astype(np.float32).view(np.uint32) >> 16).ravel().tolist()


def _complex_parts(a):
    return a.ravel().view(np.float64 if a.dtype == np.complex128 else np.float32).tolist()


def _flat(a):
    return a.ravel().tolist()


_TENSOR_TYPES = {  # sparsetorch dtype name -> (proto dtype, proto field, values), as torch's map
    "float16": ("DT_HALF", "half_val", _half_bits),
    "bfloat16": ("DT_BFLOAT16", "half_val", _bfloat16_bits),
    "float32": ("DT_FLOAT", "float_val", _flat), "float64": ("DT_DOUBLE", "double_val", _flat),
    "int8": ("DT_INT8", "int_val", _flat), "uint8": ("DT_UINT8", "uint32_val", _flat),
    "int16": ("DT_INT16", "int_val", _flat), "int32": ("DT_INT32", "int_val", _flat),
    "int64": ("DT_INT64", "int64_val", _flat), "bool": ("DT_BOOL", "bool_val", _flat),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
}


def tensor_proto(tag, tensor):
    """A ``Summary`` holding the whole tensor (dense values; a sparse tensor is densified).

    ``half_val`` holds 16-bit patterns, as TensorBoard decodes them (torch 2.13 writes the float32
    bit patterns of half and bfloat16 values there, which TensorBoard misreads)."""
    if tensor.numel() * tensor.itemsize >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    entry = _TENSOR_TYPES.get(tensor.dtype.name)
    if entry is None:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, values = entry
    arr = make_np(tensor.float() if tensor.dtype.name == "bfloat16" else tensor)
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in tensor.shape])
    proto = TensorProto(**{"dtype": dtype, "tensor_shape": shape, field: values(arr)})
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


# ---- hyperparameters (the hparams plugin's three summaries) ----

_KINDS = (  # checked in this order, as torch: a bool is an int, so it is logged as a number
    ((int, float), "number_value", "DATA_TYPE_FLOAT64"),
    (str, "string_value", "DATA_TYPE_STRING"),
    (bool, "bool_value", "DATA_TYPE_BOOL"),
)


def _plugin_summary(tag, **content):
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    data = HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content)
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name=metadata.PLUGIN_NAME, content=data.SerializeToString()))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The experiment, session-start and session-end summaries of the hparams plugin."""
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(
                isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type "
                            f"as hparam_dict[{k}].")
    infos, ssi = [], SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            setattr(ssi.hparams[k], "number_value", float(make_np(v).reshape(-1)[0]))
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        for types, field, dtype in _KINDS:
            if isinstance(v, types):
                break
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(ssi.hparams[k], field, v)
        domain = None
        if k in domains:
            domain = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in domains[k]])
        infos.append(HParamInfo(name=k, type=DataType.Value(dtype), domain_discrete=domain))
    exp = Experiment(hparam_infos=infos,
                     metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    sei = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    return (_plugin_summary(metadata.EXPERIMENT_TAG, experiment=exp),
            _plugin_summary(metadata.SESSION_START_INFO_TAG, session_start_info=ssi),
            _plugin_summary(metadata.SESSION_END_INFO_TAG, session_end_info=sei))
