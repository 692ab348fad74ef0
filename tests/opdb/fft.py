"""OpInfo rows for ``sparsetorch.fft`` (torch.fft): NumPy's ``numpy.fft`` as the reference,
float64 gradcheck through complex inputs/outputs, and torch's errors. Dense only."""

import numpy as np

import sparsetorch as st

from ._core import ErrorInput, OpInfo, Sample, make

R = RuntimeError


def _np_kwargs(kw):
    """sparsetorch's (n, s, dim, norm) keywords in numpy.fft's spelling (axis / axes)."""
    out = dict(kw)
    if "dim" in out:
        d = out.pop("dim")
        out["axes" if isinstance(d, (tuple, list)) else "axis"] = d
    return out


def _ref(name, default_axes=None):
    f = getattr(np.fft, name)

    def ref(x, **kw):
        kw = _np_kwargs(kw)
        if default_axes is not None and "axes" not in kw:
            kw["axes"] = default_axes
        elif "s" in kw and "axes" not in kw:  # torch: the last len(s) dims
            kw["axes"] = tuple(range(x.ndim - len(kw["s"]), x.ndim))
        return f(x, **kw)
    return ref


def _samples(cplx, specs):
    """One sample per (shape, kwargs) in ``specs``; ``cplx``: complex inputs of the same precision."""
    def samples(dtype, rg):
        dt = dtype.to_complex() if cplx else dtype
        return [Sample((make(shape, dt, rg, seed=i),), kw, f"{shape}-{kw}")
                for i, (shape, kw) in enumerate(specs)]
    return samples


def _errors(name, real_only=False, nd=False):
    def errors():
        x = st.ones(4, 4)
        out = [ErrorInput(Sample(([1.0, 2.0],)), TypeError, "must be (a )?Tensor"),
               ErrorInput(Sample((x,), {"norm": "bad"}), R, 'Invalid normalization mode: "bad"'),
               ErrorInput(Sample((x.half(),)), R, "Unsupported dtype Half"),
               ErrorInput(Sample((x.to_sparse(),)), NotImplementedError, r"to_dense")]
        if nd:
            out += [ErrorInput(Sample((x,), {"s": (2, 2, 2)}), R, "Got shape with 3 values|must have the same length"),
                    ErrorInput(Sample((x,), {"dim": (0, 0)}), R, "FFT dims must be unique"),
                    ErrorInput(Sample((x,), {"s": (2, 2), "dim": (0,)}), R, "must have the same length")]
        else:
            out += [ErrorInput(Sample((x,), {"dim": 2}), IndexError, "Dimension out of range"),
                    ErrorInput(Sample((x,), {"n": 0}), R, r"Invalid number of data points \(0\)")]
        if real_only:
            out.append(ErrorInput(Sample((x.to(st.complex64),)), R,
                                  "expects a real(-valued)? input tensor|Only supports floating-point dtypes"))
        return out
    return errors


ONE_D = [((6,), {}), ((3, 5), {"n": 8}), ((3, 5), {"n": 3, "dim": 0, "norm": "ortho"}),
         ((4, 4), {"norm": "forward"})]
N_D = [((3, 4), {}), ((2, 3, 4), {"s": (4, 6)}), ((3, 5), {"dim": (0,), "norm": "ortho"}),
       ((2, 3, 4), {"s": (2, 3), "dim": (2, 0), "norm": "forward"})]
TWO_D = [((3, 4), {}), ((2, 3, 4), {"s": (4, 6)}), ((3, 5), {"dim": (1, 0), "norm": "ortho"})]
ONE_SIDED = [((3, 5), {}), ((3, 4), {"n": 7}), ((4, 3), {"n": 4, "dim": 0, "norm": "ortho"}),
             ((5,), {"norm": "forward"})]


def _row(name, cplx, specs, real_only=False, nd=False, axes=None):
    """NumPy has no hfft2/hfftn/ihfft2/ihfftn: those rows have no reference (test_fft.py
    compares them with torch) but still drive gradcheck and the bad-input tests."""
    ref = _ref(name, axes) if hasattr(np.fft, name) else None
    return OpInfo(name=f"fft.{name}", op=getattr(st.fft, name), ref=ref,
                  sample_inputs=_samples(cplx, specs), error_inputs=_errors(name, real_only, nd))


def _freq_samples(dtype, rg):
    return [Sample((n,), {"d": d, "dtype": dtype}, f"{n}-{d}") for n, d in ((5, 1.0), (6, 0.1), (1, 2.0))]


def _freq_errors(name):
    return lambda: [ErrorInput(Sample((4,), {"dtype": st.int64}), R,
                               f"{name} requires a floating point or complex dtype")]


def _shift_samples(dtype, rg):
    return [Sample((make((3, 5), dtype, rg),), {}, "all"),
            Sample((make((4, 5), dtype, rg, seed=1),), {"dim": 0}, "dim0"),
            Sample((make((2, 3, 5), dtype, rg, seed=2),), {"dim": (0, -1)}, "dims")]


def _np_shift(name):
    f = getattr(np.fft, name)
    return lambda x, dim=None: f(x, axes=dim)


OPS = [
    _row("fft", False, ONE_D),
    _row("fft", True, ONE_D),
    _row("ifft", True, ONE_D),
    _row("rfft", False, ONE_D, real_only=True),
    _row("irfft", True, ONE_SIDED),
    _row("hfft", True, ONE_SIDED),
    _row("ihfft", False, ONE_D, real_only=True),
    _row("fft2", True, TWO_D, nd=True, axes=(-2, -1)),
    _row("ifft2", True, TWO_D, nd=True, axes=(-2, -1)),
    _row("rfft2", False, TWO_D, real_only=True, nd=True, axes=(-2, -1)),
    _row("irfft2", True, TWO_D, nd=True, axes=(-2, -1)),
    _row("fftn", False, N_D, nd=True),
    _row("fftn", True, N_D, nd=True),
    _row("ifftn", True, N_D, nd=True),
    _row("rfftn", False, N_D, real_only=True, nd=True),
    _row("irfftn", True, N_D, nd=True),
    _row("hfft2", True, TWO_D, nd=True),
    _row("ihfft2", False, TWO_D, real_only=True, nd=True),
    _row("hfftn", True, N_D, nd=True),
    _row("ihfftn", False, N_D, real_only=True, nd=True),
    OpInfo(name="fft.fftfreq", op=st.fft.fftfreq, ref=lambda n, d, dtype: np.fft.fftfreq(n, d),
           sample_inputs=_freq_samples, supports_autograd=False, error_inputs=_freq_errors("fftfreq")),
    OpInfo(name="fft.rfftfreq", op=st.fft.rfftfreq, ref=lambda n, d, dtype: np.fft.rfftfreq(n, d),
           sample_inputs=_freq_samples, supports_autograd=False, error_inputs=_freq_errors("rfftfreq")),
    OpInfo(name="fft.fftshift", op=st.fft.fftshift, ref=_np_shift("fftshift"), sample_inputs=_shift_samples,
           dtypes=(st.float32, st.float64, st.int64)),
    OpInfo(name="fft.ifftshift", op=st.fft.ifftshift, ref=_np_shift("ifftshift"), sample_inputs=_shift_samples,
           dtypes=(st.float32, st.float64, st.int64)),
]
