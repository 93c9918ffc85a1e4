"""What the two systems pages share: a problem of seed 002's A10 shown as readouts (the computed answer, with the
source's stated answer in its help), and number formats for those answers."""

from __future__ import annotations

import math

from core.model_spec import CATALOGUE, ModelSpec
from core.systems_presets import PRESETS, PRESETS_BY_KEY, Preset
from views import Readout
from views.state import Field, State
from viz import format as fmt

NONE = "none"
CUSTOM = CATALOGUE["custom"]
# The shape fields a "custom" model reads (suffix of the field's URL name -> ModelSpec attribute).
CUSTOM_SHAPE = {
    "layers": "layers",
    "d": "d_model",
    "heads": "n_heads",
    "kv": "n_kv_heads",
    "ff": "d_ff",
    "vocab": "vocab",
    "tied": "tied",
}


def custom_fields(prefix: str) -> tuple[Field, ...]:
    """The shape fields of the "custom" model on one page (URL names ``<prefix>_layers`` ...), defaulting to
    core's custom shape (Llama-3.2-1B's)."""
    c = CUSTOM
    return (
        Field(f"{prefix}_layers", "Layers L", "int", c.layers, lo=1, hi=512),
        Field(f"{prefix}_d", "Width d_model", "int", c.d_model, lo=64, hi=65_536, help="a multiple of the heads"),
        Field(f"{prefix}_heads", "Query heads N", "int", c.n_heads, lo=1, hi=1024, help="must divide d_model"),
        Field(f"{prefix}_kv", "KV heads K", "int", c.n_kv_heads, lo=1, hi=1024, help="must divide the query heads"),
        Field(f"{prefix}_ff", "FFN width d_ff", "int", c.d_ff, lo=1, hi=262_144, help="SwiGLU: 3 D d_ff weights"),
        Field(f"{prefix}_vocab", "Vocabulary V", "int", c.vocab, lo=1, hi=1_048_576),
        Field(f"{prefix}_tied", "Tied input and output embeddings", "bool", c.tied),
    )


def model_of(state: State, model_field: str, prefix: str) -> tuple[ModelSpec, str | None]:
    """The chosen model; for "custom", core's custom spec with the page's shape fields (ModelSpec.replace), or the
    starting shape and a message when the fields do not make a valid model."""
    name = state[model_field]
    if name != "custom":
        return CATALOGUE[name], None
    shape = {attr: state[f"{prefix}_{suffix}"] for suffix, attr in CUSTOM_SHAPE.items()}
    shape = {k: (v if isinstance(v, bool) else int(v)) for k, v in shape.items()}
    why = None
    if shape["d_model"] % shape["n_heads"]:
        why = f"d_model = {shape['d_model']} is not a multiple of the {shape['n_heads']} query heads"
    elif shape["n_heads"] % shape["n_kv_heads"]:
        why = f"{shape['n_kv_heads']} KV heads do not divide the {shape['n_heads']} query heads"
    else:
        try:
            return CUSTOM.replace(name="custom", source="custom shape", **shape), None
        except ValueError as e:
            why = str(e)
    return CUSTOM, (
        f"The custom shape is not a valid model: {why}. Showing the starting shape (Llama-3.2-1B: "
        f"{CUSTOM.layers} layers, d_model {CUSTOM.d_model}, {CUSTOM.n_heads} heads, {CUSTOM.n_kv_heads} KV "
        f"heads) instead."
    )


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
        stated_text = p.stated_text.get(name) or answer_text(name, stated)
        if name in p.lost:
            help_text = (
                f"{p.title}: the source's number was lost in extraction; its own inputs and rounding give "
                f"{stated_text} ({p.source})."
            )
        elif name in p.derived:
            help_text = f"{p.title}: derived from {p.derived[name]}, {stated_text}; the source does not state it."
        else:
            help_text = f"{p.title}: the source states {stated_text} ({p.source})."
        if name in p.about:
            help_text += f" {p.about[name][0].upper()}{p.about[name][1:]}."
        if name in p.why:
            help_text += f" Core differs: {p.why[name]}."
        if p.note:
            help_text += f" Note: {p.note}."
        out.append(Readout(f"{key} · {name.replace('_', ' ')}", answer_text(name, got[name]), help_text))
    return out
