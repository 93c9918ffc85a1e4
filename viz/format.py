"""Human-readable numbers for readouts, hover texts and annotations (no math beyond formatting)."""

from __future__ import annotations

import math

_SUFFIXES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))


def count(x: float, digits: int = 3) -> str:
    """A count with a K/M/B/T suffix: 1.5e9 -> '1.50B', 2e10 -> '20.0B'."""
    if not math.isfinite(x):
        return "—"
    for scale, suffix in _SUFFIXES:
        if abs(x) >= scale:
            return f"{_sig(x / scale, digits)}{suffix}"
    return _sig(x, digits)


def sci(x: float, digits: int = 3) -> str:
    """Scientific notation with a real times sign: 2.73e20 -> '2.73×10²⁰'."""
    if not math.isfinite(x):
        return "—"
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    mantissa = x / 10**exponent
    sup = str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{mantissa:.{digits - 1}f}×10{sup}"


def nbytes(x: float) -> str:
    """Bytes in decimal units, as the lesson counts them: 2.4e10 -> '24.0 GB'."""
    if not math.isfinite(x):
        return "—"
    for scale, unit in ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(x) >= scale:
            return f"{_sig(x / scale, 3)} {unit}"
    return f"{x:.0f} B"


def duration(seconds: float) -> str:
    """A wall-clock duration in the largest sensible unit: 86400 -> '24.0 h', 9e5 -> '10.4 days'."""
    if not math.isfinite(seconds):
        return "—"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    if seconds < 2 * 365 * 86400:
        return f"{seconds / 86400:.1f} days"
    return f"{seconds / (365 * 86400):.1f} years"


def _sig(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, keeping trailing zeros (1.5 -> '1.50')."""
    if x == 0:
        return "0"
    decimals = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    return f"{x:.{decimals}f}"
