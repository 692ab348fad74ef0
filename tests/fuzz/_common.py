"""What the fuzz targets share: the documented exception set and the raw-NumPy detector.

A target feeds fuzzer bytes to one public entry point. The entry point may raise an exception of a
documented type (``DOCUMENTED``) with its own message; anything else -- another type, or a
documented type whose message is NumPy's/SciPy's rather than sparsetorch's -- is a finding, and
the target re-raises it so atheris records the input.
"""

import contextlib
import re
import sys

DOCUMENTED = (ValueError, TypeError, IndexError, RuntimeError, NotImplementedError, MemoryError)

# Messages NumPy/SciPy raise from deep inside: the user sees a kernel's internals, not the argument
# that was wrong. (sparsetorch's own messages name the function: "sparse_coo_tensor(): ...")
RAW = re.compile(
    r"out of bounds for axis|could not broadcast|operands could not be broadcast|Unable to allocate"
    r"|cannot reshape array|setting an array element with a sequence|negative dimensions are not"
    r"|maximum supported dimension|arrays used as indices must be|only integers, slices"
    r"|Python int too large|cannot convert float NaN|object arrays are not supported"
    r"|cannot be safely cast|ufunc '|zero-size array to reduction|index \d+ is out of bounds"
    r"|array is too big|buffer size must be|invalid shape|the truth value of an array|bad marshal"
)


class Finding(AssertionError):
    """A wrong result or an undocumented error (raised so atheris stops and saves the input)."""


def check_exception(e):
    """Re-raise ``e`` unless it is a documented error with a sparsetorch message."""
    if not isinstance(e, DOCUMENTED):
        raise e
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    from_lib = last is not None and ("/numpy/" in last or "/scipy/" in last)
    if from_lib or RAW.search(str(e)):
        raise Finding(f"raw library error {type(e).__name__}: {e}") from e


@contextlib.contextmanager
def classified():
    """Run a target's checks: findings propagate, any other exception is classified by
    ``check_exception`` (documented errors with our own message pass)."""
    try:
        yield
    except Finding:
        raise
    except Exception as e:  # noqa: BLE001 - the point: classify every error
        check_exception(e)


def main(test_one_input):
    """``python fuzz_<target>.py [atheris options]``: fuzz ``test_one_input``."""
    import atheris

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


# numba compiles these modules' functions from their bytecode; atheris's coverage hooks in that
# bytecode make numba's typing fail, so they run uninstrumented
NUMBA_MODULES = [
    "sparsetorch.sparse._rowsort", "sparsetorch.sparse._spmm", "sparsetorch.sparse._merge",
    "sparsetorch.nn._kernels", "sparsetorch.nn._kernels.embedding", "sparsetorch.nn._functional.embedding",
    "sparsetorch.optim._kernels", "sparsetorch.distributed._sparse", "sparsetorch._backend",
    "sparsetorch.sparse._runsum", "sparsetorch.sparse._spgemm", "sparsetorch.nn._kernels.pointwise",
    "sparsetorch.nn._kernels.attention", "sparsetorch.distributed._merge", "sparsetorch._ops._sampling",
    "sparsetorch._jit",
]


def instrumented():
    """``with instrumented(): import sparsetorch`` -- coverage for sparsetorch, numba kernels excluded."""
    import atheris

    return atheris.instrument_imports(include=["sparsetorch"], exclude=NUMBA_MODULES)
