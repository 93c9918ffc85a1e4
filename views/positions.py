"""The positions page's state and what it shows: RoPE's wavelengths against the trained context and what a
long-context scaling method does to them (main, with a drag over the factor s), the score of one q and one k at
shifted positions, and RoFormer's decay bound beside the mean score (one tab each, built only when open)."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import rope
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz.positions import decay_figure, relative_figure, wavelength_figure
from viz.predict import predict_figure, with_guess

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "How does RoPE encode position, and what do you change to run a RoPE model past its trained context?"
# the answer's key phrases: with answers hidden (hide=true) no text outside the figures and the readouts' values
# quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "depends only on m − n",
    "less than one full turn",
    "keep the short wavelengths",
)

QUICK_CHECK = QuickCheck(
    question=(
        "Llama 3 uses RoPE with base **500,000** and d = 128 per head, and is pre-trained on 8,192-token sequences. "
        "Before any long-context scaling, how long is its longest wavelength, and how many of its 64 pairs turn less "
        "than once in 8,192 tokens?"
    ),
    options=(
        "About 2.56 million tokens; 29 of the 64 pairs",
        "About 3.14 million tokens; 29 of the 64 pairs",
        "About 2.56 million tokens; 35 of the 64 pairs",
        "About 0.41 million tokens; 35 of the 64 pairs",
    ),
    right=0,
    answer=(
        "2π·500,000^(126/128) ≈ **2.56 million tokens**. A pair's wavelength 2π·500,000^(2i/128) exceeds 8,192 from "
        "i = 35 up: **29 of the 64 pairs**, against 14 at base 10,000. Llama 3.1's scaling multiplies exactly these "
        "29 pairs' wavelengths by 8 (longest ≈ 20.5 million tokens) and blends those between 2,048 and 8,192. Load "
        "the preset *Llama 3's base 500,000*."
    ),
)

VIEWS = ("Wavelengths", "Relative position", "Decay")
WAVES, RELATIVE, DECAY = VIEWS
METHODS = ("none", "linear", "ntk", "dynamic", "yarn", "llama3")
METHOD_LABELS = {
    "none": "none: plain RoPE",
    "linear": "linear: position interpolation, θ/s",
    "ntk": "NTK-aware: base × s^(d/(d−2))",
    "dynamic": "dynamic NTK: NTK-aware with s from the current length",
    "yarn": "YaRN: by wavelength, with an attention factor",
    "llama3": "Llama 3.1: by wavelength (factors 1 and 4)",
}
SHORT = {
    "none": "plain",
    "linear": "position interpolation",
    "ntk": "NTK-aware",
    "dynamic": "dynamic NTK",
    "yarn": "YaRN",
    "llama3": "Llama 3.1 scaling",
}
# the drag over s: these steps, with the page's own s merged in
S_STEPS: tuple[float, ...] = (1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0)
REL_TOKENS = 24  # positions in each heatmap of the Relative position tab
REL_SEED = 0  # the seed of its one q and one k

SPEC = Spec(
    "Positions",
    (
        Field("pos_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field("rope_d", "Head dimension d", "int", 128, lo=4, hi=512, step=2, help="even: RoPE turns pairs"),
        Field("rope_base", "Base", "float", 10_000.0, lo=10.0, hi=1e8, step=1000.0, fmt="%g"),
        Field("rope_ctx", "Trained context L (tokens)", "int", 8192, lo=16, hi=1_048_576, step=1024),
        Field(
            "rope_method",
            "Long-context scaling",
            "choice",
            "yarn",
            choices=METHODS,
            widget="radio",
            extra=(("captions", [METHOD_LABELS[m] for m in METHODS]),),
        ),
        Field(
            "rope_s",
            "Scaling factor s",
            "float",
            4.0,
            lo=1.0,
            hi=64.0,
            step=0.5,
            fmt="%g",
            help="the factor the frequencies are divided by: often, not always, the new context over the trained "
            "one (Llama 3.1: 8, for 16 times its 8,192 tokens). The row under the figure drags s in the browser.",
        ),
        Field(
            "rope_len",
            "Current length T (dynamic NTK only)",
            "int",
            32_768,
            lo=1,
            hi=8_388_608,
            step=1024,
            help="dynamic NTK recomputes its base from the length so far; at T <= L it is plain RoPE",
        ),
        Field("rope_shift", "Shift both positions by", "int", 1000, lo=0, hi=1_000_000, step=100),
        ask.switch("predict_pos"),
        ask.guess("guess_pairs", "Your guess: pairs with a wavelength longer than L", "int", 0, 256),
    ),
    presets={
        "Plain RoPE: d = 128, base 10,000, 8k context": {
            "rope_method": "none",
            "rope_d": 128,
            "rope_base": 10_000.0,
            "rope_ctx": 8192,
            "pos_view": WAVES,
        },
        "Llama 3's base 500,000": {"rope_method": "none", "rope_base": 500_000.0, "rope_ctx": 8192, "pos_view": WAVES},
        "Position interpolation, s = 4": {"rope_method": "linear", "rope_s": 4.0, "pos_view": WAVES},
        "NTK-aware, s = 4": {"rope_method": "ntk", "rope_s": 4.0, "pos_view": WAVES},
        "A8.10: 8k to 128k with YaRN (s = 16)": {
            "rope_method": "yarn",
            "rope_s": 16.0,
            "rope_ctx": 8192,
            "rope_base": 10_000.0,
            "pos_view": WAVES,
        },
        "Llama 3.1: factor 8 on base 500,000": {
            "rope_method": "llama3",
            "rope_s": 8.0,
            "rope_ctx": 8192,
            "rope_base": 500_000.0,
            "pos_view": WAVES,
        },
        "Only m − n matters: shift by 100,000": {"rope_shift": 100_000, "pos_view": RELATIVE},
        "RoFormer's decay bound": {"rope_method": "none", "pos_view": DECAY},
    },
)


# ---------------------------------------------------------------------------------------------------------------
# the inputs, made valid
# ---------------------------------------------------------------------------------------------------------------


def head_dim(state: State) -> tuple[int, list[str]]:
    """The head dimension as an even number (RoPE turns pairs), and a note when the link's was odd."""
    d = int(state.rope_d)
    if d % 2:
        return d + 1, [f"RoPE turns pairs of dimensions, so d must be even: using d = {d + 1} instead of {d}."]
    return d, []


def scaling_of(method: str, s: float, L: int) -> dict | None:
    """The ``rope_scaling`` dict of a method at factor s and trained context L, in Hugging Face's keys ("ntk", static
    NTK-aware, is core.rope's own: Hugging Face has only the dynamic form); None: plain RoPE."""
    if method == "none":
        return None
    return {"type": method, "factor": float(s), "original_max_position_embeddings": int(L)}


@functools.lru_cache(maxsize=64)
def _freqs(d: int, base: float, method: str, s: float, L: int, T: int) -> tuple[np.ndarray, float]:
    """The d/2 frequencies and the attention factor (read-only arrays: shared through the cache)."""
    f, scale = rope.rope_inv_freq(d, base, scaling_of(method, s, L), seq_len=T if method == "dynamic" else None)
    f.setflags(write=False)
    return f, scale


def dynamic_factor(s: float, T: int, L: int) -> float:
    """Dynamic NTK's factor at length T: s·T/L − (s − 1) past the trained context, 1 (plain RoPE) up to it."""
    return s * T / L - (s - 1.0) if T > L else 1.0


def counts(original: np.ndarray, scaled: np.ndarray, s: float) -> tuple[int, int, int]:
    """How many pairs a method keeps (θ' = θ), slows by the whole factor s (θ' = θ/s), and changes by less."""
    ratio = scaled / original  # λ'/λ = θ/θ'
    kept = int(np.sum(np.isclose(ratio, 1.0, rtol=1e-9, atol=0)))
    full = int(np.sum(np.isclose(ratio, s, rtol=1e-9, atol=0))) if s != 1 else 0
    return kept, full, int(ratio.size) - kept - full


def _panel(method: str, s: float, L: int, T: int, kept: int, full: int, between: int, factor: float) -> str:
    """The wavelength figure's readout panel at one s: short lines, for the column right of the plot."""
    lines = [f"<b>{SHORT[method]}</b>", f"s = {s:g}: s·L = {s * L:,.0f} tokens"]
    if method == "dynamic":
        effective = dynamic_factor(s, T, L)
        lines.append(f"at T = {T:,}: s' = {effective:.4g}" + (" (plain)" if T <= L else ""))
    by = "s'" if method == "dynamic" else "s"
    lines += [f"pairs kept: {kept}", f"slowed by {by}: {full}", f"between: {between}"]
    if method == "yarn":
        lines += [f"attention factor {factor:.4f}", f"(logits × {factor**2:.4f})"]
    return "<br>".join(lines)


def drag_steps(s: float) -> tuple[float, ...]:
    """The drag's values of s: :data:`S_STEPS` with the page's own s among them, in order."""
    return tuple(sorted({*S_STEPS, float(s)}))


# ---------------------------------------------------------------------------------------------------------------
# the figures (cached: plain hashable arguments)
# ---------------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=32)
def _wave_figure(d: int, base: float, L: int, method: str, s: float, T: int, theme: str, presenter: bool) -> go.Figure:
    original = rope.rope_wavelengths(_freqs(d, base, "none", 1.0, L, T)[0])
    if method == "none":
        return wavelength_figure(original, L, theme=theme, presenter=presenter)
    values = drag_steps(s)
    scaled, new_context, panels = [], [], []
    for v in values:
        f, factor = _freqs(d, base, method, v, L, T)
        lam = rope.rope_wavelengths(f)
        scaled.append(lam)
        new_context.append(v * L)
        full_by = dynamic_factor(v, T, L) if method == "dynamic" else v
        panels.append(_panel(method, v, L, T, *counts(original, lam, full_by), factor))
    sc = np.vstack(scaled)  # (S, d/2)
    high = max(float(sc.max()), float(max(new_context)), float(original.max())) * 1.5
    return wavelength_figure(
        original, L, scaled=sc, new_context=new_context, panels=panels, s_values=values,
        active=values.index(float(s)), method_label=f"{SHORT[method]} λ'", y_high=high, theme=theme,
        presenter=presenter,
    )  # fmt: skip


def rel_vectors(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The Relative position tab's one query vector and one key vector (d,), seeded, unit-variance components."""
    rng = np.random.default_rng(REL_SEED)
    return rng.standard_normal(d), rng.standard_normal(d)


@functools.lru_cache(maxsize=16)
def _relative(d: int, base: float, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """S_mn for the tab's q and k at positions 0..T−1 and at the same positions moved by ``shift``."""
    q, k = rel_vectors(d)
    f = _freqs(d, base, "none", 1.0, 16, 1)[0]
    pos = np.arange(REL_TOKENS, dtype=np.float64)
    Q, K = np.tile(q, (REL_TOKENS, 1)), np.tile(k, (REL_TOKENS, 1))  # (T, d): the same vector at every position
    a = rope.rope_scores(Q, K, f, pos, pos)
    b = rope.rope_scores(Q, K, f, pos + shift, pos + shift)
    return a, b


def decay_distances(L: int) -> np.ndarray:
    """The Decay tab's distances: every whole number up to 64, then about 400 log-spaced ones up to 4·L."""
    top = max(4 * L, 128)
    return np.unique(np.concatenate([np.arange(1, 65), np.round(np.geomspace(64, top, 400)), [L]])).astype(np.float64)


@functools.lru_cache(maxsize=16)
def _decay(d: int, base: float, L: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = decay_distances(L)
    half = d // 2
    bound = rope.relative_upper_bound(x, d, base) / ((half + 1) / 2)  # its value at 0 is (d/2 + 1)/2
    same = rope.expected_rotated_score(x, d, base, correlation=1.0) / d  # q = k: E|q|² = d at distance 0
    return x, bound, same


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (``Wavelengths``, ``Relative position``, ``Decay``; ``main``
    is the open tab's, also returned as ``figures["main"]``; the drag over s is the Wavelengths figure's), each tab's
    readouts, the notes on the input, and the table behind the main figure.

    Facts the page's texts quote: ``d``, ``pairs``, ``beyond`` (pairs with λ > L), ``longest``, ``kept``, ``full``,
    ``between``, ``factor`` (the attention factor), ``predict``; per tab ``max_change`` (Relative position) and
    ``bound_at_L``, ``same_at_L``, ``same_min`` (Decay). Bad input gives a note, never an exception.
    """
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.pos_view)
    view = View()
    d, notes = head_dim(state)
    for note in notes:
        view.notices.append(("info", note))
    base, L, method, s = float(state.rope_base), int(state.rope_ctx), state.rope_method, float(state.rope_s)
    T = int(state.rope_len)
    look = (options.theme, options.presenter)
    P = d // 2
    plain = _freqs(d, base, "none", 1.0, L, T)[0]
    original = rope.rope_wavelengths(plain)
    beyond = int(rope.wavelengths_beyond_context(plain, L).sum())
    f, factor = _freqs(d, base, method, s, L, T)
    scaled = rope.rope_wavelengths(f)
    full_by = dynamic_factor(s, T, L) if method == "dynamic" else s
    kept, full, between = counts(original, scaled, full_by) if method != "none" else (P, 0, 0)
    view.facts.update(
        d=d, pairs=P, beyond=beyond, longest=float(original[-1]), kept=kept, full=full, between=between, factor=factor
    )

    predicting = ask.mode(state, "predict_pos", "guess_pairs")
    view.facts["predict"] = predicting
    question = (
        f"Of the {P} pairs (d = {d}, base {base:,.0f}), how many have a wavelength longer than the trained context "
        f"of {L:,} tokens?"
    )
    if WAVES in parts:
        if predicting == "hidden":
            context = {"type": "scatter", "x": [-0.5, P - 0.5], "y": [L, L], "mode": "lines",
                       "name": f"trained context L = {L:,}", "line": {"dash": "dash"}}  # fmt: skip
            view.figures[WAVES] = predict_figure(
                question, x_title="pair i (dimensions 2i, 2i+1)", y_title="wavelength λ (tokens)",
                x_range=(-0.5, P - 0.5), traces=[context], **options.look,
            )  # fmt: skip
        else:
            view.figures[WAVES] = _wave_figure(d, base, L, method, s, T, *look)
            if method != "none":
                view.drags[WAVES] = Drag("rope_s", drag_steps(s))
    readouts = [
        Readout(
            "Pairs with λ > L",
            f"{beyond} of {P}",
            f"plain wavelengths longer than L = {L:,} tokens: these turn less than once over the trained context",
        ),
        Readout(
            "Wavelengths",
            f"{original[0]:.3g} to {original[-1]:,.0f}",
            "in tokens: 2π for pair 0 up to 2π·base^((d−2)/d) for the last pair",
        ),
    ]
    if method == "none":
        readouts.append(Readout("Scaling", "none", "plain RoPE: choose a method to see what it does to the pairs"))
    else:
        readouts += [
            Readout(
                f"Pairs kept / slowed by s / between ({SHORT[method]})",
                f"{kept} / {full} / {between}",
                f"θ' = θ, θ' = θ/s, or in between, at s = {s:g}"
                + (f" (dynamic NTK: by its s' = {full_by:.4g} at T = {T:,})" if method == "dynamic" else ""),
            ),
            Readout(
                "s·L",
                f"{s * L:,.0f} tokens",
                f"s = {s:g} times the trained context L = {L:,}"
                + (" (Llama 3.1's configuration allows 131,072 tokens: 16 × 8,192)" if method == "llama3" else ""),
            ),
        ]
        if method == "yarn":
            readouts.append(
                Readout(
                    "YaRN attention factor",
                    f"{factor:.4f}",
                    f"0.1·ln s + 1 at s = {s:g}; it multiplies cos and sin (Hugging Face), so the logits are "
                    f"multiplied by its square, {factor**2:.4f}",
                )
            )
        if method == "dynamic":
            eff = dynamic_factor(s, T, L)
            readouts.append(
                Readout(
                    "Dynamic factor s'",
                    f"{eff:.4g}",
                    f"s·T/L − (s − 1) at T = {T:,}" if T > L else f"T = {T:,} ≤ L: plain RoPE",
                )
            )
    view.readouts = readouts

    if RELATIVE in parts:
        shift = int(state.rope_shift)
        a, b = _relative(d, base, shift)
        change = float(np.max(np.abs(a - b)))
        view.figures[RELATIVE] = relative_figure(a, b, 0, shift, **options.look)
        view.facts["max_change"] = change
        view.readouts += [
            Readout("Largest change after the shift", f"{change:.1e}", "max |S_mn(shifted) − S_mn|: round-off only"),
            Readout("Score at m = n", f"{a[0, 0]:.3f}", "q·k of the tab's seeded q and k: no rotation between them"),
        ]
    if DECAY in parts:
        x, bound, same = _decay(d, base, L)
        view.figures[DECAY] = decay_figure(x, bound, same, L, **options.look)
        at_L = int(np.argmin(np.abs(x - L)))
        view.facts.update(bound_at_L=float(bound[at_L]), same_at_L=float(same[at_L]), same_min=float(same.min()))
        view.readouts += [
            Readout(
                f"Bound at m − n = {x[at_L]:,.0f}",
                f"{bound[at_L]:.3f}",
                "RoFormer's relative upper bound, as a share of its value at distance 0",
            ),
            Readout(
                "Lowest mean score, q = k",
                f"{same.min():.3f} × d".replace("-", "−"),
                "over the distances drawn: it dips below 0 and oscillates, it does not decay smoothly",
            ),
        ]

    view.tables["Wavelengths"] = lambda: pd.DataFrame(
        {
            "pair": np.arange(P),
            "theta": plain,
            "wavelength_tokens": original,
            "rotations_in_L": rope.rotations_in_context(plain, L),
            "scaled_theta": f,
            "scaled_wavelength_tokens": scaled,
            "method": method,
            "s": s,
        }
    )
    if predicting == "hidden":
        ask.hide(view, question, ("Pairs with λ > L", "Wavelengths"), tables=("Wavelengths",))
    elif predicting == "revealed":
        g = int(state.guess_pairs)
        if WAVES in view.figures:
            view.figures[WAVES] = with_guess(
                view.figures[WAVES], P - g - 0.5, f"your guess: {g} pairs", axis="x", theme=options.theme
            )
        ask.reveal(
            view,
            Readout("Pairs with λ > L (the answer)", f"{beyond}", f"pairs {P - beyond} to {P - 1}" if beyond else ""),
            f"{g}",
            f"{g - beyond:+d}".replace("-", "−"),
            "your guess minus the answer",
            value=beyond,
        )
    if "main" in parts:
        view.show_as_main(state.pos_view)
    return with_answers(SPEC, state, view)
