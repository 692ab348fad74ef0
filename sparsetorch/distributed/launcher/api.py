"""torch.distributed.launcher.api: ``LaunchConfig`` and ``elastic_launch`` on one node.

``elastic_launch(config, entrypoint)(*args)`` starts ``config.nproc_per_node`` workers over
``mpirun`` (or local processes: ``config.start_method == "local"``) and returns ``{rank:
return value}``: the entrypoint's return value when it is a callable (it must be importable by
name: a module-level function, pickled with its arguments), ``None`` per rank when it is a
program (``entrypoint=sys.executable`` and ``args=("train.py", ...)``). ``max_restarts``
restarts the whole job. Several nodes or an elastic node range (``min_nodes``/``max_nodes``
other than 1) need a rendezvous server and raise ``ValueError``. A failed job raises
``ChildFailedError`` (``.failures``: rank -> exit code).
"""

import dataclasses
import os
import pickle
import shutil
import tempfile
import uuid

from .._launcher import LaunchError, launch, refuse_multinode

__all__ = ["ChildFailedError", "LaunchConfig", "elastic_launch", "launch_agent"]

ChildFailedError = LaunchError


@dataclasses.dataclass
class LaunchConfig:
    """torch's LaunchConfig fields; only one node (``min_nodes == max_nodes == 1``) is
    honoured. ``start_method``: ``"spawn"``/``"fork"``/``"forkserver"`` start workers with
    mpirun, ``"local"`` as plain processes."""

    min_nodes: int
    max_nodes: int
    nproc_per_node: int
    logs_specs: object = None
    run_id: str = ""
    role: str = "default_role"
    rdzv_endpoint: str = ""
    rdzv_backend: str = "etcd"
    rdzv_configs: dict = dataclasses.field(default_factory=dict)
    rdzv_timeout: int = -1
    max_restarts: int = 3
    monitor_interval: float = 0.1
    start_method: str = "spawn"
    log_line_prefix_template: object = None
    metrics_cfg: dict = dataclasses.field(default_factory=dict)
    local_addr: object = None
    event_log_handler: str = "null"
    numa_options: object = None
    signals_to_handle: str = "SIGTERM,SIGINT,SIGHUP,SIGQUIT"
    duplicate_stdout_filters: object = None
    duplicate_stderr_filters: object = None
    virtual_local_rank: bool = False
    shutdown_timeout: object = None

    def __post_init__(self):
        if self.rdzv_timeout != -1:
            self.rdzv_configs["timeout"] = self.rdzv_timeout


class elastic_launch:
    """``elastic_launch(config, entrypoint)(*args)``: run ``entrypoint`` on every worker."""

    def __init__(self, config, entrypoint, health_check_server=None):
        self._config = config
        self._entrypoint = entrypoint
        self._health_check_server = health_check_server

    def __call__(self, *args):
        return launch_agent(self._config, self._entrypoint, list(args),
                            health_check_server=self._health_check_server)


def launch_agent(config, entrypoint, args, health_check_server=None):
    refuse_multinode(config.min_nodes, config.max_nodes, config.rdzv_endpoint,
                     "elastic_launch")
    if entrypoint is None:
        raise ValueError("elastic_launch: entrypoint must be a callable or a program path")
    n = int(config.nproc_per_node)
    launcher = "local" if config.start_method == "local" else "mpirun"
    run_id = config.run_id or str(uuid.uuid4())
    common = {"launcher": launcher, "max_restarts": config.max_restarts, "run_id": run_id,
              "role": config.role}
    if isinstance(entrypoint, str):
        cmd = [entrypoint] + [str(a) for a in args]
        if launcher == "mpirun":
            cmd = ["--no-python"] + cmd
        launch(cmd, n, name=entrypoint, **common)
        return dict.fromkeys(range(n))
    if not callable(entrypoint):
        raise TypeError(f"elastic_launch: entrypoint must be a callable or a str, got "
                        f"{type(entrypoint).__name__}")
    if launcher == "local":
        raise ValueError("elastic_launch: a callable entrypoint needs start_method "
                         "'spawn' (workers under mpirun)")
    tmp = tempfile.mkdtemp(prefix="sparsetorch-launch-")
    try:
        job = os.path.join(tmp, "job.pkl")
        try:
            with open(job, "wb") as f:
                pickle.dump((entrypoint, tuple(args)), f)
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            raise ValueError(
                f"elastic_launch: the entrypoint and its arguments must be picklable (a "
                f"module-level function importable by the workers): {e}") from e
        name = getattr(entrypoint, "__qualname__", str(entrypoint))
        if getattr(entrypoint, "__module__", None) == "__main__":
            raise ValueError(
                f"elastic_launch: {name} is defined in __main__, which the workers cannot "
                "import; define the entrypoint in an importable module")
        launch(["--call", job, tmp], n, name=name, **common)
        out = {}
        for r in range(n):
            with open(os.path.join(tmp, f"result-{r}.pkl"), "rb") as f:
                out[r] = pickle.load(f)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
