"""dtype objects, torch's type promotion, and the NumPy mapping.

torch's rules differ from NumPy's in ways that matter: a Python float never up-casts a float32
tensor, int + float16 stays float16, and the default floating dtype is float32. All promotion in
sparsetorch goes through :func:`promote_types` and :func:`result_type` below.
"""

import ml_dtypes
import numpy as np

# the prefix of dtype and layout reprs: "torch." while a program runs under sparsetorch.as_torch
# (it imported torch, so it prints what torch prints: ``dtype=torch.float64``)
NAMESPACE = ["sparsetorch."]

__all__ = [
    "dtype", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
    "complex64", "complex128", "bfloat16", "half", "float", "double", "short", "int", "long", "cfloat",
    "cdouble", "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
    "can_cast", "finfo", "iinfo",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A sparsetorch dtype; compares by identity, as ``torch.dtype`` does."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed", "_cat",
                 "scalar_name", "cpp_name")

    def __init__(self, name, np_dtype, cat):
        self.name = name
        # torch's names of the type in its messages: ScalarType ("Got: Long") and C++ ("float != double")
        self.scalar_name, self.cpp_name = _TORCH_NAMES[name]
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self._cat = cat
        self.is_floating_point = cat == _FLOAT
        self.is_complex = cat == _COMPLEX
        self.is_signed = self.np.kind != "u" and self.np.kind != "b"

    def __repr__(self):
        return NAMESPACE[0] + self.name

    def __reduce__(self):  # pickle as the singleton
        return (_by_name, (self.name,))

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        return {"float16": complex64, "bfloat16": complex64, "float32": complex64,
                "float64": complex128}.get(self.name, self)


_TORCH_NAMES = {
    "float16": ("Half", "c10::Half"), "bfloat16": ("BFloat16", "c10::BFloat16"),
    "float32": ("Float", "float"), "float64": ("Double", "double"),
    "int8": ("Char", "signed char"), "int16": ("Short", "short int"), "int32": ("Int", "int"),
    "int64": ("Long", "long int"), "uint8": ("Byte", "unsigned char"), "bool": ("Bool", "bool"),
    "complex64": ("ComplexFloat", "c10::complex<float>"),
    "complex128": ("ComplexDouble", "c10::complex<double>"),
}
float16 = dtype("float16", np.float16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT)
float64 = dtype("float64", np.float64, _FLOAT)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT)
int32 = dtype("int32", np.int32, _INT)
int64 = dtype("int64", np.int64, _INT)
uint8 = dtype("uint8", np.uint8, _INT)
bool = dtype("bool", np.bool_, _BOOL)  # noqa: A001 - torch's public name
complex64 = dtype("complex64", np.complex64, _COMPLEX)
complex128 = dtype("complex128", np.complex128, _COMPLEX)
# bfloat16 payloads are ml_dtypes arrays: NumPy stores them, its ufuncs compute through float32
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT)

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64, complex128,
       bfloat16)
_NAMES = {d.name: d for d in ALL}
_FROM_NP = {d.np: d for d in ALL}


def is_float_np(np_dtype):
    """Whether a NumPy dtype is a real floating one; bfloat16's ``kind`` is "V", not "f"."""
    return np_dtype.kind == "f" or np_dtype == bfloat16.np


def sort_key(xp, a):
    """``a`` as sort keys: bfloat16 as float32 (exact), where NumPy puts NaN last; ml_dtypes'
    own bfloat16 comparisons leave NaN in place and break the order around it."""
    return a.astype(xp.float32) if a.dtype == bfloat16.np else a


# the 2-byte floats: NumPy would accumulate their sums in their own precision, torch uses float32
REDUCED_NP = (float16.np, bfloat16.np)


def _by_name(name):
    return _NAMES[name]


def from_numpy_dtype(np_dtype):
    """The sparsetorch dtype for a NumPy dtype; TypeError for ones torch has no match for."""
    d = _FROM_NP.get(np.dtype(np_dtype))
    if d is None or d is bfloat16:  # torch takes no ml_dtypes arrays (our payloads are internal)
        name = "ml_dtypes.bfloat16" if d is bfloat16 else np.dtype(np_dtype)
        raise TypeError(
            f"can't convert np.ndarray of type {name}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        )
    return d


# ---- defaults ----

_default = [float32]


def get_default_dtype():
    """get_default_dtype() -> dtype

    The default floating-point dtype (``float32`` unless changed by :func:`set_default_dtype`)."""
    return _default[0]


def set_default_dtype(d):
    """set_default_dtype(d) -> None

    Set the default floating-point dtype (float32 or float64, ...) that factories and Python floats
    use; complex defaults follow (complex128 for float64, else complex64)."""
    if not isinstance(d, dtype) or not (d.is_floating_point):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def default_complex():
    return complex128 if _default[0] is float64 else complex64


# ---- promotion ----

def promote_types(a, b):
    """torch.promote_types: the smallest dtype both ``a`` and ``b`` cast to safely (torch's table)."""
    if a is b:
        return a
    if not isinstance(a, dtype) or not isinstance(b, dtype):
        raise TypeError(f"promote_types(): expected two sparsetorch dtypes, got {a!r} and {b!r}")
    ca, cb = a._cat, b._cat
    if ca == cb:
        if a is bfloat16 or b is bfloat16:  # NumPy has no rule for it: torch's table
            o = b if a is bfloat16 else a
            return float32 if o is float16 else o
        return _FROM_NP[np.promote_types(a.np, b.np)]
    hi, lo = (a, b) if ca > cb else (b, a)
    if hi._cat == _COMPLEX and lo is float64:
        return complex128
    return hi


def _scalar_dtype(x):
    """dtype category a Python scalar stands for (torch's 'wrapped number')."""
    t = type(x)
    if t is builtins_bool or isinstance(x, (np.bool_,)):
        return bool
    if t is builtins_int or isinstance(x, np.integer):
        return int64
    if t is builtins_float or isinstance(x, np.floating):
        return _default[0]
    if t is builtins_complex or isinstance(x, np.complexfloating):
        return default_complex()
    raise TypeError(f"expected a Tensor or a Python number, got {type(x).__name__}")


import builtins as _b  # noqa: E402

builtins_bool, builtins_int, builtins_float, builtins_complex = _b.bool, _b.int, _b.float, _b.complex


def _combine(higher, lower):
    """torch's combine_categories: keep ``higher`` unless ``lower`` is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._cat == _COMPLEX:
        return higher
    if lower._cat == _COMPLEX:
        return higher.to_complex() if higher._cat == _FLOAT else lower
    if higher._cat == _FLOAT:
        return higher
    if higher is bool or lower._cat == _FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type(*args):
    """torch.result_type over tensors and Python scalars.

    Dimensioned tensors take priority over 0-d tensors, which take priority over Python scalars;
    a lower-priority participant only matters if it is of a higher category (bool < int < float <
    complex), and a Python float then means the default dtype.
    """
    dim = zero = wrapped = None
    for a in args:
        d = getattr(a, "dtype", None)
        if isinstance(d, dtype):
            if a.ndim:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        else:
            s = _scalar_dtype(a)
            wrapped = s if wrapped is None else promote_types(wrapped, s)
    return _combine(dim, _combine(zero, wrapped))


def can_cast(from_, to):
    """torch.can_cast: casting never goes to a lower category (bool < int < float < complex)."""
    return from_._cat <= to._cat


class finfo:
    """finfo(type=None)

    Machine limits of a floating-point (or complex: of its real part) dtype, the default dtype if
    none: ``bits, eps, max, min, tiny, smallest_normal, resolution, dtype``."""

    def __init__(self, type=None):
        type = type or _default[0]
        if not (type.is_floating_point or type.is_complex):
            raise TypeError(f"{NAMESPACE[0]}finfo() requires a floating point input type. Use "
                            f"{NAMESPACE[0]}iinfo to handle '{NAMESPACE[0]}finfo'")
        f = ml_dtypes.finfo(type.np) if type is bfloat16 else np.finfo(type.np)
        self.bits, self.eps, self.max, self.min = f.bits, _b.float(f.eps), _b.float(f.max), _b.float(f.min)
        self.tiny = self.smallest_normal = _b.float(f.tiny)
        self.resolution = 10.0 ** -_b.int(f.precision)  # torch's: a power of ten
        self.dtype = type.to_real().name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """iinfo(type)

    Machine limits of an integer (or bool) dtype: ``bits, max, min, dtype``."""

    def __init__(self, type):
        if type is bool:
            raise TypeError(f"{NAMESPACE[0]}bool is not supported by {NAMESPACE[0]}iinfo")
        if type._cat != _INT:
            raise TypeError(f"{NAMESPACE[0]}iinfo() requires an integer input type. Use "
                            f"{NAMESPACE[0]}finfo to handle '{NAMESPACE[0]}iinfo'")
        f = np.iinfo(type.np)
        self.bits, self.max, self.min, self.dtype = f.bits, _b.int(f.max), _b.int(f.min), type.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
