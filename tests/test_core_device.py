"""core.device: one place picks the device; the override is honoured and checked."""

import importlib

import pytest
import torch

from core import device as dev


@pytest.fixture(autouse=True)
def _fresh_cache():
    dev.get_device.cache_clear()
    yield
    dev.get_device.cache_clear()


def test_cpu_override(monkeypatch):
    monkeypatch.setenv(dev.ENV_VAR, "cpu")
    assert dev.get_device() == torch.device("cpu")
    t = dev.as_tensor([1, 2, 3])
    assert t.device.type == "cpu" and t.dtype == torch.float64


def test_unknown_override_is_refused(monkeypatch):
    monkeypatch.setenv(dev.ENV_VAR, "tpu")
    with pytest.raises(dev.DeviceError, match="expected one of"):
        dev.get_device()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_override_without_cuda_is_refused(monkeypatch):
    monkeypatch.setenv(dev.ENV_VAR, "cuda")
    with pytest.raises(dev.DeviceError, match="no CUDA"):
        dev.get_device()


def test_default_follows_hardware(monkeypatch):
    monkeypatch.delenv(dev.ENV_VAR, raising=False)
    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert dev.get_device().type == expected


def test_as_tensor_follows_input_device(monkeypatch):
    monkeypatch.setenv(dev.ENV_VAR, "cpu")
    x = torch.zeros(2, dtype=torch.float32)
    assert dev.as_tensor(x).device == x.device


def test_summary_mentions_torch_version():
    importlib.reload(dev)
    assert torch.__version__.split("+")[0] in dev.device_summary()
