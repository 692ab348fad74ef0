"""nn.DataParallel and nn.parallel without a CUDA device: the wrapper calls the module, its
state_dict keys carry the ``module.`` prefix, and the multi-device helpers raise torch's
errors for CPU devices and tensors. (The multi-device path: tests/gpu/test_streams_parallel.py.)"""

import numpy as np
import pytest

import sparsetorch as st
from sparsetorch import nn

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(st.cuda.is_available(), reason="a CUDA device is present")


def test_data_parallel_without_a_device_calls_the_module():
    net = nn.Linear(2, 3)
    dp = nn.DataParallel(net)
    tdp = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    assert dp.module is net and dp.device_ids == tdp.device_ids == []
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    assert nn.DataParallel is nn.parallel.DataParallel
    x = st.randn(4, 2)
    np.testing.assert_array_equal(dp(x).detach().numpy(), net(x).detach().numpy())
    dp(x).sum().backward()
    assert net.weight.grad is not None
    assert repr(dp).startswith("DataParallel(\n  (module): Linear")
    fresh = nn.DataParallel(nn.Linear(2, 3))
    fresh.load_state_dict(dp.state_dict())
    np.testing.assert_array_equal(fresh.module.weight.detach().numpy(), net.weight.detach().numpy())


@pytest.mark.parametrize("call", [
    lambda P, x, m: P.scatter(x, ["cpu"]),
    lambda P, x, m: P.gather([x, x], "cpu"),
    lambda P, x, m: P.gather([x, x], -1),
    lambda P, x, m: P.replicate(m, ["cpu"]),
    lambda P, x, m: P.parallel_apply([m], [x]),
    lambda P, x, m: P.parallel_apply([m], [(x,)], devices=["cpu"]),
    lambda P, x, m: P.parallel_apply([m, m], [x]),
    lambda P, x, m: P.data_parallel(m, x),
])
def test_parallel_helpers_on_the_cpu_raise_torchs_errors(call):
    with pytest.raises(Exception) as want:
        call(torch.nn.parallel, torch.ones(4, 2), torch.nn.Linear(2, 2))
    with pytest.raises(want.type) as got:
        call(nn.parallel, st.ones(4, 2), nn.Linear(2, 2))
    assert str(got.value) == str(want.value)


def test_replicate_onto_no_device_is_empty():
    assert nn.parallel.replicate(nn.Linear(2, 2), []) == []
