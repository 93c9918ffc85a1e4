"""Shared timing helpers for the benchmark scripts (they print numbers; they are not tests)."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def sync_device() -> None:
    """Wait for queued CUDA work, so that a timing covers it (a no-op without torch or CUDA)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def median_seconds(fn: Callable[[], Any], repeats: int = 7, warmup: int = 1) -> float:
    """Median wall-clock time of ``fn()`` in seconds over ``repeats`` runs, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    sync_device()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync_device()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median_ms(fn: Callable[[], Any], repeats: int = 7, warmup: int = 1) -> float:
    """:func:`median_seconds` in milliseconds."""
    return 1e3 * median_seconds(fn, repeats, warmup)


def rerun_ms(at: Any, key: str, values: list[Any], widget: str = "number_input") -> float:
    """Median time of an AppTest rerun after setting the widget ``key`` to each of ``values`` in turn.

    The first value is an untimed warm-up; the page must end every rerun without an exception.
    """
    control = getattr(at, widget)
    control(key=key).set_value(values[0])
    at.run()
    times = []
    for value in values[1:]:
        control(key=key).set_value(value)
        start = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - start) * 1e3)
        assert not at.exception, [e.value for e in at.exception]
    return statistics.median(times)


def figure_json_kb(at: Any) -> float:
    """Kilobytes of plotly figure JSON that the AppTest run sent."""
    return sum(len(chart.proto.spec) for chart in at.get("plotly_chart")) / 1000


def row(name: str, value: str) -> None:
    print(f"| {name} | {value} |")
