"""The tables of tests/test_view_numbers.py for the page of group 'positions': per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and
(outside the defaults) new texts show.

The references are written here from the formulas, in numpy, never from core/rope.py:
- plain RoPE: θ_i = base^(−2i/d), λ_i = 2π/θ_i = 2π·base^(2i/d), and the count of pairs with λ_i > L;
- the scalings as Hugging Face transformers' modeling_rope_utils.py writes them: linear θ/s; NTK-aware
  θ_i(base·s^(d/(d−2))); YaRN's ramp (_compute_yarn_parameters: find_correction_dim, find_correction_range with
  truncation, linear_ramp_factor, β_fast 32, β_slow 1) and its attention factor 0.1·ln s + 1; Llama 3.1's rule
  (_compute_llama3_parameters: factor 8, low_freq_factor 1, high_freq_factor 4, original context 8192); the pairs
  kept (θ' = θ), slowed by the whole s (θ' = θ/s) and in between, counted from those frequencies;
- the Relative position tab: the score at m = n is q·k (the rotations cancel), for the tab's seeded q and k redrawn
  here with numpy's generator (input data);
- the Decay tab: RoFormer's relative upper bound (1/(d/2)) Σ_j |Σ_{k<j} e^{i n θ_k}| at n = L over its value at 0,
  and the mean score of q = k with unit-variance components, 2 Σ_i cos(n θ_i) / d, at its lowest over the distances
  the figure draws (the view's grid: input data).
"""

from __future__ import annotations

import math

import numpy as np

from tests.page_numbers import Ref
from tests.test_page_numbers import FORMULA, GIVEN, LLAMA31_CONFIG, NAME, _preset
from views import positions as v_positions

# input data: the Relative position tab's seed and positions, and the distances the Decay tab draws
from views.positions import REL_SEED, REL_TOKENS, decay_distances

PO = v_positions.SPEC
ROUNDOFF = ("float64 round-off of the shifted scores: in exact arithmetic the shift changes nothing "
            "(test_views_positions.py::test_relative_scores_depend_only_on_the_distance)")  # fmt: skip
SECTION = "RoFormer's section (Su et al. 2021)"
HF_LLAMA3 = {"low": 1.0, "high": 4.0}  # Llama 3.1's rope_scaling (config.json): low_freq_factor 1, high_freq_factor 4
YARN_BETA = {"fast": 32.0, "slow": 1.0}  # Peng et al. 2023; Hugging Face's defaults beta_fast 32, beta_slow 1
SHORT = {"none": "plain", "linear": "position interpolation", "ntk": "NTK-aware", "yarn": "YaRN",
         "llama3": "Llama 3.1 scaling"}  # fmt: skip


# ------------------------------------------------------------------------------------------------ the formulas
def theta(d: int, base: float) -> np.ndarray:
    """θ_i = base^(−2i/d), i = 0 .. d/2 − 1."""
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)


def wavelengths(d: int, base: float) -> np.ndarray:
    """λ_i = 2π·base^(2i/d) tokens."""
    return 2 * math.pi * base ** (np.arange(0, d, 2, dtype=np.float64) / d)


def beyond(d: int, base: float, L: int) -> int:
    """The pairs whose wavelength is longer than the trained context L."""
    return sum(1 for lam in wavelengths(d, base) if lam > L)


def yarn_theta(d: int, base: float, s: float, L: int) -> np.ndarray:
    """Hugging Face's _compute_yarn_parameters (truncate=True, β_fast 32, β_slow 1), written out."""

    def correction_dim(rotations: float) -> float:  # find_correction_dim
        return (d * math.log(L / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = max(math.floor(correction_dim(YARN_BETA["fast"])), 0)  # find_correction_range
    high = min(math.ceil(correction_dim(YARN_BETA["slow"])), d - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0, 1)  # linear_ramp_factor
    extrapolation = 1 - ramp
    plain = theta(d, base)
    return (plain / s) * (1 - extrapolation) + plain * extrapolation


def llama3_theta(d: int, base: float, s: float, L: int) -> np.ndarray:
    """Hugging Face's _compute_llama3_parameters, written out."""
    plain = theta(d, base)
    wavelen = 2 * math.pi / plain
    low_wavelen, high_wavelen = L / HF_LLAMA3["low"], L / HF_LLAMA3["high"]
    out = np.where(wavelen > low_wavelen, plain / s, plain)
    smooth = (L / wavelen - HF_LLAMA3["low"]) / (HF_LLAMA3["high"] - HF_LLAMA3["low"])
    smoothed = (1 - smooth) * out / s + smooth * out
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, out)


def scaled_theta(method: str, d: int, base: float, s: float, L: int) -> np.ndarray:
    if method == "linear":
        return theta(d, base) / s
    if method == "ntk":
        return theta(d, base * s ** (d / (d - 2)))
    if method == "yarn":
        return yarn_theta(d, base, s, L)
    if method == "llama3":
        return llama3_theta(d, base, s, L)
    raise ValueError(method)


def counts(method: str, d: int, base: float, s: float, L: int) -> tuple[int, int, int]:
    """The pairs kept (θ' = θ), slowed by s (θ' = θ/s) and in between."""
    ratio = theta(d, base) / scaled_theta(method, d, base, s, L)
    kept = sum(1 for r in ratio if math.isclose(r, 1.0, rel_tol=1e-9))
    full = sum(1 for r in ratio if math.isclose(r, s, rel_tol=1e-9))
    return kept, full, d // 2 - kept - full


def yarn_factor(s: float) -> float:
    """YaRN's attention factor √(1/t) = 0.1·ln s + 1 (Peng et al. 2023), which multiplies cos and sin."""
    return 0.1 * math.log(s) + 1


def relative_bound(n: float, d: int, base: float) -> float:
    """RoFormer's relative upper bound (1/(d/2)) Σ_{j=1}^{d/2} |Σ_{k<j} e^{i n θ_k}| (section 3.4.3)."""
    terms = [complex(math.cos(n * t), math.sin(n * t)) for t in theta(d, base)]
    partial, total = 0j, 0.0
    for term in terms:
        partial += term
        total += abs(partial)
    return total / len(terms)


def same_score(n: np.ndarray, d: int, base: float) -> np.ndarray:
    """E[q_m·k_n] / d for q = k with unit-variance components: 2 Σ_i cos((m − n) θ_i) / d."""
    return 2 * np.cos(np.outer(n, theta(d, base))).sum(axis=1) / d


def score_at_equal_positions(d: int) -> float:
    """The tab's seeded q and k (drawn here: one normal vector, then the other) meet at m = n unrotated: q·k."""
    rng = np.random.default_rng(REL_SEED)
    q, k = rng.standard_normal(d), rng.standard_normal(d)
    return float(sum(a * b for a, b in zip(q, k, strict=True)))


# ------------------------------------------------------------------------------------------------ the passages
def _pairs_beyond(p: dict) -> list[Ref]:
    d, base, L = p["rope_d"], p["rope_base"], p["rope_ctx"]
    return [Ref(f"Pairs with λ > L: {beyond(d, base, L)} of {d // 2}", beyond(d, base, L), d // 2)]


def _wavelengths(p: dict) -> list[Ref]:
    lam = wavelengths(p["rope_d"], p["rope_base"])
    return [Ref(f"Wavelengths: 6.28 to {lam[-1]:,.0f}", lam[0], lam[-1])]


def _scaling(p: dict) -> list[Ref]:
    """The readouts of a scaling method: its counts, its new context s·L, YaRN's attention factor."""
    m, d, base, s, L = p["rope_method"], p["rope_d"], p["rope_base"], p["rope_s"], p["rope_ctx"]
    kept, full, between = counts(m, d, base, s, L)
    name = SHORT[m]
    label = NAME if m == "llama3" else None  # "Llama 3.1" holds a number
    pre = (label,) if label else ()
    refs = [
        Ref(f"Pairs kept / slowed by s / between ({name}): {kept} / {full} / {between}", *pre, kept, full, between),
        Ref(f"Pairs kept / slowed by s / between ({name}) help: θ' = θ, θ' = θ/s, or in between, at s = {s:g}",
            *pre, s),
        Ref(f"s·L: {s * L:,.0f} tokens", s * L),
        Ref(f"s·L help: s = {s:g} times the trained context L = {L:,}", s, L)
        if m != "llama3"
        else Ref(
            f"s·L help: s = {s:g} times the trained context L = {L:,} (Llama 3.1's configuration allows 131,072 "
            "tokens: 16 × 8,192)",
            s, L, NAME, LLAMA31_CONFIG, LLAMA31_CONFIG, LLAMA31_CONFIG,
        ),
    ]  # fmt: skip
    if m == "yarn":
        f = yarn_factor(s)
        refs += [
            Ref(f"YaRN attention factor: {f:.4f}", f),
            Ref(f"YaRN attention factor help: 0.1·ln s + 1 at s = {s:g}; it multiplies cos and sin (Hugging Face), "
                f"so the logits are multiplied by its square, {f**2:.4f}", FORMULA, FORMULA, s, f**2),
        ]  # fmt: skip
    return refs


def _panel(p: dict) -> Ref:
    """The readout panel of the wavelength figure (its text at the page's s; the slider's other steps are not
    drawn)."""
    m, d, base, s, L = p["rope_method"], p["rope_d"], p["rope_base"], p["rope_s"], p["rope_ctx"]
    kept, full, between = counts(m, d, base, s, L)
    pre = (NAME,) if m == "llama3" else ()
    text = f"{SHORT[m]} s = {s:g}: s·L = {s * L:,.0f} tokens pairs kept: {kept} slowed by s: {full} between: {between}"
    values: tuple = (*pre, s, s * L, kept, full, between)
    if m == "yarn":
        f = yarn_factor(s)
        text += f" attention factor {f:.4f} (logits × {f**2:.4f})"
        values += (f, f**2)
    return Ref(text, *values)


def _relative(p: dict) -> list[Ref]:
    shift, last = p["rope_shift"], REL_TOKENS - 1
    return [
        Ref("Largest change after the shift: 1e-12", ROUNDOFF),
        Ref("Score at m = n: 0.346", score_at_equal_positions(p["rope_d"])),
        Ref(f"^positions 0–{last}", 0.0, last),  # the left heatmap's title (a whole text: the right's holds it)
        Ref(f"shifted: positions {shift:,}–{shift + last:,}", shift, shift + last),
    ]


DECAY_CAPTION = Ref(
    "Blue: RoFormer's relative upper bound (section 3.4.3), the mean of |S_j| over the pairs, divided by its value at "
    "distance 0. Orange: the expected score when q = k with unit-variance components, divided by d. Green: the "
    "expected score of independent zero-mean q and k, which is 0 at every distance.",
    SECTION, GIVEN, 0.0,  # E[q·k] = Σ_j E[q_j] E[k_j] = 0 for independent zero-mean q, k
)  # fmt: skip


def _decay(p: dict) -> list[Ref]:
    d, base, L = p["rope_d"], p["rope_base"], p["rope_ctx"]
    lowest = float(same_score(decay_distances(L), d, base).min())
    assert lowest < 0, "the Decay tab's help says the q = k curve dips below 0"
    return [
        Ref(f"Bound at m − n = {L:,}: 0.151", L, relative_bound(L, d, base) / relative_bound(0, d, base)),
        Ref(f"Bound at m − n = {L:,} help: RoFormer's relative upper bound, as a share of its value at distance 0",
            L, 0.0),
        Ref("Lowest mean score, q = k: −0.233 × d", lowest),
        Ref("Lowest mean score, q = k help: over the distances drawn: it dips below 0", 0.0),
        Ref("relative to distance 0", 0.0),
        Ref("RoFormer's bound ÷ its value at 0", 0.0),
        Ref("the mean score need not (0 for independent q, k)", 0.0),  # the title: E[q·k] = 0 when independent
    ]  # fmt: skip


P0 = PO.defaults()
_PLAIN = _preset(PO, "Plain RoPE: d = 128, base 10,000, 8k context")
_BASE = _preset(PO, "Llama 3's base 500,000")
_PI = _preset(PO, "Position interpolation, s = 4")
_NTK = _preset(PO, "NTK-aware, s = 4")
_YARN16 = _preset(PO, "A8.10: 8k to 128k with YaRN (s = 16)")
_LLAMA31 = _preset(PO, "Llama 3.1: factor 8 on base 500,000")
_SHIFT = _preset(PO, "Only m − n matters: shift by 100,000")
_DECAY = _preset(PO, "RoFormer's decay bound")

# fmt: off
POSITIONS: dict[str, list[Ref]] = {
    "defaults": [
        *_pairs_beyond(P0),
        Ref(f"Pairs with λ > L help: plain wavelengths longer than L = {P0['rope_ctx']:,} tokens", P0["rope_ctx"]),
        *_wavelengths(P0),
        Ref("Wavelengths help: in tokens: 2π for pair 0 up to 2π·base^((d−2)/d) for the last pair", FORMULA),
        *_scaling(P0),
        _panel(P0),
        Ref("pair i (dimensions 2i, 2i+1)", FORMULA),
        Ref("original λ = 2π·base^(2i/d)", FORMULA),
        Ref(f"trained context L = {P0['rope_ctx']:,}", P0["rope_ctx"]),
    ],
    "tab Relative position": _relative(P0),
    "tab Decay": [DECAY_CAPTION, *_decay(P0)],
    "preset Plain RoPE: d = 128, base 10,000, 8k context": [],  # "Scaling: none": no number
    "preset Llama 3's base 500,000": [*_pairs_beyond(_BASE), *_wavelengths(_BASE)],
    "preset Position interpolation, s = 4": [*_scaling(_PI)[:2], _panel(_PI)],
    "preset NTK-aware, s = 4": [*_scaling(_NTK)[:2], _panel(_NTK)],
    # the counts do not depend on s for YaRN (its ramp is set by L, d and base): the readout is the defaults'
    "preset A8.10: 8k to 128k with YaRN (s = 16)": [*_scaling(_YARN16)[1:], _panel(_YARN16)],
    "preset Llama 3.1: factor 8 on base 500,000": [
        *_pairs_beyond(_LLAMA31), *_wavelengths(_LLAMA31), *_scaling(_LLAMA31), _panel(_LLAMA31),
        Ref("Llama 3.1 scaling λ'", NAME),
    ],
    "preset Only m − n matters: shift by 100,000": _relative(_SHIFT),
    "preset RoFormer's decay bound": [DECAY_CAPTION, *_decay(_DECAY)],
}
# fmt: on

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/16_Positions.py": POSITIONS}
