"""Shared timing helpers for the benchmark scripts (they print numbers; they are not tests)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def median_ms(fn: Callable[[], Any], repeats: int = 7, warmup: int = 1) -> float:
    """Median wall-clock time of ``fn()`` in milliseconds, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def row(name: str, value: str) -> None:
    print(f"| {name} | {value} |")
