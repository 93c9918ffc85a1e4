"""plotly's look-ups of optional modules, made safe against a module that another thread is still importing.

plotly asks ``sys.modules`` whether pandas (or numpy, PIL) is loaded, without loading it, each time it validates or
serialises a value (``get_module(name, should_load=False)``). ``sys.modules`` holds a module from the start of its
import, so on a server where one session's page imports pandas while another session builds a figure, plotly can
get a half-initialised pandas and fail on ``pd.Series`` (``AttributeError: partially initialized module``; the
classroom test of tests/server/test_concurrent_sessions.py hit it once pages stopped importing pandas up front).

A module still being imported is answered as not loaded (core.device.loaded_module, which core uses for torch): no
value of a type it defines can exist before its import has finished, so plotly's checks need not look at it.
"""

from __future__ import annotations

import sys
from types import ModuleType

import _plotly_utils.optional_imports as optional_imports

from core.device import loaded_module

_plotly_get_module = optional_imports.get_module


def get_module(name: str, should_load: bool = True) -> ModuleType | None:
    """plotly's ``get_module``, except that a module whose import has not finished counts as not loaded."""
    if not should_load:
        return loaded_module(name)
    return _plotly_get_module(name, should_load)


def guard_plotly_imports() -> None:
    """Put :func:`get_module` in place of plotly's, in its own module (read by plotly modules imported later) and in
    every plotly module already imported that bound the original to its own name."""
    optional_imports.get_module = get_module
    for module in list(sys.modules.values()):
        if getattr(module, "get_module", None) is _plotly_get_module:
            module.get_module = get_module
