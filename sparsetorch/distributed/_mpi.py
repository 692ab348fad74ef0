"""The MPI backend: collectives on host (NumPy) buffers through mpi4py's buffer interface.

Every method takes contiguous arrays (no pickling on the data path) and ``nb``: with
``nb=False`` it runs the blocking MPI call and returns no requests; with ``nb=True`` it starts
the non-blocking call (``Iallreduce`` ...) and returns its requests. mpi4py is imported here
only, when a process group is created, because importing ``mpi4py.MPI`` initialises MPI.
"""

from ._work import RedOpType

__all__ = ["MPIBackend", "world_comm"]


def world_comm():
    from mpi4py import MPI

    return MPI.COMM_WORLD


class MPIBackend:
    """Collectives of one MPI communicator on CPU arrays."""

    name = "mpi"

    def __init__(self, comm):
        from mpi4py import MPI

        self.MPI = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self._ops = {
            RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM, RedOpType.PRODUCT: MPI.PROD,
            RedOpType.MIN: MPI.MIN, RedOpType.MAX: MPI.MAX, RedOpType.BAND: MPI.BAND,
            RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR,
        }
        # bool buffers: MPI defines only logical ops on C_BOOL (torch: SUM/MAX is "or")
        self._bool_ops = {
            RedOpType.SUM: MPI.LOR, RedOpType.MAX: MPI.LOR, RedOpType.BOR: MPI.LOR,
            RedOpType.PRODUCT: MPI.LAND, RedOpType.MIN: MPI.LAND, RedOpType.BAND: MPI.LAND,
            RedOpType.BXOR: MPI.LXOR,
        }

    def check_device(self, t, fname):
        if t.device.type != "cpu":
            raise RuntimeError(
                f"{fname}(): the 'mpi' backend works on CPU tensors, but got a tensor on "
                f"{t.device}; move it with .cpu() or use init_process_group(backend='nccl')"
            )

    def mpi_op(self, op, dtype):
        if dtype == bool:
            return self._bool_ops[op]
        return self._ops[op]

    # ---- requests ----
    def waitall(self, reqs):
        if reqs:
            self.MPI.Request.Waitall(reqs)

    def testall(self, reqs):
        return not reqs or self.MPI.Request.Testall(reqs)

    # ---- collectives (contiguous arrays) ----
    def allreduce(self, buf, op, nb):
        mop = self.mpi_op(op, buf.dtype)
        if nb:
            return [self.comm.Iallreduce(self.MPI.IN_PLACE, buf, op=mop)]
        self.comm.Allreduce(self.MPI.IN_PLACE, buf, op=mop)
        return []

    def broadcast(self, buf, root, nb):
        if nb:
            return [self.comm.Ibcast(buf, root=root)]
        self.comm.Bcast(buf, root=root)
        return []

    def reduce(self, buf, op, root, nb):
        mop = self.mpi_op(op, buf.dtype)
        send = self.MPI.IN_PLACE if self.rank == root else buf
        recv = buf if self.rank == root else None
        if nb:
            return [self.comm.Ireduce(send, recv, op=mop, root=root)]
        self.comm.Reduce(send, recv, op=mop, root=root)
        return []

    def allgather(self, send, recv, nb):
        if nb:
            return [self.comm.Iallgather(send, recv)]
        self.comm.Allgather(send, recv)
        return []

    def allgatherv(self, send, recv, counts, nb):
        """Gather ``counts[r]`` elements from each rank ``r`` into ``recv``, in rank order."""
        req = self.comm.Iallgatherv(send, [recv, list(counts)])
        if nb:
            return [req]
        # NOTE: always the non-blocking call: MPICH 5's blocking Allgatherv of ~20 MB takes
        # 0.1-3 s on shared memory where Iallgatherv (and Allgather) take ~15 ms
        req.Wait()
        return []

    def reduce_scatter_block(self, send, recv, op, nb):
        mop = self.mpi_op(op, send.dtype)
        if nb:
            return [self.comm.Ireduce_scatter_block(send, recv, op=mop)]
        self.comm.Reduce_scatter_block(send, recv, op=mop)
        return []

    def gather(self, send, recv, root, nb):
        if nb:
            return [self.comm.Igather(send, recv, root=root)]
        self.comm.Gather(send, recv, root=root)
        return []

    def scatter(self, send, recv, root, nb):
        if nb:
            return [self.comm.Iscatter(send, recv, root=root)]
        self.comm.Scatter(send, recv, root=root)
        return []

    def alltoallv(self, send, scounts, recv, rcounts, nb):
        """Rank ``r`` gets ``scounts[r]`` elements of ``send`` (packed in rank order) and this
        rank receives ``rcounts[r]`` elements from each rank ``r`` into ``recv``, packed."""
        sc = [int(c) for c in scounts]
        rc = [int(c) for c in rcounts]
        sd = [sum(sc[:i]) for i in range(len(sc))]
        rd = [sum(rc[:i]) for i in range(len(rc))]
        req = self.comm.Ialltoallv([send, (sc, sd)], [recv, (rc, rd)])
        if nb:
            return [req]
        req.Wait()  # (the non-blocking call, as in allgatherv)
        return []

    def send(self, buf, dst, tag, nb):
        if nb:
            return [self.comm.Isend(buf, dest=dst, tag=tag)]
        self.comm.Send(buf, dest=dst, tag=tag)
        return []

    def recv(self, buf, src, tag, nb, status):
        """Receive into ``buf``; ``src`` None means any source. ``status.Get_source()`` tells
        who sent it once the receive is complete."""
        src = self.MPI.ANY_SOURCE if src is None else src
        if nb:
            return [self.comm.Irecv(buf, source=src, tag=tag)]
        self.comm.Recv(buf, source=src, tag=tag, status=status)
        return []

    def new_status(self):
        return self.MPI.Status()

    def barrier(self, nb):
        if nb:
            return [self.comm.Ibarrier()]
        self.comm.Barrier()
        return []

    # ---- Python objects (pickled: control path only) ----
    def allgather_object(self, obj):
        return self.comm.allgather(obj)

    def bcast_object(self, obj, root):
        return self.comm.bcast(obj, root=root)

    def gather_object(self, obj, root):
        return self.comm.gather(obj, root=root)

    def scatter_object(self, objs, root):
        return self.comm.scatter(objs, root=root)

    def split(self, color, key):
        """A sub-communicator (collective over this communicator); None for color < 0."""
        sub = self.comm.Split(self.MPI.UNDEFINED if color < 0 else color, key)
        return None if sub == self.MPI.COMM_NULL else sub

    def free(self):
        if self.comm != self.MPI.COMM_WORLD and self.comm != self.MPI.COMM_NULL:
            self.comm.Free()
