"""torch.autograd.detect_anomaly / set_detect_anomaly: flags, warnings and the NaN check of
backward results, as torch 2.13."""

import warnings

import pytest

import sparsetorch as st

torch = pytest.importorskip("torch")


def _nan_grad_error(lib, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autograd.detect_anomaly():
            x = lib.tensor([0.0, 1.0], requires_grad=True)
            with pytest.raises(RuntimeError) as e:
                make(lib, x).backward()
    return str(e.value)


@pytest.mark.parametrize("make", [
    lambda L, x: (x / x).sum(),
    lambda L, x: (x * float("nan")).sum(),
    lambda L, x: L.sqrt(x - 1).sum(),
])
def test_nan_in_backward_raises_torchs_error(make):
    assert _nan_grad_error(st, make) == _nan_grad_error(torch, make)


def test_flags_context_managers_and_warning():
    for lib in (st, torch):
        assert lib.is_anomaly_enabled() is False and lib.is_anomaly_check_nan_enabled() is True
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            cm = lib.autograd.detect_anomaly(check_nan=False)
        with cm:
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            x = lib.tensor([0.0], requires_grad=True)
            (x / x).sum().backward()  # no NaN check
            assert x.grad.isnan().all()
        assert lib.is_anomaly_enabled() is False and lib.is_anomaly_check_nan_enabled() is True
        lib.autograd.set_detect_anomaly(True)  # a call sets it now
        assert lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(False)
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        assert lib.is_anomaly_enabled() is False and lib.is_anomaly_check_nan_enabled() is True


def test_grad_and_finite_infinities_pass():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with st.autograd.detect_anomaly():
            x = st.tensor([1.0], requires_grad=True)
            st.sqrt(x - 1).sum().backward()  # inf, not NaN: allowed
            assert x.grad.tolist() == [float("inf")]
            with pytest.raises(RuntimeError, match="MulBackward0' returned nan values in its 0th"):
                st.autograd.grad((x * float("nan")).sum(), x)
