"""Start real MPI jobs from pytest: ``mpirun -n N python <script>``, bounded in time."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))


def mpirun_or_skip():
    pytest.importorskip("mpi4py")
    # the launcher of the `mpich` wheel sits next to this interpreter (venv not activated)
    here = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    exe = shutil.which("mpirun", path=here) or shutil.which("mpiexec", path=here)
    if exe is None:
        pytest.skip("mpirun is not on PATH (install the distributed extra: mpich)")
    return exe


def run_mpi(n, script, *args, timeout=300, cwd=None):
    """Run ``script`` on ``n`` ranks; return its stdout, or fail with its output."""
    exe = mpirun_or_skip()
    cmd = [exe, "-n", str(n)]
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30,
                             check=False)
    if "Open MPI" in version.stdout + version.stderr:
        cmd.append("--oversubscribe")  # more ranks than cores is fine for tests
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, HERE, env.get("PYTHONPATH", "")])
    # ranks share the machine's cores: one numba/BLAS thread per rank, or their spinning
    # worker threads starve each other and MPI's polling (tens of times slower)
    env.setdefault("NUMBA_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    try:
        p = subprocess.run(cmd + [sys.executable, script, *args], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd=cwd or ROOT, check=False)
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        pytest.fail(f"mpirun -n {n} {os.path.basename(script)} did not finish in {timeout} s:\n"
                    f"{out[-4000:]}")
    if p.returncode != 0:
        pytest.fail(f"mpirun -n {n} {os.path.basename(script)} failed ({p.returncode}):\n"
                    f"{p.stdout[-4000:]}\n{p.stderr[-6000:]}")
    return p.stdout
