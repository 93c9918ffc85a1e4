"""What the two systems pages share: a problem of seed 002's A10 shown as readouts (the computed answer, with the
source's stated answer in its help), and number formats for those answers."""

from __future__ import annotations

import math

from core.systems_presets import PRESETS, PRESETS_BY_KEY, Preset
from pages.views import Readout
from viz import format as fmt

NONE = "none"


def problem_keys(page: str) -> tuple[str, ...]:
    """The problems a page shows ("memory" or "serving"), in the source's order."""
    return tuple(p.key for p in PRESETS if p.page == page)


def preset_name(p: Preset) -> str:
    return f"{p.key}: {p.title}"


def answer_text(name: str, value: float) -> str:
    """An answer with the unit its name carries (``..._GiB``, ``..._KiB``, ``..._GB``, ``..._ms...``)."""
    if not math.isfinite(value):
        return "—"
    low = name.lower()
    for unit in ("gib", "kib", "tib", "gb", "tb"):
        if low.endswith("_" + unit) or f"_{unit}_" in low:
            label = {"gib": "GiB", "kib": "KiB", "tib": "TiB", "gb": "GB", "tb": "TB"}[unit]
            return f"{value:,.4g} {label}"
    if "_ms_" in low or low.endswith("_ms"):
        return f"{value:,.3g} ms"
    if "dollars" in low:
        return f"${value / 1e6:,.2f}M" if value >= 1e6 else f"${value:,.0f}"
    if any(w in low for w in ("share", "saving_vs", "bubble", "mfu")) and "tokens" not in low and abs(value) < 1:
        return f"{100 * value:.3g}%"
    if 1e4 <= abs(value) < 1e6:
        return f"{value:,.0f}"
    if abs(value) >= 1e6:
        return fmt.sci(value, 4) if abs(value) >= 1e13 else fmt.count(value, 4)
    return f"{value:,.4g}"


def problem_readouts(key: str) -> list[Readout]:
    """One readout per answer of problem ``key``: core's value, the stated answer and the source in its help."""
    if key == NONE:
        return []
    p = PRESETS_BY_KEY[key]
    got = p.compute()
    out = []
    for name, (stated, _tol) in p.expected.items():
        help_text = f"{p.title}: the source states {answer_text(name, stated)} ({p.source})."
        if p.note:
            help_text += f" Note: {p.note}."
        out.append(Readout(f"{key} · {name.replace('_', ' ')}", answer_text(name, got[name]), help_text))
    return out
