"""ReduceOp and Work: the reduction-operation enum and the handle of an asynchronous collective.

A collective is written once, as a generator of *steps*: each ``yield`` hands the backend's
pending requests (MPI requests, CUDA events) to the caller and resumes when they are complete.
The blocking form drives the generator at once; ``async_op=True`` wraps it in a :class:`Work`
whose ``wait()`` / ``is_completed()`` drive it later. Every step but the first only computes
locally: all communication is issued by the call itself, so every rank issues its collectives
in program order (MPI requires it) whenever, and on whichever rank, ``is_completed()`` polls.
"""

import enum

__all__ = ["RedOpType", "ReduceOp", "Work", "run_steps"]


class RedOpType(enum.IntEnum):
    """The values of :class:`ReduceOp` (torch's ``ReduceOp.RedOpType``)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9

    __str__ = enum.Enum.__str__  # "RedOpType.SUM", as torch prints it


class ReduceOp:
    """An enum-like class of reduction operations: ``SUM``, ``AVG``, ``PRODUCT``, ``MIN``,
    ``MAX``, ``BAND``, ``BOR`` and ``BXOR`` (torch.distributed.ReduceOp).

    ``AVG`` divides the sum by the world size (floating-point tensors only).
    """

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __init__(self, op):
        self.op = as_op(op, "ReduceOp")

    def __eq__(self, other):
        return as_op(other, "ReduceOp") == self.op

    def __hash__(self):
        return hash(self.op)

    def __repr__(self):
        return repr(self.op)


def as_op(op, fname):
    """The :class:`RedOpType` of ``op`` (a ReduceOp member or instance), or a TypeError."""
    if isinstance(op, ReduceOp):
        return op.op
    if isinstance(op, RedOpType):
        return op
    raise TypeError(
        f"{fname}(): op must be a torch.distributed.ReduceOp (e.g. ReduceOp.SUM), got "
        f"{type(op).__name__}"
    )


class Work:
    """The handle returned by a collective called with ``async_op=True`` (torch's ``Work``).

    ``wait()`` blocks until the operation is complete and its result is written into the
    tensors; ``is_completed()`` checks without blocking (and advances multi-step operations such
    as the sparse all-reduce, which exchanges sizes before payloads).
    """

    def __init__(self, backend, steps, pending, outputs=()):
        self._backend = backend
        self._steps = steps  # generator; None when done
        self._pending = pending
        self._outputs = list(outputs)
        self._exception = None

    def _advance(self):
        try:
            self._pending = self._steps.send(None)
        except StopIteration:
            self._steps = None
            self._pending = None
        except BaseException as e:
            self._steps = None
            self._pending = None
            self._exception = e
            raise

    def wait(self, timeout=None):
        """Block until the operation is complete; returns True (timeouts are not enforced by the
        MPI backend and are accepted for torch compatibility)."""
        if self._exception is not None:
            raise self._exception
        while self._steps is not None:
            self._backend.waitall(self._pending)
            self._advance()
        return True

    synchronize = wait

    def is_completed(self):
        """True when the operation has finished (never blocks)."""
        while self._steps is not None:
            if not self._backend.testall(self._pending):
                return False
            self._advance()
        return True

    def is_success(self):
        return self.is_completed() and self._exception is None

    def exception(self):
        return self._exception

    def result(self):
        """The output tensors of the operation (after ``wait()``)."""
        self.wait()
        return self._outputs

    def __repr__(self):
        state = "completed" if self._steps is None else "pending"
        return f"<sparsetorch.distributed.Work ({state})>"


def run_steps(backend, steps, async_op, outputs=()):
    """Start the collective ``steps`` (a generator); finish it now unless ``async_op``."""
    if async_op:
        try:
            pending = steps.send(None)
        except StopIteration:  # nothing left to wait for (e.g. a rank outside the group)
            return Work(backend, None, None, outputs)
        return Work(backend, steps, pending, outputs)
    for _ in steps:  # the blocking backend calls complete inside each step
        pass
    return None
