"""torch.autograd.profiler / torch.profiler: op ranges from the dispatcher and the engine."""

import json
import os
import warnings

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch.autograd import profiler
from sparsetorch.profiler import (
    ProfilerAction, ProfilerActivity, profile as tprofile, schedule, tensorboard_trace_handler,
)


def _model():
    st.manual_seed(0)
    return st.nn.Sequential(st.nn.Linear(4, 3), st.nn.ReLU(), st.nn.Linear(3, 2))


def _counts(prof):
    return {e.key: e.count for e in prof.key_averages()}


def test_small_model_ops_and_counts():
    m = _model()
    x = st.randn(5, 4)
    with profiler.profile() as prof:
        y = m(x).sum()
        y.backward()
    c = _counts(prof)
    assert c["aten::mm"] >= 2  # two forward products (+ those of backward)
    assert c["aten::linear"] == 2 and c["aten::addmm"] == 2  # torch's names for nn.Linear
    assert c["aten::relu"] == 1
    assert c["aten::sum"] == 3  # the loss, and the two bias gradients (torch counts 3 too)
    assert c["autograd::engine::evaluate_function: SumBackward0"] == 1
    assert c["autograd::engine::evaluate_function: ReluBackward0"] == 1
    assert c["ReluBackward0"] == 1
    assert c["torch::autograd::AccumulateGrad"] == 4  # 2 weights + 2 biases
    assert c["autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"] == 4
    top = [e.name for e in prof.function_events if e.cpu_parent is None
           and not e.name.startswith("autograd::engine")]
    assert top == ["aten::linear", "aten::relu", "aten::linear", "aten::sum"]
    linear = next(e for e in prof.function_events if e.name == "aten::linear")
    assert "aten::addmm" in [c.name for c in linear.cpu_children]


def test_counts_match_torch_for_elementwise_graph():
    torch = pytest.importorskip("torch")
    from torch.autograd import profiler as tprof

    def run(lib, prof_mod):
        w = lib.ones(3, requires_grad=True)
        x = lib.ones(3)
        b = lib.ones(3, requires_grad=True)
        with prof_mod.profile() as p:
            (w * x + b).sum().backward()
        return {e.key: e.count for e in p.key_averages()}

    ours = run(st, profiler)
    theirs = run(torch, tprof)
    names = ["aten::mul", "aten::add", "aten::sum", "MulBackward0", "AddBackward0",
             "SumBackward0", "torch::autograd::AccumulateGrad",
             "autograd::engine::evaluate_function: MulBackward0"]
    assert {n: ours.get(n) for n in names} == {n: theirs.get(n) for n in names}

    def run_mlp(lib, prof_mod):
        m = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))
        with prof_mod.profile() as p:
            m(lib.ones(5, 4)).sum().backward()
        return {e.key: e.count for e in p.key_averages()}

    ours = run_mlp(st, profiler)
    theirs = run_mlp(torch, tprof)
    names = ["aten::linear", "aten::addmm", "aten::relu", "aten::sum", "ReluBackward0",
             "torch::autograd::AccumulateGrad"]
    assert {n: ours.get(n) for n in names} == {n: theirs.get(n) for n in names}


def test_self_and_total_times_nest():
    m = _model()
    x = st.randn(5, 4, requires_grad=True)
    with profiler.profile() as prof:
        m(x).sum().backward()
    evs = prof.function_events
    for e in evs:
        assert e.cpu_time_total >= 0
        assert e.self_cpu_time_total <= e.cpu_time_total + 1e-9
        for c in e.cpu_children:
            assert c.cpu_parent is e
            assert e.time_range.start <= c.time_range.start <= c.time_range.end <= e.time_range.end
    top = sum(e.cpu_time_total for e in evs if e.cpu_parent is None)
    assert prof.self_cpu_time_total == pytest.approx(top, rel=1e-6)
    node = next(e for e in evs if e.name == "autograd::engine::evaluate_function: ReluBackward0")
    assert [c.name for c in node.cpu_children] == ["ReluBackward0"]
    total = prof.total_average()
    assert total.key == "Total" and total.count == len(evs)


def test_record_function_ranges_context_and_decorator():
    x = st.randn(3, 3)

    @profiler.record_function("decorated")
    def f(t):
        return t * 2

    with profiler.profile() as prof:
        with profiler.record_function("block") as rf:
            y = x + 1
            f(y)
        f(x)
    assert rf.name == "block"
    evs = prof.function_events
    block = [e for e in evs if e.name == "block"]
    assert len(block) == 1 and block[0].is_user_annotation
    inner = [c.name for c in block[0].cpu_children]
    assert inner == ["aten::add", "decorated"]
    c = _counts(prof)
    assert c["decorated"] == 2 and c["aten::mul"] == 2
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    assert "block" in table and "decorated" in table
    with profiler.record_function("nobody listens"):  # no profiler: a no-op
        x * 2


def test_record_shapes_and_group_by_input_shape():
    a, b = st.randn(5, 4), st.randn(4, 3)
    with profiler.profile(record_shapes=True) as prof:
        st.mm(a, b)
        st.mm(b.t(), a.t())
    mm = [e for e in prof.function_events if e.name == "aten::mm"]
    assert [e.input_shapes for e in mm] == [[[5, 4], [4, 3]], [[3, 4], [4, 5]]]
    grouped = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::mm"]
    assert sorted(str(e.input_shapes) for e in grouped) == ["[[3, 4], [4, 5]]",
                                                           "[[5, 4], [4, 3]]"]
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()
    plain = [e for e in prof.key_averages() if e.key == "aten::mm"]
    assert len(plain) == 1 and plain[0].count == 2 and plain[0].input_shapes == ""
    with profiler.profile() as prof:
        st.mm(a, b)
    assert all(e.input_shapes == [] for e in prof.function_events)


def test_table_layout_and_row_limit():
    m = _model()
    with profiler.profile() as prof:
        m(st.randn(2, 4)).sum().backward()
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=3)
    lines = table.strip().split("\n")
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%",
                                "CPU", "total", "CPU", "time", "avg", "#", "of", "Calls"]
    rows = lines[3:-2]
    assert len(rows) == 3
    assert lines[-1].startswith("Self CPU time total: ")
    selfs = [e.self_cpu_time_total for e in prof.key_averages()]
    assert max(selfs) > 0
    by_count = prof.key_averages().table(sort_by="count", row_limit=1)
    top = max(prof.key_averages(), key=lambda e: e.count)
    assert by_count.split("\n")[3].split()[-1] == str(top.count)
    assert str(prof.key_averages()) == prof.key_averages().table()


def test_profile_memory_and_stack_columns():
    a, b = st.randn(5, 4), st.randn(4, 3)
    with profiler.profile(profile_memory=True, with_stack=True) as prof:
        st.mm(a, b)
    mm = next(e for e in prof.function_events if e.name == "aten::mm")
    assert mm.cpu_memory_usage == 5 * 3 * 4  # one float32 [5, 3] result
    assert any(os.path.basename(__file__) in s for s in mm.stack)
    table = prof.key_averages(group_by_stack_n=1).table()
    assert "CPU Mem" in table and "Source Location" in table


def test_chrome_trace_is_valid_json(tmp_path):
    m = _model()
    with profiler.profile(record_shapes=True) as prof:
        with profiler.record_function("fwd"):
            y = m(st.randn(2, 4)).sum()
        y.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == len(prof.function_events)
    names = {e["name"] for e in xs}
    assert {"fwd", "aten::mm", "autograd::engine::evaluate_function: SumBackward0"} <= names
    for e in xs:
        assert e["dur"] >= 0 and isinstance(e["ts"], float) and "pid" in e and "tid" in e
    assert next(e for e in xs if e["name"] == "fwd")["cat"] == "user_annotation"


def test_off_means_no_events_and_fast_paths_back():
    x = st.randn(3, requires_grad=True)
    with profiler.profile(enabled=False) as prof:
        (x * 2).sum().backward()
    assert prof is None
    assert profiler.ACTIVE is None
    with profiler.profile() as p:
        pass
    x * 2
    (x * 2).sum().backward()
    assert len(p.function_events) == 0
    assert profiler.ACTIVE is None
    assert len(profiler.profile().key_averages()) == 0  # never started: empty


def test_not_reentrant_nested_and_errors_close_ranges():
    p = profiler.profile()
    with p:
        with pytest.raises(RuntimeError, match="not reentrant"):
            p.__enter__()
    x = st.ones(2)
    with profiler.profile() as outer:
        x + 1
        with profiler.profile() as inner:
            x * 2
    assert _counts(outer) == {"aten::add": 1, "aten::mul": 1}
    assert _counts(inner) == {"aten::mul": 1}
    with profiler.profile() as prof:
        with pytest.raises(RuntimeError):
            with profiler.record_function("bad"):
                st.ones(2, 3) + st.ones(4, 5)
        x - 1
    sub = next(e for e in prof.function_events if e.name == "aten::sub")
    assert sub.cpu_parent is None  # the failed ranges were closed
    rf = profiler.record_function("span")
    with profiler.profile() as first:
        rf.__enter__()  # left open when its profile stops
    with profiler.profile() as second:
        with profiler.record_function("r2"):
            rf.__exit__(None, None, None)  # a range of the earlier session: closes nothing here
            x * 2
    assert [e.name for e in first.function_events] == ["span"]
    assert [(e.name, e.cpu_parent and e.cpu_parent.name) for e in second.function_events] == [
        ("r2", None), ("aten::mul", "r2")]


def test_results_identical_with_profiling_on():
    a = st.randn(4, 4, requires_grad=True)
    b = st.randn(4, 4)

    def f():
        y = ((a * b + 1) @ b).relu().sum()
        y.backward()
        g = a.grad.numpy().copy()
        a.grad = None
        return y.item(), g

    want = f()
    with profiler.profile():
        got = f()
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    assert got[1].dtype == np.float32


def test_sparse_ops_are_profiled():
    s = st.tensor([[1.0, 0], [0, 2.0]]).to_sparse()
    w = st.randn(2, 3, requires_grad=True)
    with profiler.profile() as prof:
        st.sparse.mm(s, w).sum().backward()
    names = {e.key for e in prof.key_averages()}
    assert "aten::_sparse_prod" in names and "aten::sum" in names


def test_use_cuda_warns_and_emit_nvtx_is_a_noop():
    with pytest.warns(FutureWarning, match="use_cuda"):
        p = profiler.profile(use_cuda=True)
    with p:
        st.ones(2) * 2
    assert _counts(p) == {"aten::mul": 1}
    with profiler.emit_nvtx() as nv:
        st.ones(2) * 2
    assert nv is not None and profiler.ACTIVE is None
    with profiler.emit_nvtx(enabled=False) as nv:
        pass
    assert nv is None


# ---- torch.profiler ----

def test_schedule_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.profiler as TP

    for kw in [dict(wait=1, warmup=1, active=2), dict(wait=1, warmup=1, active=2, repeat=2),
               dict(wait=0, warmup=2, active=1, skip_first=3),
               dict(wait=2, warmup=1, active=1, skip_first=1, skip_first_wait=1)]:
        ours, theirs = schedule(**kw), TP.schedule(**kw)
        assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]
    with pytest.warns(UserWarning, match="won't be using warmup"):
        schedule(wait=1, warmup=0, active=1)
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=1, warmup=1, active=0)


def test_profiler_steps_schedule_and_on_trace_ready():
    seen = []

    def ready(p):
        seen.append((p.step_num, _counts(p)))

    x = st.ones(2)
    with tprofile(activities=[ProfilerActivity.CPU],
                  schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                  on_trace_ready=ready) as p:
        for i in range(6):
            x * i
            p.step()
    assert p.step_num == 6
    assert p.current_action is ProfilerAction.NONE
    # steps 0 (wait) and 1 (warmup) are not recorded; 2 and 3 are, saved at the step to 4
    assert seen == [(4, {"ProfilerStep*": 2, "aten::mul": 2})]
    table = p.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    assert "ProfilerStep*" in table and "aten::mul" in table


def test_profiler_without_schedule_records_everything():
    with tprofile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
        st.ones(3) + st.ones(3)
    assert [e.name for e in p.events()] == ["aten::add"]
    assert p.events()[0].input_shapes == [[3], [3]]
    assert _counts(p) == {"aten::add": 1}


def test_tensorboard_trace_handler(tmp_path):
    d = str(tmp_path / "log")
    with tprofile(schedule=schedule(wait=0, warmup=1, active=1),
                  on_trace_ready=tensorboard_trace_handler(d, worker_name="w")) as p:
        for _ in range(4):
            st.ones(2) * 2
            p.step()
    files = sorted(os.listdir(d))
    assert len(files) == 2 and all(f.startswith("w.") and f.endswith(".pt.trace.json")
                                   for f in files)
    for f in files:
        doc = json.load(open(os.path.join(d, f)))
        names = [e["name"] for e in doc["traceEvents"] if e["ph"] == "X"]
        assert "aten::mul" in names and any(n.startswith("ProfilerStep#") for n in names)


def test_torch_profiler_faces():
    assert st.profiler.record_function is profiler.record_function
    assert st.autograd.profiler is profiler
    assert ProfilerActivity.CPU in st.profiler.supported_activities()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with st.profiler.profile(activities=[ProfilerActivity.CPU]) as p:
            with st.profiler.record_function("r"):
                st.ones(1) + 1
    assert _counts(p) == {"r": 1, "aten::add": 1}


def test_ops_of_other_threads_nest_per_thread():
    import threading

    x = st.ones(3)

    def work():
        with profiler.record_function("worker"):
            x * 3

    with profiler.profile() as prof:
        with profiler.record_function("main"):
            t = threading.Thread(target=work)
            t.start()
            t.join()
            x + 1
    evs = {e.name: e for e in prof.function_events}
    assert evs["aten::mul"].cpu_parent is evs["worker"]
    assert evs["worker"].cpu_parent is None  # another thread: not inside "main"
    assert evs["aten::add"].cpu_parent is evs["main"]
    assert evs["worker"].thread != evs["main"].thread


def test_export_stacks(tmp_path):
    with profiler.profile(with_stack=True) as prof:
        st.ones(2) * 2
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    assert any("test_export_stacks" in line for line in lines)


def test_signatures_match_torch():
    torch = pytest.importorskip("torch")
    import inspect

    import torch.autograd.profiler as tap
    import torch.autograd.profiler_util as tpu
    import torch.profiler as tp
    import torch.utils.checkpoint as tc

    import sparsetorch.profiler as sp
    import sparsetorch.utils.checkpoint as sc

    def params(f):
        return [(p.name, p.kind, p.default if p.default is inspect.Parameter.empty
                 or isinstance(p.default, (bool, int, float, str, type(None))) else "<obj>")
                for p in inspect.signature(f).parameters.values()]

    pairs = [
        (profiler.profile.__init__, tap.profile.__init__),
        (profiler.record_function.__init__, tap.record_function.__init__),
        (profiler.emit_nvtx.__init__, tap.emit_nvtx.__init__),
        (profiler.profile.key_averages, tap.profile.key_averages),
        (profiler.profile.table, tap.profile.table),
        (sp.profile.__init__, tp.profile.__init__),
        (sp.schedule, tp.schedule),
        (sp.tensorboard_trace_handler, tp.tensorboard_trace_handler),
        (sp.profile.key_averages, tp.profile.key_averages),
        (sc.checkpoint, tc.checkpoint),
        (sc.checkpoint_sequential, tc.checkpoint_sequential),
        (profiler.EventList.table, tpu.EventList.table),
        (profiler.EventList.key_averages, tpu.EventList.key_averages),
    ]
    for ours, theirs in pairs:
        assert params(ours) == params(theirs), ours.__qualname__
    assert [a.name for a in sp.ProfilerActivity] == list(tp.ProfilerActivity.__members__)
    assert [a.name for a in sp.ProfilerAction] == list(tp.ProfilerAction.__members__)


def test_audit_use_cuda_without_a_gpu_warns_and_profiles_the_cpu_as_torch():
    import warnings
    import sparsetorch
    if sparsetorch.cuda.is_available():
        pytest.skip("checks the no-GPU behaviour")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        p = sparsetorch.autograd.profiler.profile(use_cuda=True)
        q = sparsetorch.autograd.profiler.profile(use_device="cpu")
    msgs = [str(i.message) for i in w]
    assert "CUDA is not available, disabling CUDA profiling" in msgs
    assert "The cpu is not a valid device option." in msgs
    assert p.use_device is None and p.use_cuda is False and q.use_device is None
    with p:
        sparsetorch.ones(2).sum()
    assert any(e.key == "aten::sum" for e in p.key_averages())
