"""Human-readable numbers for readouts, hover texts and annotations (no math beyond formatting).

The one place for text formatting: figure modules and pages both use these, so that a figure and the readouts
beside it print a number the same way.
"""

from __future__ import annotations

import math
import textwrap

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


def number(x: float, digits: int = 3) -> str:
    """A readout number: fixed decimals for ordinary sizes, scientific for tiny or huge ones, '∞' when infinite.

    number(0.11067) -> '0.111'; number(-0.1) -> '−0.100' (a real minus sign); number(2.5e-5) -> '2.50e−05'.
    """
    if not math.isfinite(x):
        return "∞" if x > 0 else ("−∞" if x < 0 else "—")
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.{digits}f}".replace("-", "−")
    return f"{x:.{max(digits - 1, 1)}e}".replace("-", "−")


def general(x: float) -> str:
    """Three significant digits, plain or scientific as Python's 'g' picks: 0.0112, 0.5, 1, 178, 1e+03."""
    return f"{x:.3g}"


def share(x: float) -> str:
    """A share as a percentage with enough digits to be non-zero when x is: 0.0012 -> '0.12%', 0.25 -> '25.0%'."""
    if x == 0:
        return "0%"
    p = 100.0 * x
    digits = 1 if p >= 10 else 2 if p >= 0.1 else max(2, 1 - math.floor(math.log10(p)))
    return f"{p:.{digits}f}%"


def percent(x: float) -> str:
    """:func:`share` for readouts; below 1e-10 (rounding noise of an exact result) it says '≈ 0%' instead."""
    return "≈ 0%" if 0 < abs(x) < 1e-10 else share(x)


def spread(se: float, decimals: int = 4) -> str:
    """A standard error with ``decimals`` places, or to two significant digits once it is too small to show."""
    return f"{se:.{decimals}f}" if se == 0 or se >= 10**-decimals else f"{se:.2g}"


def mean_pm(mean: float, se: float, decimals: int = 4) -> str:
    """``mean ± se`` for readouts and titles: the SE to two significant digits once it is too small to show.

    mean_pm(0.8315, 0.00071) -> '0.8315 ± 0.0007';  mean_pm(0.63230, 1.46e-5) -> '0.6323 ± 1.5e-05'
    """
    return f"{mean:.{decimals}f} ± {spread(se, decimals)}"


def fixed(x: float, digits: int = 3) -> str:
    """A number with ``digits`` decimals and a real minus sign: fixed(-0.1234) -> '−0.123', fixed(2, 2) -> '2.00'."""
    return f"{x:.{digits}f}".replace("-", "−")


def signed(a: float) -> str:
    """A signed value such as an advantage: two decimals, or two significant digits below 0.005; '0' for 0."""
    if a == 0:
        return "0"
    return f"{a:+.2f}" if abs(a) >= 0.005 else f"{a:+.1e}"


def plain(r: float) -> str:
    """A value such as a reward: an integer without decimals (1, not 1.0), else four significant digits."""
    return str(int(r)) if float(r).is_integer() else f"{r:.4g}"


def _sig(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, keeping trailing zeros (1.5 -> '1.50')."""
    if x == 0:
        return "0"
    decimals = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    return f"{x:.{decimals}f}"


def wrap(text: str, width: int) -> str:
    """``text`` broken into lines of at most ``width`` characters (longer words stay whole), joined by ``<br>``."""
    return "<br>".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)) or text


_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def binary_bytes(n: float, unit: str | None = None) -> str:
    """A byte count in binary units, e.g. 327680 -> '320 KiB', 42949672960 -> '40 GiB'; unit fixes the unit
    (binary_bytes(2621440, 'KiB') -> '2,560 KiB', the way the lesson quotes per-token sizes)."""
    if not math.isfinite(n) or n < 0:
        raise ValueError(f"a byte count must be finite and >= 0, got {n!r}")
    if unit is not None and unit not in _BINARY_UNITS:
        raise ValueError(f"unit must be one of {', '.join(_BINARY_UNITS)}, got {unit!r}")
    power = 0 if n < 1 else min(int(math.log2(n) // 10), len(_BINARY_UNITS) - 1)
    power = _BINARY_UNITS.index(unit) if unit is not None else power
    value = n / 1024**power
    text = f"{value:,.0f}" if value >= 100 or float(value).is_integer() else f"{value:,.3g}"
    return f"{text} {_BINARY_UNITS[power]}"


_VISIBLE = {" ": "␣", "\n": "⏎", "\r\n": "⏎", "\t": "⇥", "\r": "⏎"}


def token_label(token: str, max_chars: int = 12) -> str:
    """A short, visible label for an axis: whitespace made visible, long tokens cut with an ellipsis."""
    label = _VISIBLE.get(token, token)
    return label if len(label) <= max_chars else label[: max_chars - 1] + "…"


def byte_label(b: int) -> str:
    """A byte as a readable label (a byte-level model's token): ␣ for a space, the character for printable ASCII, an
    escape otherwise (\\n, \\t, \\r, \\x07; bytes 128-255, pieces of UTF-8 characters, as \\xe2)."""
    if b == 32:
        return "␣"
    if 33 <= b <= 126:
        return chr(b)
    return {10: "\\n", 9: "\\t", 13: "\\r"}.get(b, f"\\x{b:02x}")
