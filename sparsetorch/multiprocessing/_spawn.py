"""``spawn`` / ``start_processes``: run ``fn(i, *args)`` in N processes, report failures as torch.

A child that raises writes its formatted traceback to a private file and exits with status 1;
``ProcessContext.join`` waits for any child to finish, and on the first failure terminates the
others (SIGTERM, then SIGKILL after the grace period) and raises ``ProcessRaisedException``
(with the child's traceback) or ``ProcessExitedException`` (exit code or signal name).
"""

import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings

__all__ = [
    "ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException",
    "spawn", "SpawnContext", "start_processes",
]

log = logging.getLogger(__name__)


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """Exception raised when a process failed due to an exception raised by the code."""


class ProcessExitedException(ProcessException):
    """Exception raised when a process failed due to signal or exited with a specific code."""

    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _die_with_parent():
    """Linux: deliver SIGINT to this child when its parent dies (prctl PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _wrap(fn, i, args, error_file):
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        return  # SIGINT from the parent shutting the children down: exit quietly, as torch's
    except Exception:
        import traceback

        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout):
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        r"""Join one or more processes within spawn context.

        If one of them exited with a non-zero exit status, this function kills the remaining
        processes (optionally with a grace period) and raises an exception with the cause of the
        first process exiting. Returns ``True`` if all processes have been joined successfully,
        ``False`` if there are more processes that need to be joined.

        Args:
            timeout (float): Wait this long (in seconds) before giving up on waiting.
            grace_period (float): When any processes fail, wait this long (in seconds)
                for others to shutdown gracefully before terminating them. If they
                still don't exit, wait another grace period before killing them.
        """
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            self.processes[i].join()
            if self.processes[i].exitcode != 0:
                failed = i
                break
        if failed is None:
            return not self.sentinels
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via "
                            "SIGKILL", p.pid)
                p.kill()
            p.join()
        self._raise(failed)

    def _raise(self, i):
        proc = self.processes[i]
        if not os.access(self.error_files[i], os.R_OK):
            code = proc.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(
                    f"process {i:d} terminated with signal {name}", error_index=i,
                    error_pid=proc.pid, exit_code=code, signal_name=name)
            raise ProcessExitedException(
                f"process {i:d} terminated with exit code {code:d}", error_index=i,
                error_pid=proc.pid, exit_code=code)
        with open(self.error_files[i], "rb") as fh:
            trace = pickle.load(fh)
        msg = f"\n\n-- Process {i:d} terminated with the following error:\n" + trace
        raise ProcessRaisedException(msg, i, proc.pid)


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def _error_file():
    tf = tempfile.NamedTemporaryFile(prefix="pytorch-errorfile-", suffix=".pickle", delete=False)
    tf.close()
    os.unlink(tf.name)  # the name only: the file exists once a child writes its traceback
    return tf.name


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``spawn`` with any start method (``"spawn"``, ``"fork"``, ``"forkserver"``)."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        error_files.append(_error_file())
        p = ctx.Process(target=_wrap, args=(fn, i, args, error_files[-1]), daemon=daemon)
        p.start()
        processes.append(p)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    r"""Spawns ``nprocs`` processes that run ``fn`` with ``args``.

    If one of the processes exits with a non-zero exit status, the remaining processes are killed
    and an exception is raised with the cause of termination. In the case an exception was caught
    in the child process, it is forwarded and its traceback is included in the exception raised
    in the parent process.

    Args:
        fn (function): called as ``fn(i, *args)`` in each process, ``i`` its index; it must be
            defined at the top level of a module so it can be pickled.
        args (tuple): Arguments passed to ``fn``.
        nprocs (int): Number of processes to spawn.
        join (bool): Perform a blocking join on all processes.
        daemon (bool): The spawned processes' daemon flag.
        start_method (str): (deprecated) this method always uses ``spawn``; use
            ``start_processes()`` for another start method.

    Returns:
        None if ``join`` is ``True``, :class:`~ProcessContext` if ``join`` is ``False``
    """
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
