"""The one place that chooses the torch device for core's tensor work.

Order: the ``LESSON_DEVICE`` environment variable when set (``cpu``, ``cuda``, ``cuda:1``, ``mps``), else CUDA,
else Apple MPS, else the CPU. Functions in core never pick a device themselves: they create tensors with
:func:`as_tensor` (which uses :func:`get_device`) or follow the device of the tensors they are given.

torch is imported lazily, so that pages which need no tensors (and the home page) start fast.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

ENV_VAR = "LESSON_DEVICE"
_VALID_PREFIXES = ("cpu", "cuda", "mps")


class DeviceError(RuntimeError):
    """The device asked for in ``LESSON_DEVICE`` is unknown or not available here."""


@functools.cache
def get_device() -> torch.device:
    """The torch device core computes on (chosen once per process)."""
    import torch

    override = os.environ.get(ENV_VAR, "").strip().lower()
    if override:
        if not override.startswith(_VALID_PREFIXES):
            raise DeviceError(f"{ENV_VAR}={override!r}: expected one of cpu, cuda, cuda:N, mps")
        if override.startswith("cuda") and not torch.cuda.is_available():
            raise DeviceError(f"{ENV_VAR}={override!r} but torch sees no CUDA device")
        if override == "mps" and not torch.backends.mps.is_available():
            raise DeviceError(f"{ENV_VAR}={override!r} but torch sees no MPS device")
        return torch.device(override)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def default_dtype(device: torch.device | None = None) -> torch.dtype:
    """float64 where the device supports it (CPU, CUDA); float32 on MPS, which has no float64."""
    import torch

    device = device or get_device()
    return torch.float32 if device.type == "mps" else torch.float64


def as_tensor(x: Any, dtype: torch.dtype | None = None, device: torch.device | None = None) -> torch.Tensor:
    """``x`` (array, list, number or tensor) as a tensor on core's device, or on ``device`` when given."""
    import torch

    device = device or (x.device if isinstance(x, torch.Tensor) else get_device())
    return torch.as_tensor(x, dtype=dtype or default_dtype(device), device=device)


def loaded_module(name: str) -> Any:
    """The module ``name`` if its import has finished, else None; never imports it.

    A module another thread is still importing counts as not imported: ``sys.modules`` holds it from the start of
    its import, before its names exist (a classroom's sessions hit that with torch, then with pandas). No value of a
    type it defines can exist before its import has finished, so "not imported" is the right answer for a caller
    checking whether an argument is one of its types.
    """
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        return None
    return module


def loaded_torch() -> Any:
    """torch if it is already imported (:func:`loaded_module`), else None: numpy callers never pay its 2 s import."""
    return loaded_module("torch")


def device_summary() -> str:
    """A one-line description of where core computes, for the pages.

    If torch is already imported this is the real answer. Otherwise it is worked out without importing torch
    (which costs seconds), from the environment variable, the installed torch build and the presence of an
    NVIDIA driver; the text then says that it is the expected device.
    """
    if "torch" in sys.modules:
        import torch

        try:
            device = get_device()
        except DeviceError as err:
            return f"device error: {err}"
        if device.type == "cuda":
            return f"CUDA GPU ({torch.cuda.get_device_name(device)}), torch {torch.__version__}"
        if device.type == "mps":
            return f"Apple MPS, torch {torch.__version__}"
        return f"CPU ({torch.get_num_threads()} threads), torch {torch.__version__}"
    override = os.environ.get(ENV_VAR, "").strip().lower()
    if override:
        return f"{override} (set by {ENV_VAR})"
    version = _installed_torch()
    if version is None:
        return "torch is not installed"
    has_driver = Path("/proc/driver/nvidia/version").exists()
    if "+cpu" not in version and has_driver:
        return f"CUDA GPU expected (NVIDIA driver found), torch {version}"
    if sys.platform == "darwin":
        return f"Apple MPS or CPU expected, torch {version}"
    return f"CPU expected (no GPU found), torch {version}"


@functools.cache
def _installed_torch() -> str | None:
    """The installed torch's version, read once from its metadata (a search of sys.path: ~20 ms), or None."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
