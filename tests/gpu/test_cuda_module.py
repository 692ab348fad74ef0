"""sparsetorch.cuda with a device present (a GPU, or the fake backend): queries, the current
device and its context manager, synchronisation, seeding, memory statistics."""

import pytest

import sparsetorch as st

from ._util import CUDA_MARKS, FAKE, requires_two

pytestmark = CUDA_MARKS


def test_queries(device):
    assert st.cuda.is_available() and st.cuda.device_count() >= 1
    assert st.cuda.current_device() == 0
    name = st.cuda.get_device_name()
    assert isinstance(name, str) and name
    assert st.cuda.get_device_name(0) == st.cuda.get_device_name("cuda:0") == name
    major, minor = st.cuda.get_device_capability()
    assert isinstance(major, int) and isinstance(minor, int)
    st.ones(1, device="cuda")
    assert st.cuda.is_initialized()


def test_invalid_device_index(device):
    n = st.cuda.device_count()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        st.cuda.set_device(n)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        st.zeros(1, device=f"cuda:{n}")
    with pytest.raises(RuntimeError, match="invalid device ordinal"), st.cuda.device(n):
        pass


def test_device_context_restores(device):
    with st.cuda.device(0):
        assert st.cuda.current_device() == 0
    with st.cuda.device("cuda:0"), st.cuda.device(None):
        assert st.cuda.current_device() == 0
    st.cuda.set_device(-1)  # a no-op, as torch
    assert st.cuda.current_device() == 0


@requires_two
def test_set_device_moves_the_default():
    try:
        st.cuda.set_device(1)
        assert st.cuda.current_device() == 1
        assert st.ones(2, device="cuda").device == st.device("cuda:1")
        assert st.ones(2).cuda().device == st.device("cuda:1")
        with st.cuda.device(0):
            assert st.ones(2, device="cuda").get_device() == 0
        assert st.cuda.current_device() == 1
    finally:
        st.cuda.set_device(0)


def test_synchronize(device):
    x = st.randn(64, 64, device="cuda")
    y = x @ x
    st.cuda.synchronize()
    st.cuda.synchronize(0)
    st.cuda.synchronize(device)
    assert y.device == device


def test_manual_seed_makes_cuda_draws_reproducible(device):
    st.cuda.manual_seed(123)
    a = st.rand(5, device="cuda")
    st.cuda.manual_seed_all(123)
    b = st.rand(5, device="cuda")
    assert st.equal(a, b)


def test_memory_statistics(device):
    st.cuda.empty_cache()
    st.cuda.reset_peak_memory_stats()
    before = st.cuda.memory_allocated()
    x = st.empty(1 << 20, device="cuda")  # 4 MiB
    used = st.cuda.memory_allocated()
    if FAKE:  # NumPy allocations are not tracked: the figures stay 0
        assert before == used == st.cuda.max_memory_allocated() == 0
    else:
        assert used - before >= 4 << 20
        assert st.cuda.max_memory_allocated() >= used
        assert st.cuda.memory_reserved() >= used
    del x
    st.cuda.empty_cache()
    assert st.cuda.memory_allocated() <= used
