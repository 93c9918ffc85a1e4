"""core.device: one place picks the device; the override is honoured and checked."""

import importlib

import pytest
import torch

from core import device


@pytest.fixture(autouse=True)
def _fresh_cache():
    device.get_device.cache_clear()
    yield
    device.get_device.cache_clear()


def test_cpu_override(monkeypatch):
    monkeypatch.setenv(device.ENV_VAR, "cpu")
    assert device.get_device() == torch.device("cpu")
    t = device.as_tensor([1, 2, 3])
    assert t.device.type == "cpu" and t.dtype == torch.float64


def test_unknown_override_is_refused(monkeypatch):
    monkeypatch.setenv(device.ENV_VAR, "tpu")
    with pytest.raises(device.DeviceError, match="expected one of"):
        device.get_device()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_override_without_cuda_is_refused(monkeypatch):
    monkeypatch.setenv(device.ENV_VAR, "cuda")
    with pytest.raises(device.DeviceError, match="no CUDA"):
        device.get_device()


def test_default_follows_hardware(monkeypatch):
    monkeypatch.delenv(device.ENV_VAR, raising=False)
    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert device.get_device().type == expected


def test_as_tensor_follows_input_device(monkeypatch):
    monkeypatch.setenv(device.ENV_VAR, "cpu")
    x = torch.zeros(2, dtype=torch.float32)
    assert device.as_tensor(x).device == x.device


def test_summary_mentions_torch_version():
    importlib.reload(device)
    assert torch.__version__.split("+")[0] in device.device_summary()


def test_a_torch_still_importing_in_another_thread_counts_as_not_loaded(monkeypatch):
    # bench/bench_load.py and the twenty-session test caught it: one session's first `import torch` was still
    # running when another session's numpy call looked torch up in sys.modules and read torch.Tensor.
    import importlib.machinery
    import sys
    import types

    import numpy as np

    from core import grpo, ppo

    half = types.ModuleType("torch")  # what sys.modules holds mid-import: no Tensor yet
    half.__spec__ = importlib.machinery.ModuleSpec("torch", None)
    half.__spec__._initializing = True
    monkeypatch.setitem(sys.modules, "torch", half)
    assert device.loaded_torch() is None
    adv = grpo.grpo_advantages(np.array([1.0, 0.0, 0.0, 1.0]))
    np.testing.assert_allclose(adv, [1.0, -1.0, -1.0, 1.0])  # (r - 0.5) / 0.5, population std
    k = ppo.kl_estimators(np.array([-1.0]), np.array([-1.5]))
    assert float(k.k1[0]) == pytest.approx(0.5)  # k1 = -log r = log pi_theta - log pi_ref
    half.__spec__._initializing = False  # once the import is done, it is torch
    assert device.loaded_torch() is half
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert device.loaded_torch() is torch
