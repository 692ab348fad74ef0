"""torch.backends.cpu: the CPU's vector capability, as torch names it."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """The widest SIMD instruction set of this CPU that NumPy dispatches to, in torch's words:
    ``"AVX512"``, ``"AVX2"``, ``"SVE256"``, ``"DEFAULT"`` (or ``"NO AVX"``)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as f
    except ImportError:  # NumPy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as f
    if all(f.get(k) for k in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        return "AVX512"
    if f.get("AVX2") and f.get("FMA3"):
        return "AVX2"
    if f.get("SVE"):
        return "SVE256"
    if "AVX" in f and not f.get("AVX"):
        return "NO AVX"
    return "DEFAULT"
