"""Issue 21's public names against torch: signatures of the all-to-all and object collectives,
LaunchConfig's fields and defaults, the launcher's options; single-process behaviour."""

import inspect

import pytest

import sparsetorch.distributed as dist
from sparsetorch.distributed import run as st_run
from sparsetorch.distributed.launcher import api as st_api

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["all_to_all", "all_to_all_single", "scatter_object_list",
                                  "all_gather_object", "gather_object",
                                  "broadcast_object_list"])
def test_collective_signatures_match_torch(name):
    import torch.distributed as tdist

    want = inspect.signature(getattr(tdist, name)).parameters
    got = inspect.signature(getattr(dist, name)).parameters
    assert list(got) == list(want)
    assert [p.default for p in got.values()] == [p.default for p in want.values()]


def test_launch_config_matches_torch():
    from torch.distributed.launcher import api

    want = {f.name: f.default for f in api.LaunchConfig.__dataclass_fields__.values()}
    got = {f.name: f.default for f in st_api.LaunchConfig.__dataclass_fields__.values()}
    assert list(got) == list(want)
    plain = {k: v for k, v in want.items() if isinstance(v, (int, float, str, bool, type(None)))}
    assert {k: got[k] for k in plain} == plain
    cfg = st_api.LaunchConfig(1, 1, 2, rdzv_timeout=30)
    assert cfg.rdzv_configs == {"timeout": 30}  # as torch's __post_init__
    assert list(inspect.signature(st_api.elastic_launch).parameters) == \
        list(inspect.signature(api.elastic_launch).parameters)


def test_run_accepts_torchruns_options():
    import torch.distributed.run as trun

    ours = {s for a in st_run.get_args_parser()._actions for s in a.option_strings}
    theirs = {s for a in trun.get_args_parser()._actions for s in a.option_strings}
    missing = theirs - ours
    # options of torch's newer agent features, not offered (argparse rejects them clearly)
    assert missing <= {"--event-log-handler", "--event_log_handler", "--duplicate-stdout-filters",
                       "--duplicate_stdout_filters", "--duplicate-stderr-filters",
                       "--duplicate_stderr_filters", "--logs-specs", "--logs_specs",
                       "--numa-binding", "--numa_binding", "--signals-to-handle",
                       "--signals_to_handle", "--shutdown-timeout", "--shutdown_timeout",
                       "--virtual-local-rank", "--virtual_local_rank"}, missing
    a = st_run.parse_args(["--nproc_per_node", "4", "--master-port", "1234", "t.py", "--x"])
    assert (a.nproc_per_node, a.master_port, a.training_script, a.training_script_args) == \
        ("4", 1234, "t.py", ["--x"])


def test_row_bounds_and_table_plan():
    assert dist.row_bounds(10, 3) == [0, 4, 8, 10]
    assert dist.row_bounds(2, 3) == [0, 1, 2, 2]
    assert dist.row_bounds(10, 3, "table_wise", owner=1) == [0, 0, 10, 10]
    assert dist.table_wise_plan({"a": 10, "b": 30, "c": 5, "d": 20}, 2) == \
        {"b": 0, "d": 1, "a": 1, "c": 0}


def test_uninitialized_errors_match_torch():
    import torch.distributed as tdist

    t = torch.zeros(2)
    with pytest.raises(ValueError) as want:
        tdist.all_to_all_single(t, t)
    import sparsetorch as st

    s = st.zeros(2)
    with pytest.raises(ValueError) as got:
        dist.all_to_all_single(s, s)
    assert "not been initialized" in str(want.value) and "not been initialized" in str(got.value)
    with pytest.raises(ValueError, match="not been initialized"):
        dist.ShardedEmbeddingBag(4, 2)
