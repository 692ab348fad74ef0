"""The NCCL backend: collectives on GPU (CuPy) buffers through ``cupy.cuda.nccl``.

NCCL is bootstrapped with MPI: rank 0 creates the NCCL unique id and broadcasts it over the
MPI communicator, then every rank joins the NCCL communicator. The MPI communicator stays in
use for Python objects and barriers. CuPy is imported lazily; without CuPy, NCCL or a GPU,
creating the backend raises a RuntimeError that says so. Operations are enqueued on the current
CuPy stream; their "requests" are CUDA events recorded after them.

NOTE: this module is untested in CI (no GPU there); see docs/distributed.md.
"""

from ._mpi import MPIBackend
from ._work import RedOpType

__all__ = ["NCCLBackend", "nccl_available"]


def _import_nccl():
    try:
        import cupy
        from cupy.cuda import nccl
    except ImportError as e:
        raise RuntimeError(
            "init_process_group(backend='nccl'): CuPy with NCCL support is not installed "
            "(pip install cupy-cuda12x); use backend='mpi' for CPU tensors"
        ) from e
    if not getattr(nccl, "available", True):
        raise RuntimeError(
            "init_process_group(backend='nccl'): this CuPy build has no NCCL; install a CuPy "
            "wheel with NCCL (cupy-cuda12x) or use backend='mpi'"
        )
    try:
        ndev = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        raise RuntimeError(f"init_process_group(backend='nccl'): no usable GPU ({e})") from e
    if ndev == 0:
        raise RuntimeError("init_process_group(backend='nccl'): no GPU was found")
    return cupy, nccl, ndev


def nccl_available():
    try:
        _import_nccl()
    except RuntimeError:
        return False
    return True


class NCCLBackend(MPIBackend):
    """Collectives of one NCCL communicator on CuPy arrays (MPI for objects and bootstrap)."""

    name = "nccl"

    def __init__(self, comm, device_id=None):
        super().__init__(comm)
        cupy, nccl, ndev = _import_nccl()
        self.cupy = cupy
        self.nccl = nccl
        if device_id is None:  # one GPU per process on each node: the node-local rank picks it
            local = comm.Split_type(self.MPI.COMM_TYPE_SHARED, key=self.rank)
            device_id = local.Get_rank() % ndev
            local.Free()
        self.device_id = int(device_id)
        cupy.cuda.Device(self.device_id).use()
        uid = nccl.get_unique_id() if self.rank == 0 else None
        uid = comm.bcast(uid, root=0)
        self.nc = nccl.NcclCommunicator(self.size, uid, self.rank)
        self._nops = {
            RedOpType.SUM: nccl.NCCL_SUM, RedOpType.PRODUCT: nccl.NCCL_PROD,
            RedOpType.MIN: nccl.NCCL_MIN, RedOpType.MAX: nccl.NCCL_MAX,
        }
        self._types = {
            "float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32,
            "float64": nccl.NCCL_FLOAT64, "int8": nccl.NCCL_INT8, "uint8": nccl.NCCL_UINT8,
            "int32": nccl.NCCL_INT32, "int64": nccl.NCCL_INT64, "bool": nccl.NCCL_UINT8,
        }

    def check_device(self, t, fname):
        if t.device.type != "cuda":
            raise RuntimeError(
                f"{fname}(): the 'nccl' backend works on CUDA tensors, but got a tensor on "
                f"{t.device}; move it with .cuda() or use init_process_group(backend='mpi')"
            )

    def _nt(self, a):
        nt = self._types.get(a.dtype.name)
        if nt is None:
            raise RuntimeError(f"the 'nccl' backend does not support dtype {a.dtype.name}")
        return nt

    def _nop(self, op, dtype):
        if op is RedOpType.AVG:
            op = RedOpType.SUM  # the caller divides (NCCL_AVG needs NCCL >= 2.10)
        if dtype == bool:  # bool travels as uint8: "or" is MAX, "and" is MIN (torch's meaning)
            op = {RedOpType.SUM: RedOpType.MAX, RedOpType.BOR: RedOpType.MAX,
                  RedOpType.PRODUCT: RedOpType.MIN, RedOpType.BAND: RedOpType.MIN}.get(op, op)
        nop = self._nops.get(op)
        if nop is None:
            raise RuntimeError(f"the 'nccl' backend does not support ReduceOp.{op.name} on {dtype}")
        return nop

    def _event(self, nb):
        stream = self.cupy.cuda.get_current_stream()
        if nb:
            ev = self.cupy.cuda.Event(disable_timing=True)
            ev.record(stream)
            return [ev]
        stream.synchronize()
        return []

    @property
    def _stream(self):
        return self.cupy.cuda.get_current_stream().ptr

    # ---- requests: CUDA events ----
    def waitall(self, evs):
        for ev in evs or ():
            ev.synchronize()

    def testall(self, evs):
        return all(ev.done for ev in evs or ())

    # ---- collectives ----
    def allreduce(self, buf, op, nb):
        p = buf.data.ptr
        self.nc.allReduce(p, p, buf.size, self._nt(buf), self._nop(op, buf.dtype), self._stream)
        return self._event(nb)

    def broadcast(self, buf, root, nb):
        self.nc.bcast(buf.data.ptr, buf.size, self._nt(buf), root, self._stream)
        return self._event(nb)

    def reduce(self, buf, op, root, nb):
        p = buf.data.ptr
        self.nc.reduce(p, p, buf.size, self._nt(buf), self._nop(op, buf.dtype), root, self._stream)
        return self._event(nb)

    def allgather(self, send, recv, nb):
        self.nc.allGather(send.data.ptr, recv.data.ptr, send.size, self._nt(send), self._stream)
        return self._event(nb)

    def allgatherv(self, send, recv, counts, nb):
        # NCCL's allGather needs equal counts: pad every rank's part to the largest, then pack
        xp = self.cupy
        counts = [int(c) for c in counts]
        top = max(counts) if counts else 0
        if top == 0:
            return self._event(nb)
        padded = xp.zeros(top, dtype=send.dtype)
        padded[: send.size] = send.reshape(-1)
        every = xp.empty(top * self.size, dtype=send.dtype)
        self.nc.allGather(padded.data.ptr, every.data.ptr, top, self._nt(send), self._stream)
        out = recv.reshape(-1)
        pos = 0
        for r, c in enumerate(counts):
            out[pos:pos + c] = every[r * top:r * top + c]
            pos += c
        return self._event(nb)

    def reduce_scatter_block(self, send, recv, op, nb):
        self.nc.reduceScatter(send.data.ptr, recv.data.ptr, recv.size, self._nt(send),
                              self._nop(op, send.dtype), self._stream)
        return self._event(nb)

    def gather(self, send, recv, root, nb):
        every = self.cupy.empty(send.size * self.size, dtype=send.dtype)
        self.allgather(send, every, False)
        if self.rank == root:
            recv.reshape(-1)[...] = every
        return self._event(nb)

    def scatter(self, send, recv, root, nb):
        buf = send if self.rank == root else self.cupy.empty(recv.size * self.size, recv.dtype)
        self.broadcast(buf, root, False)
        recv.reshape(-1)[...] = buf.reshape(-1)[self.rank * recv.size:(self.rank + 1) * recv.size]
        return self._event(nb)

    def alltoallv(self, send, scounts, recv, rcounts, nb):
        """Grouped point-to-point (NCCL has no all-to-all-v): one send and one receive per
        peer between ``groupStart`` and ``groupEnd``."""
        nccl = self.nccl
        sd = rd = 0
        nt = self._nt(send if send.size else recv)
        nccl.groupStart()
        try:
            for r in range(self.size):
                sc, rc = int(scounts[r]), int(rcounts[r])
                if sc:
                    self.nc.send(send.data.ptr + sd * send.itemsize, sc, nt, r, self._stream)
                if rc:
                    self.nc.recv(recv.data.ptr + rd * recv.itemsize, rc, nt, r, self._stream)
                sd += sc
                rd += rc
        finally:
            nccl.groupEnd()
        return self._event(nb)

    def send(self, buf, dst, tag, nb):
        self.nc.send(buf.data.ptr, buf.size, self._nt(buf), dst, self._stream)
        return self._event(nb)

    def recv(self, buf, src, tag, nb, status):
        if src is None:
            raise RuntimeError("recv(): the 'nccl' backend needs an explicit src rank")
        self.nc.recv(buf.data.ptr, buf.size, self._nt(buf), src, self._stream)
        return self._event(nb)

    def free(self):
        self.nc.destroy()
        super().free()
