"""torch.version: the torch API that sparsetorch implements, and the build's facts.

``__version__`` is torch's version string form, ``"<torch API version>+sparsetorch.<our
version>"``: sparsetorch implements torch 2.13's API, so code that gates on
``torch.__version__ >= "2.0"`` takes its modern paths, and the local label names the library
and its own release (``sparsetorch.version.sparsetorch``, ``"0.1.0"``), as torch's builds carry
``+cpu`` / ``+cu124``. There is no CUDA toolkit build: ``cuda`` is None (CuPy, loaded at run
time, serves the GPU; ``sparsetorch.cuda.is_available()`` says whether it can).
"""

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "sparsetorch", "torch_api"]

torch_api = "2.13.0"  # the torch release whose API sparsetorch matches
sparsetorch = "0.1.0"  # sparsetorch's own release (pyproject.toml)
__version__ = f"{torch_api}+sparsetorch.{sparsetorch}"
cuda = None
hip = None
rocm = None
xpu = None
debug = False
git_version = "Unknown"
