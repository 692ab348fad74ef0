"""Complex views: view_as_real, view_as_complex, and real / imag (Tensor.real / Tensor.imag),
views of a complex tensor's parts that share its memory and version counter.
"""


from .. import _dtype as D
from .._dispatch import call, defop
from .._layout import strided
from .sparse_values import values_kernels
from ._util import check_tensor

__all__ = [
    "imag",
    "real",
    "view_as_complex",
    "view_as_real",
]


# ---- complex views ----

def _as_real_kernel(be, x):
    real = x.real.dtype  # complex64 -> float32, complex128 -> float64
    return x.reshape(x.shape or (1,)).view(real).reshape(x.shape + (2,))


def _as_complex_kernel(be, x):
    cplx = be.xp.result_type(x.dtype, be.xp.complex64)
    return x.view(cplx).reshape(x.shape[:-1])


_view_as_real_op = defop("view_as_real", {(strided,): _as_real_kernel}, view=True,
                         grads={"input": lambda grad: view_as_complex(grad.contiguous())})
_view_as_complex_op = defop("view_as_complex", {(strided,): _as_complex_kernel}, view=True,
                            grads={"input": lambda grad: view_as_real(grad)},
                            holomorphic=False)  # complex grad -> its (re, im) pairs, no conj


def view_as_real(input):
    """Returns a view of the complex ``input`` as a real tensor with a last dimension of size 2
    holding the real and imaginary parts."""
    check_tensor(input, "view_as_real")
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors (got "
                           f"{input.dtype}); build one with torch.complex(real, imag)")
    real = D.float32 if input.dtype is D.complex64 else D.float64
    return call(_view_as_real_op, (input,), (), real)


def view_as_complex(input):
    """Returns a view of ``input`` (float or double, last dimension of size 2 and stride 1) as
    a complex tensor."""
    check_tensor(input, "view_as_complex")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {input.dtype}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.layout is strided and input._data.size and input._data.strides[-1] != input._data.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1 (call .contiguous() "
                           "first)")
    cplx = D.complex64 if input.dtype is D.float32 else D.complex128
    return call(_view_as_complex_op, (input,), (), cplx)


# ---- real / imag: views of a complex tensor's parts (Tensor.real / Tensor.imag) ----

def _part_kernel(part):
    def kernel(be, x, cdt):
        return getattr(x, part)  # a strided view of the complex buffer (NumPy and CuPy alike)
    return kernel


def _part_kernels(part):
    """The part's kernels: a strided view, and on COO / CSR the part of the stored values."""
    sparse = values_kernels(lambda v, cdt: (real if part == "real" else imag)(v), linear=True)
    return {(strided,): _part_kernel(part), **sparse}


_real_op = defop("real", _part_kernels("real"), params=("cdt",), view=True, holomorphic=False,
                 grads={"input": lambda grad, cdt: grad.to(cdt)})
_imag_op = defop("imag", _part_kernels("imag"), params=("cdt",), view=True, holomorphic=False,
                 grads={"input": lambda grad, cdt: grad.to(cdt) * 1j})


def real(input):
    """The real part of a complex ``input`` as a view sharing its memory (a real tensor is returned
    as it is; COO and CSR: of the stored values)."""
    check_tensor(input, "real")
    if not input.dtype.is_complex:
        return input
    return call(_real_op, (input,), (input.dtype,), input.dtype.to_real())


def imag(input):
    """The imaginary part of a complex ``input`` as a view sharing its memory (COO and CSR: of
    the stored values)."""
    check_tensor(input, "imag")
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return call(_imag_op, (input,), (input.dtype,), input.dtype.to_real())
