"""Process groups: ``init_process_group`` and the default group, ``new_group``, ranks.

The world comes from the MPI launcher (``mpirun -n 4 python train.py``): rank and size are
those of ``MPI.COMM_WORLD``. A :class:`ProcessGroup` holds one backend object (MPI or NCCL) over
its communicator and the global ranks of its members; collectives take ``src``/``dst`` as
global ranks, as in torch.
"""

import importlib.util

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "default_group",
    "destroy_process_group",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "new_group",
    "resolve",
]

_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


class Backend(str):
    """A backend name (``Backend.MPI == "mpi"``, ``Backend.NCCL == "nccl"``)."""

    UNDEFINED = "undefined"
    MPI = "mpi"
    NCCL = "nccl"
    GLOO = "gloo"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(  # noqa: TRY004 - torch raises ValueError here
                f"Backend constructor parameter must be string-ish, got {name!r}")
        return str.__new__(cls, name.lower())


class ProcessGroup:
    """A group of processes and the backend that runs its collectives."""

    def __init__(self, backend, ranks):
        self.backend = backend
        self.ranks = list(ranks)  # global rank of each group rank

    def rank(self):
        return self.backend.rank

    def size(self):
        return self.backend.size

    def name(self):
        return self.backend.name

    def __repr__(self):
        return f"<ProcessGroup backend={self.backend.name} ranks={self.ranks}>"


class GroupMember:
    """``GroupMember.WORLD`` is the default group; ``NON_GROUP_MEMBER`` is what ``new_group``
    returns on processes outside the new group."""

    WORLD = None
    NON_GROUP_MEMBER = object()


_state = {"default": None, "groups": []}


def is_available():
    """True: sparsetorch.distributed is always importable (backends are checked at init)."""
    return True


def is_mpi_available():
    """True if mpi4py is installed (checked without initialising MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_nccl_available():
    """True if CuPy with NCCL and a GPU are present."""
    if importlib.util.find_spec("cupy") is None:
        return False
    from ._nccl import nccl_available

    return nccl_available()


def is_gloo_available():
    return False


def is_torchelastic_launched():
    """True in a worker started by ``sparsetorch.distributed.run`` / ``elastic_launch``."""
    import os

    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized():
    """True once ``init_process_group`` has been called (and not destroyed)."""
    return _state["default"] is not None


def _make_backend(name, comm, device_id):
    if name == Backend.NCCL:
        from ._nccl import NCCLBackend

        return NCCLBackend(comm, device_id)
    from ._mpi import MPIBackend

    return MPIBackend(comm)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Initialize the default process group (torch.distributed.init_process_group).

    Rank and world size come from the MPI launcher: start the script with
    ``mpirun -n <world_size> python script.py``. ``backend`` is ``"mpi"`` (CPU tensors; the
    default) or ``"nccl"`` (CUDA tensors through CuPy, bootstrapped over MPI). ``world_size``
    and ``rank``, if given, must agree with the launcher. ``init_method``, ``store`` and
    ``timeout`` are accepted for compatibility; MPI does its own rendezvous.
    """
    if _state["default"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend if backend is not None else Backend.MPI)
    if name == "cpu:mpi,cuda:nccl":
        name = Backend.MPI
    if name not in (Backend.MPI, Backend.NCCL):
        raise ValueError(
            f"init_process_group(): backend {name!r} is not available in sparsetorch; use "
            "backend='mpi' (CPU tensors, launch with mpirun) or backend='nccl' (GPU tensors)"
        )
    if not is_mpi_available():
        raise RuntimeError(
            "init_process_group(): mpi4py is not installed; install the distributed extra "
            "(pip install 'sparsetorch[distributed]') and launch with mpirun"
        )
    from ._mpi import world_comm

    comm = world_comm()
    import os

    env_world = os.environ.get("WORLD_SIZE")
    if os.environ.get("TORCHELASTIC_RUN_ID") is not None and env_world is not None and \
            int(env_world) != comm.Get_size():
        raise RuntimeError(
            f"init_process_group(): WORLD_SIZE={env_world} but MPI sees {comm.Get_size()} "
            "process(es): the workers were started without mpirun (launcher 'local'); start "
            "them with python -m sparsetorch.distributed.run --launcher mpirun")
    if world_size not in (-1, None) and int(world_size) != comm.Get_size():
        raise ValueError(
            f"init_process_group(): world_size={world_size} but the MPI launcher started "
            f"{comm.Get_size()} processes; launch with mpirun -n {world_size} or leave "
            "world_size unset"
        )
    if rank not in (-1, None) and int(rank) != comm.Get_rank():
        raise ValueError(
            f"init_process_group(): rank={rank} but MPI gave this process rank {comm.Get_rank()}; "
            "ranks come from the launcher, leave rank unset"
        )
    dev = getattr(device_id, "index", device_id)
    be = _make_backend(name, comm.Dup(), dev)
    _state["default"] = ProcessGroup(be, range(be.size))


def default_group():
    g = _state["default"]
    if g is None:
        raise ValueError(_NOT_INIT)
    return g


def resolve(group):
    """The ProcessGroup for ``group`` (None: the default), or None outside of it."""
    if group is None or group is GroupMember.WORLD:
        return default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup or None, got {type(group).__name__}")
    default_group()
    return group


def destroy_process_group(group=None):
    """Destroy ``group`` (or the default group and every group made from it)."""
    if group is None or group is GroupMember.WORLD:
        g = default_group()
        for sub in _state["groups"]:
            sub.backend.free()
        _state["groups"].clear()
        g.backend.free()
        _state["default"] = None
        from ._sparse import clear_buffers

        clear_buffers()
        return
    if group in _state["groups"]:
        _state["groups"].remove(group)
        group.backend.free()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None, sort_ranks=True):
    """A new group of the given global ``ranks`` (all ranks if None). Every process of the
    default group must call it; processes outside get ``GroupMember.NON_GROUP_MEMBER``."""
    world = default_group()
    n = world.size()
    ranks = list(range(n)) if ranks is None else [int(r) for r in ranks]
    if sort_ranks:
        ranks = sorted(ranks)
    if len(set(ranks)) != len(ranks) or any(not 0 <= r < n for r in ranks):
        raise ValueError(
            f"new_group(): ranks must be distinct global ranks in [0, {n}), got {ranks}")
    me = world.rank()
    member = me in ranks
    sub = world.backend.split(0 if member else -1, ranks.index(me) if member else 0)
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    name = Backend(backend) if backend is not None else world.backend.name
    be = _make_backend(name, sub, getattr(world.backend, "device_id", None))
    g = ProcessGroup(be, ranks)
    _state["groups"].append(g)
    return g


def get_rank(group=None):
    """This process's rank in ``group`` (-1 if it is not a member)."""
    g = resolve(group)
    return -1 if g is None else g.rank()


def get_world_size(group=None):
    """The number of processes in ``group`` (-1 if this process is not a member)."""
    g = resolve(group)
    return -1 if g is None else g.size()


def get_backend(group=None):
    g = resolve(group)
    if g is None:
        raise ValueError("Invalid process group specified")
    return Backend(g.backend.name)


def get_process_group_ranks(group):
    g = resolve(group)
    return list(g.ranks)


def get_global_rank(group, group_rank):
    g = resolve(group)
    if not 0 <= group_rank < len(g.ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {g.ranks}")
    return g.ranks[group_rank]


def get_group_rank(group, global_rank):
    g = resolve(group)
    if global_rank not in g.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {g.ranks}")
    return g.ranks.index(global_rank)
