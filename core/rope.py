"""Rotary position embedding (RoPE) from first principles: the rotation, its frequencies and wavelengths, why the
score depends only on the distance between tokens, RoFormer's long-term decay bound, and the frequency changes that
stretch a trained context (position interpolation, NTK-aware and dynamic NTK, YaRN, Llama 3.1).

The core of the "positions" page. Source: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position
Embedding", arXiv 2104.09864 (sections 3.2 and 3.4.2, eqs. 13-15 and 34, for the rotation; section 3.4.3 for the
decay); the interview bank (seed 002, A2.6 and A8.10) for what the page must get right: RoPE rotates q and k only,
never v, and it is relative by construction, which does not make it extrapolate.

The rotation. The d dimensions of a query or key are grouped into d/2 pairs; pair i at position m is turned by the
angle m·θ_i::

    (a, b)  ->  (a cos mθ_i − b sin mθ_i,   a sin mθ_i + b cos mθ_i)
    θ_i = base^(−2i/d),   i = 0 .. d/2 − 1            (RoFormer 3.2.2 counts i from 1, −2(i−1)/d; here from 0)

Read a pair as the complex number z_i = a + i·b: the rotation is z_i · e^{i m θ_i}. For real vectors
u·v = Re Σ_i u_i conj(v_i) over the pairs, so the score of a query rotated to m and a key rotated to n is

    q_m · k_n = Re Σ_i q_i conj(k_i) e^{i (m − n) θ_i}

which depends on m − n only (:func:`rope_scores`; a shift of both positions changes nothing). The wavelength of pair
i, 2π/θ_i tokens, runs from 2π (i = 0) to 2π·base^((d−2)/d) (the last pair).

Two ways to pair the dimensions (``pairing``), both in use:

- ``"interleaved"``, pairs (2i, 2i+1): RoFormer eqs. 14 and 34, Meta's Llama reference code (it views adjacent
  pairs as complex numbers), GPT-J, and the snippet of seed 002.
- ``"halves"``, pairs (i, i + d/2): GPT-NeoX and Hugging Face's Llama (``rotate_half``). Hugging Face's Llama weight
  conversion permutes the rows of W_q and W_k so that its checkpoints give Meta's scores.

The default is ``"interleaved"``: it is the paper's definition, the layout in which "a pair is one complex number"
holds literally, and the one the decay bound below is written in. The two give identical scores once the dimensions
of q and k are permuted by :func:`halves_permutation` (a permutation is orthogonal, so dot products are unchanged).

The long-term decay (RoFormer section 3.4.3). With h_i = q_i conj(k_i) (pairs as complex numbers, h_{d/2} = 0) and
the partial sums S_j = Σ_{k=0}^{j−1} e^{i (m−n) θ_k} (S_0 = 0), Abel summation gives

    Σ_i h_i e^{i (m−n) θ_i} = −Σ_{i=0}^{d/2−1} S_{i+1} (h_{i+1} − h_i)
    |q_m · k_n|  <=  |Σ_i h_i e^{i (m−n) θ_i}|  <=  (max_i |h_{i+1} − h_i|) · Σ_{j=1}^{d/2} |S_j|

RoFormer's Figure 2 draws the "relative upper bound" (1/(d/2)) Σ_j |S_j| against the distance m − n
(:func:`relative_upper_bound`). What falls with distance is this bound, for fixed content (the factor
max |h_{i+1} − h_i| depends on q and k), and not monotonically; the score of a given q, k need not fall at all, and
the mean score of independent zero-mean q, k is 0 at every distance (:func:`expected_rotated_score`).

Long-context extension (:func:`rope_inv_freq`), s = the scaling factor, L = the trained context length::

    None      θ_i = base^(−2i/d)
    linear    θ_i / s                   position interpolation (Chen et al. 2023, arXiv 2306.15595): m -> m / s
    ntk       base' = base · s^(d/(d−2))   NTK-aware (bloc97, r/LocalLLaMA, June 2023): θ_0 kept, the last θ over s
    dynamic   base' = base · (s·T/L − (s − 1))^(d/(d−2)) for a current length T > L, else plain
              (Hugging Face's dynamic NTK, after emozilla's r/LocalLLaMA post, 2023)
    yarn      θ_i' = (1 − γ_i) θ_i / s + γ_i θ_i,  attention factor 0.1 ln s + 1   (Peng et al. 2023, 2309.00071)
              γ_i = 1 (kept) for pairs turning more than β = 32 times in L, 0 (divided by s) for fewer than α = 1
    llama3    wavelengths > L / low_freq_factor divided by s, < L / high_freq_factor kept, smooth in between
              (Llama 3.1; Hugging Face ``_compute_llama3_parameters``, Meta's reference ``apply_scaling``)

The formulas follow Hugging Face transformers' ``modeling_rope_utils.py`` (``_compute_*_parameters``), checked
against its source, for linear, dynamic, yarn and llama3; static NTK-aware is bloc97's base change (2023), which
Hugging Face offers only in its dynamic form. These functions only give the frequencies; how well a model then works
at the new length is measured, not computed. PI and YaRN were published with a short fine-tune at the new length,
NTK-aware and dynamic NTK were proposed for use without one; seed 002 (A8.10) says all of them need fine-tuning,
which is stronger than their sources.

numpy everywhere except :func:`apply_rope` and :func:`rope_scores`, which follow their input's library (a torch
tensor stays a tensor on its device); torch is never imported for numpy inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.arrays import as_float_array
from core.device import as_tensor, default_dtype, loaded_module

if TYPE_CHECKING:
    import torch

Pairing = Literal["interleaved", "halves"]
PAIRINGS: tuple[str, ...] = ("interleaved", "halves")
SCALING_TYPES: tuple[str, ...] = ("linear", "ntk", "dynamic", "yarn", "llama3")
DEFAULT_BASE = 10000.0  # RoFormer eq. 15; Llama 3 uses 500,000

# ---------------------------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------------------------


def _check_head_dim(head_dim: Any, minimum: int = 2) -> int:
    if isinstance(head_dim, bool) or not isinstance(head_dim, int | np.integer) or head_dim < minimum:
        raise ValueError(f"head_dim must be a whole number >= {minimum}, got {head_dim!r}")
    if head_dim % 2:
        raise ValueError(f"head_dim must be even (RoPE rotates pairs of dimensions), got {head_dim}")
    return int(head_dim)


def _check_number(name: str, value: Any, low: float, inclusive: bool = True) -> float:
    ok = not isinstance(value, bool) and isinstance(value, int | float | np.integer | np.floating)
    if ok:
        value = float(value)
        ok = math.isfinite(value) and (value >= low if inclusive else value > low)
    if not ok:
        raise ValueError(f"{name} must be a finite number {'>=' if inclusive else '>'} {low:g}, got {value!r}")
    return value


def _check_length(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a whole number of tokens >= 1, got {value!r}")
    return int(value)


def _check_inv_freq(inv_freq: Any) -> NDArray[np.float64]:
    f = as_float_array(inv_freq, "inv_freq")
    if f.ndim != 1 or f.size < 1:
        raise ValueError(f"inv_freq must be a 1-D array of d/2 frequencies, got shape {f.shape}")
    if np.any(f <= 0):
        raise ValueError("inv_freq must be > 0 (radians per token)")
    return f


# ---------------------------------------------------------------------------------------------------------------
# frequencies, wavelengths and the scaling methods
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RopeScaling:
    """A long-context scaling method and its parameters (Hugging Face's ``rope_scaling`` keys, and "ntk" for static
    NTK-aware scaling, which Hugging Face does not offer).

    type: "linear", "ntk", "dynamic", "yarn" or "llama3".
    factor: s. None means the published default where there is one (llama3: 8, Llama 3.1); required otherwise.
    original_max_position_embeddings: L, the trained context. None means llama3's 8192 (Llama 3.1); dynamic and
        yarn need it (Hugging Face's dynamic NTK takes it from ``max_position_embeddings``).
    low_freq_factor, high_freq_factor: llama3 only (1 and 4 in Llama 3.1).
    beta_fast, beta_slow: yarn only, in rotations over L; the paper's β = 32 and α = 1 (Peng et al. 2023).
    attention_factor: yarn only; None gives 0.1 ln s + 1 (the paper's sqrt(1/t)), and 1 for s <= 1 as in Hugging
        Face.
    truncate: yarn only; True rounds the ramp's end dimensions outwards (floor, ceil), as Hugging Face does by
        default (gpt-oss sets False).
    ramp: yarn only. "code": linear in the pair index between the pairs that turn beta_fast and beta_slow times in
        L, as the YaRN reference code and Hugging Face compute it. "paper": linear in the number of rotations
        r = L·θ_i/(2π), γ = clip((r − α)/(β − α), 0, 1), the paper's definition (Peng et al. 2023, section 3.2: γ linear
        in r = L/λ); the two agree outside the ramp and differ inside it.
    """

    type: str
    factor: float | None = None
    original_max_position_embeddings: int | None = None
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    attention_factor: float | None = None
    truncate: bool = True
    ramp: Literal["code", "paper"] = "code"


LLAMA3_DEFAULTS = {"factor": 8.0, "original_max_position_embeddings": 8192}  # Llama 3.1 (HF config, Meta's code)


def _as_scaling(scaling: RopeScaling | dict[str, Any]) -> RopeScaling:
    """A RopeScaling from itself or from a dict (Hugging Face's "rope_type", or "type", for the method)."""
    if isinstance(scaling, RopeScaling):
        s = scaling
    elif isinstance(scaling, dict):
        d = dict(scaling)
        kind = d.pop("rope_type", None) or d.pop("type", None)
        d.pop("type", None)
        known = {f.name for f in fields(RopeScaling)} - {"type"}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown rope scaling keys {unknown}; expected some of {sorted(known)}")
        s = RopeScaling(type=kind, **d)
    else:
        raise ValueError(f"scaling must be None, a RopeScaling or a dict, got {type(scaling).__name__}")
    if s.type not in SCALING_TYPES:
        raise ValueError(f"scaling type {s.type!r}: expected one of {', '.join(SCALING_TYPES)} (or scaling=None)")
    return s


def _plain_inv_freq(head_dim: int, base: float) -> NDArray[np.float64]:
    # θ_i = base^(−2i/d), i = 0 .. d/2 − 1
    return base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)  # (d/2,)


def _yarn_inv_freq(head_dim: int, base: float, s: float, L: int, sc: RopeScaling) -> NDArray[np.float64]:
    theta = _plain_inv_freq(head_dim, base)  # (d/2,)
    if sc.ramp == "code":
        # the pair index whose θ turns r times in L tokens:  r = L θ_i / (2π)  <=>  i = d ln(L / (2π r)) / (2 ln base)
        def index_of(r: float) -> float:
            return head_dim * math.log(L / (r * 2 * math.pi)) / (2 * math.log(base))

        low, high = index_of(sc.beta_fast), index_of(sc.beta_slow)
        if sc.truncate:
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, head_dim - 1)
        if low == high:
            high += 0.001  # as the reference code does, to avoid 0/0
        # share interpolated = clip((i − low) / (high − low), 0, 1); γ_i = 1 − that share (1 = θ kept)
        gamma = 1.0 - np.clip((np.arange(head_dim // 2) - low) / (high - low), 0.0, 1.0)  # (d/2,)
    else:
        # r_i = L / λ_i = L θ_i / (2π);  γ(r) = 0 for r < α, 1 for r > β, (r − α)/(β − α) between
        r = L * theta / (2 * math.pi)  # (d/2,)
        gamma = np.clip((r - sc.beta_slow) / (sc.beta_fast - sc.beta_slow), 0.0, 1.0)
    # θ_i' = (1 − γ_i) θ_i / s + γ_i θ_i
    return (1.0 - gamma) * theta / s + gamma * theta


def _llama3_inv_freq(head_dim: int, base: float, s: float, L: int, sc: RopeScaling) -> NDArray[np.float64]:
    theta = _plain_inv_freq(head_dim, base)  # (d/2,)
    wavelen = 2 * math.pi / theta  # (d/2,)
    # smooth = (L / λ − low_freq_factor) / (high_freq_factor − low_freq_factor): 0 at λ = L/low, 1 at λ = L/high
    smooth = (L / wavelen - sc.low_freq_factor) / (sc.high_freq_factor - sc.low_freq_factor)
    # λ > L/low: θ/s;  λ < L/high: θ;  between: (1 − smooth) θ/s + smooth θ
    mid = (1.0 - smooth) * theta / s + smooth * theta
    out = np.where(wavelen > L / sc.low_freq_factor, theta / s, mid)
    return np.where(wavelen < L / sc.high_freq_factor, theta, out)


def rope_inv_freq(
    head_dim: int,
    base: float = DEFAULT_BASE,
    scaling: RopeScaling | dict[str, Any] | None = None,
    seq_len: int | None = None,
) -> tuple[NDArray[np.float64], float]:
    """(inv_freq, attention_scale): the d/2 frequencies θ_i in radians per token, and the factor the scaling method
    multiplies cos and sin by.

    attention_scale follows Hugging Face's convention (``attention_factor``): it multiplies cos and sin, so each
    rotated q and k is scaled by it and the logits q·k by its square. For YaRN it is 0.1 ln s + 1, the paper's
    sqrt(1/t), so the logits are multiplied by 1/t = (0.1 ln s + 1)². It is 1 for every other method.

    seq_len is the current sequence length; only "dynamic" uses it (the plain frequencies up to the trained length L,
    then s' = s·seq_len/L − (s − 1) in the NTK-aware base change). See the module docstring for the formulas.
    """
    d = _check_head_dim(head_dim)
    b = _check_number("base", base, 1.0, inclusive=False)
    if seq_len is not None:
        seq_len = _check_length("seq_len", seq_len)
    if scaling is None:
        return _plain_inv_freq(d, b), 1.0
    sc = _as_scaling(scaling)
    defaults = LLAMA3_DEFAULTS if sc.type == "llama3" else {}
    factor = sc.factor if sc.factor is not None else defaults.get("factor")
    if factor is None:
        raise ValueError(f"{sc.type} scaling needs a factor s (the ratio of the new context to the trained one)")
    s = _check_number("factor", factor, 1.0)
    L = sc.original_max_position_embeddings or defaults.get("original_max_position_embeddings")
    if sc.type in ("dynamic", "yarn", "llama3"):
        if L is None:
            raise ValueError(f"{sc.type} scaling needs original_max_position_embeddings (the trained context)")
        L = _check_length("original_max_position_embeddings", L)

    if sc.type == "linear":
        # position interpolation: m -> m/s, i.e. θ_i -> θ_i / s
        return _plain_inv_freq(d, b) / s, 1.0
    if sc.type in ("ntk", "dynamic"):
        if d < 4:
            raise ValueError("NTK scaling needs head_dim >= 4 (its exponent is d/(d−2))")
        if sc.type == "dynamic":
            if seq_len is None or seq_len <= L:
                return _plain_inv_freq(d, b), 1.0
            # s' = s · T / L − (s − 1)  (> 1 for T > L)
            s = s * seq_len / L - (s - 1.0)
        # base' = base · s^(d/(d−2)), so the last frequency base'^(−(d−2)/d) = θ_{d/2−1} / s and θ_0 = 1 is kept
        return _plain_inv_freq(d, b * s ** (d / (d - 2))), 1.0
    if sc.type == "yarn":
        if sc.ramp not in ("code", "paper"):
            raise ValueError(f"yarn ramp must be 'code' or 'paper', got {sc.ramp!r}")
        fast = _check_number("beta_fast", sc.beta_fast, 0.0, inclusive=False)
        slow = _check_number("beta_slow", sc.beta_slow, 0.0, inclusive=False)
        if fast <= slow:
            raise ValueError(f"yarn needs beta_fast > beta_slow, got {fast} and {slow}")
        if sc.attention_factor is not None:
            scale = _check_number("attention_factor", sc.attention_factor, 0.0, inclusive=False)
        else:
            # sqrt(1/t) = 0.1 ln s + 1 (Peng et al. 2023); Hugging Face returns 1 for s <= 1
            scale = 0.1 * math.log(s) + 1.0 if s > 1 else 1.0
        return _yarn_inv_freq(d, b, s, L, sc), scale
    # llama3
    lo = _check_number("low_freq_factor", sc.low_freq_factor, 0.0, inclusive=False)
    hi = _check_number("high_freq_factor", sc.high_freq_factor, 0.0, inclusive=False)
    if hi <= lo:
        raise ValueError(f"llama3 needs high_freq_factor > low_freq_factor, got {hi} and {lo}")
    return _llama3_inv_freq(d, b, s, L, sc), 1.0


def rope_wavelengths(inv_freq: ArrayLike) -> NDArray[np.float64]:
    """The wavelength of each pair in tokens, λ_i = 2π / θ_i: how far apart two positions are when pair i has turned
    once. Plain RoPE: 2π for i = 0 up to 2π·base^((d−2)/d) for the last pair."""
    # λ_i = 2π / θ_i
    return 2 * math.pi / _check_inv_freq(inv_freq)


def rotations_in_context(inv_freq: ArrayLike, context_length: int) -> NDArray[np.float64]:
    """How many full turns each pair makes over a context of L tokens, r_i = L θ_i / (2π) = L / λ_i (YaRN's r)."""
    L = _check_length("context_length", context_length)
    # r_i = L θ_i / (2π)
    return L * _check_inv_freq(inv_freq) / (2 * math.pi)


def wavelengths_beyond_context(inv_freq: ArrayLike, context_length: int) -> NDArray[np.bool_]:
    """True for the pairs whose wavelength exceeds a (trained) context of L tokens, λ_i > L.

    Within L tokens such a pair turns less than once, so training never showed it the angles from L·θ_i up to 2π
    that longer inputs reach: these are the pairs long-context methods slow down (seed 002, A8.10).
    """
    L = _check_length("context_length", context_length)
    return rope_wavelengths(inv_freq) > L


# ---------------------------------------------------------------------------------------------------------------
# applying the rotation (numpy or torch, following the input)
# ---------------------------------------------------------------------------------------------------------------


def halves_permutation(head_dim: int) -> NDArray[np.int64]:
    """The index array p with x[..., p] in "halves" layout for x in "interleaved" layout.

    Interleaved pair i sits at (2i, 2i+1), halves pair i at (i, i + d/2), so p = (0, 2, 4, ..., d−2, 1, 3, ..., d−1):
    apply_rope(x[..., p], pos, f, "halves") == apply_rope(x, pos, f, "interleaved")[..., p].
    """
    d = _check_head_dim(head_dim)
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # (d,)


def _is_tensor(x: Any) -> bool:
    torch = loaded_module("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _cos_sin(positions: Any, inv_freq: Any, x: Any) -> tuple[Any, Any]:
    """cos and sin of the angles m·θ_i, (T, d/2), in x's library and dtype; angles in float64 where possible."""
    if not _is_tensor(x):
        pos = as_float_array(positions, "positions")
        f = _check_inv_freq(inv_freq)
        angle = np.outer(pos, f)  # (T, d/2)  m θ_i
        return np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    import torch

    dt = default_dtype(x.device)  # float64, except on MPS
    pos = (positions if _is_tensor(positions) else as_tensor(as_float_array(positions, "positions"))).to(x.device, dt)
    f = inv_freq if _is_tensor(inv_freq) else as_tensor(_check_inv_freq(inv_freq))
    f = f.to(x.device, dt)
    if not bool(torch.isfinite(pos).all()) or not bool((f > 0).all()):
        raise ValueError("positions must be finite and inv_freq > 0")
    angle = torch.outer(pos, f)  # (T, d/2)  m θ_i
    return angle.cos().to(x.dtype), angle.sin().to(x.dtype)


def _as_float_input(x: Any, name: str) -> Any:
    if _is_tensor(x):
        return x if x.dtype.is_floating_point else x.to(default_dtype(x.device))
    a = np.asarray(x)
    return as_float_array(a, name) if a.dtype.kind not in "f" else a


def apply_rope(
    x: Any,
    positions: ArrayLike | torch.Tensor,
    inv_freq: ArrayLike | torch.Tensor,
    pairing: Pairing = "interleaved",
    attention_scale: float = 1.0,
) -> Any:
    """x rotated to its positions: x (..., T, d), positions (T,) (fractional allowed), inv_freq (d/2,).

    Returns an array of x's shape in x's library (a numpy array for arrays and lists, a tensor on x's device for a
    tensor, differentiable). Pair i at position m turns by m·θ_i:

        out_a = a cos mθ_i − b sin mθ_i,   out_b = a sin mθ_i + b cos mθ_i

    with (a, b) = (x_{2i}, x_{2i+1}) for "interleaved" (the default, RoFormer's), (x_i, x_{i+d/2}) for "halves"
    (GPT-NeoX, Hugging Face Llama). attention_scale multiplies cos and sin (Hugging Face's convention for YaRN's
    attention factor; see :func:`rope_inv_freq`). Apply it to queries and keys only, never to values.
    """
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing {pairing!r}: expected one of {', '.join(PAIRINGS)}")
    x = _as_float_input(x, "x")
    if len(x.shape) < 2:
        raise ValueError(f"x must have shape (..., T, d), got {tuple(x.shape)}")
    T, d = x.shape[-2], x.shape[-1]
    _check_head_dim(d)
    pos_shape = tuple(positions.shape) if _is_tensor(positions) else np.shape(positions)
    if pos_shape != (T,):
        raise ValueError(f"positions must have shape ({T},) to match x's T, got {pos_shape}")
    freq_shape = tuple(inv_freq.shape) if _is_tensor(inv_freq) else np.shape(inv_freq)
    if freq_shape != (d // 2,):
        raise ValueError(f"inv_freq must have shape ({d // 2},) for d = {d}, got {freq_shape}")
    scale = _check_number("attention_scale", attention_scale, 0.0, inclusive=False)
    cos, sin = _cos_sin(positions, inv_freq, x)  # (T, d/2) each
    if scale != 1.0:
        cos, sin = cos * scale, sin * scale
    ia, ib = (slice(0, d, 2), slice(1, d, 2)) if pairing == "interleaved" else (slice(0, d // 2), slice(d // 2, d))
    a, b = x[..., ia], x[..., ib]  # (..., T, d/2) each
    out = x.new_empty(x.shape) if _is_tensor(x) else np.empty_like(x)  # (..., T, d)
    # (a, b) -> (a cos − b sin, a sin + b cos): z · e^{i m θ} for z = a + i b
    out[..., ia] = a * cos - b * sin
    out[..., ib] = a * sin + b * cos
    return out


def rope_scores(
    q: Any,
    k: Any,
    inv_freq: ArrayLike | torch.Tensor,
    q_positions: ArrayLike | None = None,
    k_positions: ArrayLike | None = None,
    pairing: Pairing = "interleaved",
) -> Any:
    """The score matrix of rotated queries and keys, S_mn = q_m · k_n (no 1/sqrt(d) scale), shape (..., T_q, T_k).

    q (..., T_q, d), k (..., T_k, d); positions default to 0 .. T − 1. A tensor input gives a tensor (the other input
    joins it on its device). Entry (m, n) depends only on the content of q_m, k_n and on their position difference:
    adding the same offset to both position arrays leaves the matrix unchanged up to round-off.
    """
    if _is_tensor(q) != _is_tensor(k):
        q, k = (q, as_tensor(k, q.dtype, q.device)) if _is_tensor(q) else (as_tensor(q, k.dtype, k.device), k)
    q, k = _as_float_input(q, "q"), _as_float_input(k, "k")
    if len(q.shape) < 2 or len(k.shape) < 2 or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have shapes (..., T, d) with one d, got {tuple(q.shape)}, {tuple(k.shape)}")
    q_pos = np.arange(q.shape[-2]) if q_positions is None else q_positions
    k_pos = np.arange(k.shape[-2]) if k_positions is None else k_positions
    q_rot = apply_rope(q, q_pos, inv_freq, pairing)  # (..., T_q, d)
    k_rot = apply_rope(k, k_pos, inv_freq, pairing)  # (..., T_k, d)
    # S = R(m) q · R(n) k
    return q_rot @ k_rot.swapaxes(-1, -2)  # (..., T_q, T_k)


# ---------------------------------------------------------------------------------------------------------------
# scores against distance, and RoFormer's decay bound (numpy)
# ---------------------------------------------------------------------------------------------------------------


def _pairs_complex(v: ArrayLike, name: str, half: int) -> NDArray[np.complex128]:
    a = as_float_array(v, name)
    if a.shape != (2 * half,):
        raise ValueError(f"{name} must be one vector of d = {2 * half} numbers, got shape {a.shape}")
    return a[0::2] + 1j * a[1::2]  # (d/2,) interleaved pairs as complex numbers


def _freqs(head_dim: int | None, base: float, inv_freq: ArrayLike | None) -> NDArray[np.float64]:
    if inv_freq is not None:
        f = _check_inv_freq(inv_freq)
        if head_dim is not None and _check_head_dim(head_dim) != 2 * f.size:
            raise ValueError(f"inv_freq has {f.size} frequencies, head_dim {head_dim} needs {head_dim // 2}")
        return f
    return rope_inv_freq(_check_head_dim(head_dim), base)[0]


def score_at_distance(q: ArrayLike, k: ArrayLike, distances: ArrayLike, inv_freq: ArrayLike) -> NDArray[np.float64]:
    """q_m · k_n for one query vector q and one key vector k (d,) at each distance m − n (interleaved pairing).

        q_m · k_n = Re Σ_i q_i conj(k_i) e^{i (m−n) θ_i}

    For q = k = x this is Σ_i |x_i|² cos((m−n) θ_i), |x_i|² the energy of pair i: an oscillating sum that is not a
    decaying function of the distance in general.
    """
    f = _check_inv_freq(inv_freq)
    h = _pairs_complex(q, "q", f.size) * np.conj(_pairs_complex(k, "k", f.size))  # (d/2,) h_i = q_i conj(k_i)
    dist = as_float_array(distances, "distances")
    # Re Σ_i h_i e^{i Δ θ_i}
    return np.real(np.exp(1j * dist[..., None] * f) @ h)  # (...,)


def _partial_sums(dist: NDArray[np.float64], f: NDArray[np.float64]) -> NDArray[np.complex128]:
    # S_j = Σ_{k=0}^{j−1} e^{i Δ θ_k},  j = 1 .. d/2
    return np.cumsum(np.exp(1j * dist[..., None] * f), axis=-1)  # (..., d/2)


def relative_upper_bound(
    distances: ArrayLike, head_dim: int | None = None, base: float = DEFAULT_BASE, inv_freq: ArrayLike | None = None
) -> NDArray[np.float64]:
    """RoFormer's relative upper bound (1/(d/2)) Σ_{j=1}^{d/2} |S_j| at each distance m − n (its Figure 2).

    S_j = Σ_{k=0}^{j−1} e^{i (m−n) θ_k}. Multiplied by (d/2) · max_i |h_{i+1} − h_i| (h_i = q_i conj(k_i),
    h_{d/2} = 0) it bounds |Σ_i h_i e^{i (m−n) θ_i}|, and so |q_m · k_n|, for one fixed pair of q, k
    (:func:`abel_decay_bound`). It is a bound that falls with distance (with bumps: not monotonically), not the
    score: see :func:`expected_rotated_score`. At distance 0 it is (d/2 + 1)/2 (S_j = j). Frequencies
    θ_i = base^(−2i/d), or ``inv_freq`` when given (e.g. a scaled set from :func:`rope_inv_freq`).
    """
    f = _freqs(head_dim, _check_number("base", base, 1.0, inclusive=False), inv_freq)
    dist = as_float_array(distances, "distances")
    # (1/(d/2)) Σ_j |S_j|
    return np.abs(_partial_sums(dist, f)).mean(axis=-1)


def abel_decay_bound(q: ArrayLike, k: ArrayLike, distances: ArrayLike, inv_freq: ArrayLike) -> NDArray[np.float64]:
    """RoFormer's bound for one q and k (d,): (max_i |h_{i+1} − h_i|) · Σ_{j=1}^{d/2} |S_j| at each distance.

    h_i = q_i conj(k_i) over the interleaved pairs, h_{d/2} = 0, so the maximum includes |h_{d/2−1}|. It bounds
    |Σ_i h_i e^{i (m−n) θ_i}|, whose real part is the score q_m · k_n (:func:`score_at_distance`).
    """
    f = _check_inv_freq(inv_freq)
    h = _pairs_complex(q, "q", f.size) * np.conj(_pairs_complex(k, "k", f.size))  # (d/2,)
    # max_i |h_{i+1} − h_i| with h_{d/2} = 0
    step = np.max(np.abs(np.diff(np.append(h, 0.0))))
    dist = as_float_array(distances, "distances")
    return step * np.abs(_partial_sums(dist, f)).sum(axis=-1)


def expected_rotated_score(
    distances: ArrayLike,
    head_dim: int | None = None,
    base: float = DEFAULT_BASE,
    correlation: float = 1.0,
    inv_freq: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """E[q_m · k_n] at each distance m − n, for q, k whose components have variance 1 and correlation ρ between q_j
    and k_j (pairs of components independent otherwise).

        E[q_m · k_n] = Re Σ_i E[q_i conj(k_i)] e^{i (m−n) θ_i} = 2ρ Σ_i cos((m−n) θ_i)

    since E[q_i conj(k_i)] = E[q_a k_a] + E[q_b k_b] = 2ρ per pair. ρ = 1 is q = k (the score at distance 0 is then
    E|q|² = d); ρ = 0, independent q and k, gives 0 at every distance: the mean score of random, unrelated q and k
    has nothing to decay. For ρ != 0 the curve is ρ times the q = k one, 2ρ Σ_i cos((m−n) θ_i): it falls from ρ·d as
    the fast pairs get out of phase and then oscillates (negative at some distances), a property of these
    frequencies, not a bound.
    """
    f = _freqs(head_dim, _check_number("base", base, 1.0, inclusive=False), inv_freq)
    rho = _check_number("correlation", correlation, -1.0)
    if rho > 1:
        raise ValueError(f"correlation must be in [-1, 1], got {correlation!r}")
    dist = as_float_array(distances, "distances")
    # 2ρ Σ_i cos(Δ θ_i)
    return 2.0 * rho * np.cos(dist[..., None] * f).sum(axis=-1)
