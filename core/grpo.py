"""GRPO's group-relative advantages, the zero-signal groups, and why prompts of medium difficulty teach the most.

GRPO (DeepSeekMath, 2024) samples a group of G answers to one prompt, scores each with a reward r_i (1 if a
checker accepts the answer, else 0; or a reward model's score) and gives every token of answer i the advantage

    A_i = (r_i - mean(r_1..r_G)) / std(r_1..r_G)

The group mean is the baseline that PPO gets from a learned value model. Three conventions for the denominator:

    "population"  std with 1/G, as the lesson writes it
    "sample"      std with 1/(G-1) (torch.std's default, used by common RL libraries); scales every A_i by
                  sqrt((G-1)/G) while eps is small against the std ((std + eps)/(sample std + eps) in general)
    "none"        no division: A_i = r_i - mean(r)  (Dr. GRPO); across a batch this re-weights the groups, since
                  each was divided by its own std

Implementations add eps to the std. A group whose rewards are all equal has r_i - mean = 0 for every answer:
its advantages are exactly 0 here in every mode, with or without eps (no 0/0), and the prompt teaches nothing
(only the KL term acts, where the loss has one). For a prompt the policy solves with probability p, a group has
any signal with probability 1 - p^G - (1-p)^G, which is why prompts of medium difficulty matter.

Everything works on the last axis of an array or tensor of shape (..., G), so many groups go through one call.
numpy in gives numpy out; a torch tensor in gives a tensor out on the same device. Only the functions that are
handed tensors touch torch, and torch is never imported by this module itself.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from core.device import loaded_torch

StdMode = Literal["population", "sample", "none"]
STD_MODES: tuple[str, ...] = ("population", "sample", "none")
STD_LABELS: dict[str, str] = {
    "population": "population std (divide by G)",
    "sample": "sample std (divide by G-1)",
    "none": "no std (Dr. GRPO)",
}
G_MIN, G_MAX = 2, 64  # group sizes the page offers (the core functions accept any G >= 2)


# ----------------------------------------------------------------------------------------------------------------
# settings and validation


@dataclass(frozen=True)
class AdvantageSettings:
    """How the advantages are normalised: the std convention and the epsilon added to the denominator."""

    std: StdMode = "population"
    eps: float = 0.0

    def __post_init__(self) -> None:
        _check_std(self.std)
        _check_eps(self.eps)

    def advantages(self, rewards: Any) -> Any:
        """:func:`grpo_advantages` of ``rewards`` with these settings."""
        return grpo_advantages(rewards, std=self.std, eps=self.eps)


def _check_std(std: str) -> None:
    if std not in STD_MODES:
        raise ValueError(f"std must be one of {', '.join(repr(m) for m in STD_MODES)}; got {std!r}")


def _check_eps(eps: float) -> None:
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating, np.integer)):
        raise ValueError(f"eps must be a number; got {eps!r}")
    if not math.isfinite(float(eps)) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0; got {eps!r}")


def _is_tensor(x: Any) -> bool:
    torch = loaded_torch()
    return torch is not None and isinstance(x, torch.Tensor)


def _as_rewards(rewards: Any, min_ndim: int = 1, check_finite: bool = True) -> Any:
    """``rewards`` as a floating array or tensor (same device), checked: at least ``min_ndim`` axes, G >= 2, finite.

    With ``check_finite=False`` the caller checks finiteness itself (the kernel does it on one value per group).
    """
    if _is_tensor(rewards):
        from core.device import default_dtype

        r = rewards if rewards.is_floating_point() else rewards.to(default_dtype(rewards.device))
        finite = not check_finite or bool(r.isfinite().all())
    else:
        try:
            r = np.asarray(rewards)
        except (ValueError, TypeError) as err:
            raise ValueError(f"rewards must be an array of numbers: {err}") from None
        if r.dtype == object or not (np.issubdtype(r.dtype, np.number) or np.issubdtype(r.dtype, np.bool_)):
            raise ValueError(f"rewards must be numbers; got an array of {r.dtype}")
        if np.issubdtype(r.dtype, np.complexfloating):
            raise ValueError("rewards must be real numbers")
        if not np.issubdtype(r.dtype, np.floating):
            r = r.astype(np.float64)
        finite = not check_finite or bool(np.isfinite(r).all())
    if r.ndim < min_ndim:
        raise ValueError(
            f"rewards need at least {min_ndim} axis/axes, the last one being the group; got shape {tuple(r.shape)}"
        )
    if r.shape[-1] < 2:
        raise ValueError(f"a group needs at least 2 answers (last axis); got G = {r.shape[-1]}")
    if not finite:
        raise ValueError("rewards must be finite numbers (found NaN or infinity)")
    return r


def _xp(r: Any) -> Any:
    """The array module of ``r``: numpy, or torch for tensors (both accept axis= / keepdims= in what we use)."""
    return sys.modules["torch"] if _is_tensor(r) else np


# ----------------------------------------------------------------------------------------------------------------
# the advantages


def _max_abs(c: Any) -> Any:
    """max_i |c_i| over the last axis, keeping it (NaN propagates); torch's norm needs no temporary |c|."""
    if _is_tensor(c):
        return sys.modules["torch"].linalg.vector_norm(c, ord=math.inf, dim=-1, keepdim=True)
    return np.abs(c).max(axis=-1, keepdims=True)


def _mean_square(z: Any) -> Any:
    """mean_i z_i^2 over the last axis, keeping it, without a temporary z * z."""
    G = z.shape[-1]
    if _is_tensor(z):
        return sys.modules["torch"].linalg.vector_norm(z, ord=2, dim=-1, keepdim=True) ** 2 / G
    return np.einsum("...i,...i->...", z, z)[..., None] / G


def _kernel(r: Any, std: str, eps: float) -> tuple[Any, Any, Any, Any]:
    """Shared kernel over the last axis: (c, z, denom, m) with c = r - mean, A = z / denom and c = z * m.

    Subtracting the group's first reward before the mean makes a group of equal rewards centre to exact zeros
    (a plain mean of eight 0.35s is not exactly 0.35 in floating point). The std is computed on the centred
    rewards divided by their largest magnitude m, so tiny spreads neither underflow nor give 0/0. For a group
    without signal m = 0, z = 0 and denom = 1, so A = 0 exactly. For std="none", z and denom are None.
    """
    xp = _xp(r)
    G = r.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):  # bad input is reported just below, not warned about
        c = r - r[..., :1]  # (..., G) shifted: equal rewards -> exact zeros
        s = _max_abs(c)  # (..., 1) the spread's scale, 0 iff no signal
    if not bool(xp.isfinite(s).all()):  # NaN and inf propagate into s: one check per group, not per reward
        _as_rewards(r)  # raises for NaN or infinite rewards
        raise ValueError("rewards are too large: their differences overflow the floating-point range")
    has_signal = s > 0  # (..., 1)
    s_safe = xp.where(has_signal, s, 1.0)
    # r_i - mean(r) = s * (y_i - mean(y)) with y = c / s in [-1, 1]: centred at the spread's own scale, so that a
    # spread near the smallest float still sums to zero (the mean of [0, 5e-324] rounds to 0)
    c /= s_safe  # y (in place: c is our own copy)
    c -= c.mean(axis=-1, keepdims=True)  # y - mean(y)
    my = _max_abs(c)  # (..., 1) >= 1/2 where there is signal: y holds 0 and a value of magnitude 1
    m = my * s  # largest |r_i - mean|; 0 where there is no signal (or where it is below the smallest float)
    if std == "none":
        c *= s_safe  # r_i - mean(r)
        return c, None, None, m
    z = c / xp.where(has_signal, my, 1.0)  # (..., G) in [-1, 1]
    # std(r) = m * sqrt(mean(z^2)) with 1/G;  the sample std has 1/(G-1), i.e. an extra factor sqrt(G/(G-1))
    k = math.sqrt(G / (G - 1)) if std == "sample" else 1.0
    rms = xp.sqrt(_mean_square(z))  # (..., 1)
    # A_i = (r_i - mean) / (std + eps) = z_i / (k * rms + eps / m); eps / m is infinite (A = 0) where m underflows
    with np.errstate(over="ignore", divide="ignore"):
        eps_over_m = eps / xp.where(m > 0, m, 1.0) if eps > 0 else 0.0 * m
        if eps > 0:
            eps_over_m = xp.where(m > 0, eps_over_m, math.inf)
    denom = xp.where(has_signal, k * rms + eps_over_m, 1.0)  # (..., 1)
    return c, z, denom, m


def grpo_advantages(rewards: Any, std: StdMode = "population", eps: float = 0.0) -> Any:
    """Group-relative advantages over the last axis of ``rewards`` (shape (..., G), G >= 2).

        A_i = (r_i - mean(r)) / (std(r) + eps)      std = sqrt(sum_j (r_j - mean)^2 / G)        ("population")
        A_i = (r_i - mean(r)) / (std_s(r) + eps)    std_s = sqrt(sum_j (r_j - mean)^2 / (G-1))  ("sample")
        A_i =  r_i - mean(r)                                                                    ("none", eps unused)

    A group whose rewards are all equal gets exact zeros in every mode, whatever eps (also eps = 0).
    Returns a numpy array for array-like input (floating dtypes kept, integers and bools as float64) and a
    tensor on the input's device for a tensor. Raises ValueError for an unknown mode, eps < 0, G < 2, NaN or
    infinite rewards.

    >>> grpo_advantages([1, 0, 0, 1, 1, 0, 0, 0]).round(2)
    array([ 1.29, -0.77, -0.77,  1.29,  1.29, -0.77, -0.77, -0.77])
    """
    _check_std(std)
    _check_eps(eps)
    r = _as_rewards(rewards, check_finite=False)
    c, z, denom, _ = _kernel(r, std, float(eps))
    if std == "none":
        return c  # (..., G)
    z /= denom  # (..., G) in place: z is a fresh array
    return z


def advantage_scale(rewards: Any, std: StdMode = "population", eps: float = 0.0) -> Any:
    """The factor s with A_i = s * (r_i - mean(r)) for each group: shape (...) for rewards of shape (..., G).

        s = 1 / (std(r) + eps)   ("population" / "sample"),   s = 1   ("none"),   s = 0 for an all-equal group

    The last is this module's convention: every r_i - mean(r) is 0 there, so the advantages are 0 whatever s is,
    and with eps = 0 the scale 1 / (0 + 0) is undefined (implementations add a small eps to the std).

    This is how many times the advantages exceed the centred rewards: for nearly equal rewards (a tiny std) it
    runs into the thousands, and eps caps it at 1 / eps.
    """
    _check_std(std)
    _check_eps(eps)
    r = _as_rewards(rewards, check_finite=False)
    xp = _xp(r)
    _, _, denom, m = _kernel(r, std, float(eps))
    has_signal = m > 0
    if std == "none":
        s = xp.where(has_signal, xp.ones_like(m), 0.0)
    else:
        s = xp.where(has_signal, 1.0 / xp.where(has_signal, m * denom, 1.0), 0.0)  # 1 / (std + eps)
    return s[..., 0]


def mode_factor(rewards: Any, to: StdMode, from_: StdMode = "population", eps: float = 0.0) -> Any:
    """By which factor switching the std mode from ``from_`` to ``to`` multiplies every advantage of a group.

        factor = s_to / s_from,  e.g. sample / population = sqrt((G-1)/G) at eps = 0  and  none / population = std + eps

    One factor per group (shape (...)): within one group the mode changes only the scale. Across a batch the
    sample/population factor is the same for every group of size G (at eps = 0), but none/population is each group's own
    std + eps, so dropping the std re-weights the groups against each other (Liu et al. 2025, Dr. GRPO). A group
    without signal has zero advantages in every mode, and its factor is reported as 1.
    """
    s_to = advantage_scale(rewards, to, eps)
    s_from = advantage_scale(rewards, from_, eps)
    xp = _xp(s_to)
    ok = s_from > 0
    return xp.where(ok, s_to / xp.where(ok, s_from, 1.0), 1.0)


def batch_normalised_advantages(rewards: Any, std: StdMode = "population", eps: float = 0.0) -> Any:
    """The common mistake: normalise over the whole batch of groups instead of within each group.

        A_bi = (r_bi - mean_{b,j}(r_bj)) / (std_{b,j}(r_bj) + eps)      over the last two axes (..., B, G)

    An easy prompt whose answers are all correct then gets positive advantages (and a hard, all-wrong one
    negative), although comparing its answers with each other says nothing; and the advantages of one group no
    longer sum to zero. Contrast with :func:`grpo_advantages`, which normalises each row on its own.
    """
    _check_std(std)
    _check_eps(eps)
    r = _as_rewards(rewards, min_ndim=2)
    flat = r.reshape(*r.shape[:-2], r.shape[-2] * r.shape[-1])  # (..., B*G)
    return grpo_advantages(flat, std=std, eps=eps).reshape(r.shape)  # (..., B, G)


def textbook_advantages(rewards: Any, eps: float = 0.0) -> np.ndarray:
    """The one-line formula (r - mean) / (std + eps) in float32 with plain left-to-right sums, without our guards.

    Kept only to show on the page what goes wrong with it: eight rewards all equal to 0.35 should give zero
    advantages, but the float32 mean differs from 0.35 by one rounding step, the std of that residue is about
    3e-8, and with eps = 0 every answer gets advantage +1.0 (a signal made of rounding error); with three equal
    rewards the residue is exactly 0 and the result is 0/0 = NaN. With eps = 1e-4 the residue is divided by
    1e-4 instead and stays small. This function may return NaN on purpose; use :func:`grpo_advantages` for
    real work.
    """
    _check_eps(eps)
    r = _as_rewards(rewards).astype(np.float32)
    G = np.float32(r.shape[-1])
    mean = np.add.accumulate(r, axis=-1)[..., -1:] / G  # (..., 1) a plain running sum
    c = r - mean  # (..., G)
    sd = np.sqrt(np.add.accumulate(c * c, axis=-1)[..., -1:] / G)  # (..., 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return c / (sd + np.float32(eps))


def flip_reward(rewards: Any, i: int) -> np.ndarray:
    """A copy of one group's rewards with answer ``i`` flipped: r_i -> 1 - r_i (1 <-> 0 for checker rewards).

    Flipping twice gives the original back, also for real-valued rewards.
    """
    r = _as_rewards(rewards)
    if r.ndim != 1:
        raise ValueError(f"flip_reward takes one group (1 axis); got shape {tuple(r.shape)}")
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < r.shape[0]:
        raise ValueError(f"answer index must be an integer in 0..{r.shape[0] - 1}; got {i!r}")
    out = np.array(r, dtype=np.float64)
    out[i] = 1.0 - out[i]
    return out


# ----------------------------------------------------------------------------------------------------------------
# one group's readouts


@dataclass(frozen=True)
class GroupStats:
    """Readouts of one group: mean, both stds, the number of correct answers and whether there is any signal."""

    G: int
    mean: float
    std_population: float
    std_sample: float
    is_binary: bool  # every reward is 0 or 1
    n_correct: int | None  # number of rewards equal to 1, for checker (0/1) rewards; else None
    success_rate: float | None  # mean reward when all rewards lie in [0, 1]; else None
    has_signal: bool  # not all rewards equal


def group_stats(rewards: Any) -> GroupStats:
    """Readouts for one group (a 1-D list or array of G rewards).

        mean = sum_i r_i / G,   std_population = sqrt(sum_i (r_i - mean)^2 / G),   std_sample = std_pop sqrt(G/(G-1))

    For 0/1 rewards with mean rbar, std_population = sqrt(rbar (1 - rbar)).
    """
    r = _as_rewards(rewards)
    if _is_tensor(r):
        r = r.detach().cpu().numpy()
    r = np.asarray(r, dtype=np.float64)
    if r.ndim != 1:
        raise ValueError(f"group_stats takes one group (1 axis); got shape {r.shape}")
    G = r.shape[0]
    _, z, _, m = _kernel(r, "population", 0.0)
    mean = float(r[0] + (r - r[0]).mean())
    sd = float(m[0] * np.sqrt((z * z).mean()))
    is_binary = bool(np.all((r == 0) | (r == 1)))
    in_unit = bool(np.all((r >= 0) & (r <= 1)))
    return GroupStats(
        G=G,
        mean=mean,
        std_population=sd,
        std_sample=sd * math.sqrt(G / (G - 1)),
        is_binary=is_binary,
        n_correct=int(np.sum(r == 1)) if is_binary else None,
        success_rate=mean if in_unit else None,
        has_signal=bool(m[0] > 0),
    )


# ----------------------------------------------------------------------------------------------------------------
# difficulty: how often a group carries signal, and how large its advantages are


def _check_p(p: Any) -> np.ndarray:
    try:
        p = np.asarray(p, dtype=np.float64)
    except (ValueError, TypeError):
        raise ValueError(f"p must be a number or an array of numbers; got {p!r}") from None
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p must be a probability in [0, 1]")
    return p


def _check_G(G: Any, minimum: int = 1) -> np.ndarray:
    try:
        G = np.asarray(G, dtype=np.float64)
    except (ValueError, TypeError):
        raise ValueError(f"G must be an integer or an array of integers; got {G!r}") from None
    if not np.all(np.isfinite(G)) or np.any(G != np.round(G)) or np.any(G < minimum):
        raise ValueError(f"G must be an integer >= {minimum}")
    return G


def group_signal_probability(p: Any, G: Any) -> Any:
    """Probability that a group of G answers to a prompt solved with probability p has any signal.

        P(signal) = 1 - p^G - (1 - p)^G       (not all correct, not all wrong)

    Computed as -expm1(G log1p(-m)) - m^G with m = min(p, 1 - p) (the formula is symmetric in p and 1 - p), so
    it stays accurate for large G and for p near 0 or 1. ``p`` and ``G`` broadcast; a float for scalars.
    """
    p = _check_p(p)
    G = _check_G(G)
    m = np.minimum(p, 1.0 - p)
    # 1 - (1-m)^G - m^G
    out = -np.expm1(G * np.log1p(-m)) - np.power(m, G)
    out = np.where(G == 1, 0.0, np.clip(out, 0.0, 1.0))  # one answer never disagrees with itself
    return float(out) if out.ndim == 0 else out


def expected_abs_advantage(p: Any, G: int, std: StdMode = "population", eps: float = 0.0) -> Any:
    """Expected mean |A_i| of a group of G checker (0/1) rewards for a prompt solved with probability p.

    The number of correct answers k is Binomial(G, p). With q = k/G, every answer's |r_i - mean| averages to
    2 q (1 - q), and the population std is sqrt(q (1 - q)), so

        E|A| = sum_k C(G,k) p^k (1-p)^(G-k) * 2 q (1-q) / (sigma_q + eps),   sigma_q = sqrt(q(1-q)) [* sqrt(G/(G-1))]

    with the denominator 1 for "none" (then E|A| = 2 p (1-p) (G-1)/G exactly). All-correct and all-wrong groups
    (k = 0 or G) add 0. The binomial weights are computed in log space. ``p`` any shape, ``G`` one integer.
    """
    _check_std(std)
    _check_eps(eps)
    p = _check_p(p)
    G_arr = _check_G(G, minimum=2)
    if G_arr.ndim != 0:
        raise ValueError("expected_abs_advantage takes one group size G")
    G = int(G_arr)
    k = np.arange(G + 1, dtype=np.float64)  # (G+1,)
    q = k / G
    mean_abs_c = 2.0 * q * (1.0 - q)  # (G+1,) mean |r_i - mean| of a group with k correct
    if std == "none":
        size = mean_abs_c
    else:
        sigma = np.sqrt(q * (1.0 - q)) * (math.sqrt(G / (G - 1)) if std == "sample" else 1.0)
        denom = sigma + eps
        with np.errstate(divide="ignore", invalid="ignore"):
            size = np.where(denom > 0, mean_abs_c / np.where(denom > 0, denom, 1.0), 0.0)  # (G+1,)
    # log C(G, k) from a table of log factorials
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, G + 1, dtype=np.float64)))])
    log_comb = log_fact[G] - log_fact[k.astype(int)] - log_fact[(G - k).astype(int)]  # (G+1,)
    pe = p[..., None]  # (..., 1)
    with np.errstate(divide="ignore"):
        # k log p + (G - k) log(1 - p), with 0 * log 0 = 0
        log_p = np.where(k > 0, k * np.log(np.where(pe > 0, pe, 1.0)), 0.0)
        log_p = np.where((k > 0) & (pe == 0), -np.inf, log_p)
        log_q = np.where(k < G, (G - k) * np.log1p(-np.where(pe < 1, pe, 0.0)), 0.0)
        log_q = np.where((k < G) & (pe == 1), -np.inf, log_q)
    pmf = np.exp(log_comb + log_p + log_q)  # (..., G+1)
    out = (pmf * size).sum(axis=-1)  # (...,)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------------------------------------------
# what the page shows, in one call each


@dataclass(frozen=True)
class GroupView:
    """One group as the page shows it in one mode: its advantages, readouts, and the scale of every mode."""

    rewards: np.ndarray  # (G,)
    advantages: np.ndarray  # (G,) in the chosen mode
    by_mode: dict[str, np.ndarray]  # mode -> (G,) advantages in each of the three modes
    stats: GroupStats
    std: StdMode
    eps: float
    scale: float  # A_i = scale * (r_i - mean): 1 / (std + eps), 1 for "none", 0 without signal
    denominator: float | None  # std + eps that the centred rewards are divided by; None for "none" or no signal
    factors: dict[str, float]  # mode -> factor that mode puts on every advantage, relative to "population"
    y_max: float  # largest |A_i| over the three modes (0 without signal): a y range shared by the modes

    @property
    def y_range(self) -> float | None:
        """Half-height of a y axis shared by the three modes, with headroom for bar labels (None: autoscale)."""
        return 1.18 * self.y_max if self.y_max > 0 else None


def group_view(rewards: Any, std: StdMode = "population", eps: float = 0.0) -> GroupView:
    """Everything the page needs about one group (a 1-D list of G rewards), for the mode ``std`` and ``eps``.

        A_i = scale * (r_i - mean),   scale = 1 / (std + eps)  (1 for "none"),
        factors[m] = scale_m / scale_population            (sample: sqrt((G-1)/G) at eps = 0; none: std + eps)

    ``y_max`` is max_i |A_i| over all three modes, so a figure with that y range shows a mode switch as bars
    that grow or shrink, not as a relabelled axis.
    """
    _check_std(std)
    _check_eps(eps)
    stats = group_stats(rewards)
    r = np.asarray(_as_rewards(rewards), dtype=np.float64)  # (G,)
    by_mode = {m: grpo_advantages(r, m, eps) for m in STD_MODES}  # mode -> (G,)
    factors = {m: float(mode_factor(r, m, "population", eps)) for m in STD_MODES}
    scale = float(advantage_scale(r, std, eps))
    return GroupView(
        rewards=r,
        advantages=by_mode[std],
        by_mode=by_mode,
        stats=stats,
        std=std,
        eps=float(eps),
        scale=scale,
        denominator=1.0 / scale if std != "none" and scale > 0 else None,
        factors=factors,
        y_max=float(max(np.max(np.abs(a)) for a in by_mode.values())),
    )


@dataclass(frozen=True)
class DifficultyCurves:
    """The difficulty figure's curves on a grid of success rates p, for one group size G."""

    G: int
    p: np.ndarray  # (n,)
    signal_probability: np.ndarray  # (n,) 1 - p^G - (1-p)^G
    expected_abs_advantage: dict[str, np.ndarray]  # mode -> (n,) E mean|A_i| for 0/1 rewards


def difficulty_curves(G: int, eps: float = 0.0, n: int = 201) -> DifficultyCurves:
    """P(a group has signal) and the expected mean |A_i| in every mode against p in [0, 1] (``n`` points).

    P(signal) = 1 - p^G - (1-p)^G,      E mean|A| = sum_k Binomial(k; G, p) * mean|A| of a group with k correct
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2; got {n!r}")
    p = np.linspace(0.0, 1.0, int(n))  # (n,)
    return DifficultyCurves(
        G=int(_check_G(G, minimum=2)),
        p=p,
        signal_probability=group_signal_probability(p, G),
        expected_abs_advantage={m: expected_abs_advantage(p, G, m, eps) for m in STD_MODES},
    )


def contrast_batch(rewards: Any) -> np.ndarray:
    """A batch of three prompts for the batch-normalisation mistake: this group, an easy and a hard prompt.

    Shape (3, G): the given rewards, then G correct answers (all 1), then G wrong ones (all 0).
    """
    r = np.asarray(_as_rewards(rewards), dtype=np.float64)
    if r.ndim != 1:
        raise ValueError(f"contrast_batch takes one group (1 axis); got shape {r.shape}")
    return np.stack([r, np.ones_like(r), np.zeros_like(r)])  # (3, G)


# ----------------------------------------------------------------------------------------------------------------
# presets


@dataclass(frozen=True)
class GroupPreset:
    """A named group of rewards with the settings to show it with."""

    name: str
    rewards: tuple[float, ...]
    std: StdMode = "population"
    eps: float = 0.0


PRESETS: dict[str, GroupPreset] = {
    p.name: p
    for p in (
        # worked example C: mean 0.375, std 0.484, A = +1.29 (correct) and -0.77 (wrong)
        GroupPreset("Worked example C (3 of 8 correct)", (1, 0, 0, 1, 1, 0, 0, 0)),
        # check-yourself 4: a group of 4, all correct -> no signal
        GroupPreset("All correct (no signal)", (1, 1, 1, 1)),
        # one correct answer of 16: the rare success gets sqrt(15) = +3.87, each failure -0.26
        GroupPreset("One correct of 16", (1,) + (0,) * 15),
        # reward-model scores that differ by 1e-3: std 3.3e-4, advantages ~3000 times the differences
        GroupPreset("Nearly equal scores (tiny std)", (0.5,) * 7 + (0.501,), eps=0.0),
    )
}


# ----------------------------------------------------------------------------------------------------------------
# how the per-token losses of a batch of answers are aggregated (the length normalisation)

Aggregation = Literal["sequence-mean", "token-mean", "constant"]
AGGREGATIONS: tuple[str, ...] = ("sequence-mean", "token-mean", "constant")
AGGREGATION_LABELS: dict[str, str] = {  # short enough for table headers
    "sequence-mean": "GRPO, 1/(G·|o_i|) per token",
    "token-mean": "DAPO, 1/Σ|o_j| per token",
    "constant": "Dr. GRPO, 1/(G·L_max) per token",
}


def token_loss_weights(lengths: Any, aggregation: Aggregation, max_length: float | None = None) -> np.ndarray:
    """The weight each token of answer i carries in the loss, for answers of ``lengths`` |o_i| (shape (G,)).

    The loss is sum_i sum_t w_i · l_{i,t} with the per-token terms l_{i,t} (advantage times clipped ratio):

        "sequence-mean"  w_i = 1 / (G · |o_i|)      GRPO (Shao et al. 2024): every answer totals 1/G
        "token-mean"     w_i = 1 / sum_j |o_j|      DAPO (Yu et al. 2025): every token counts the same
        "constant"       w_i = 1 / (G · L_max)      Dr. GRPO (Liu et al. 2025): L_max = ``max_length``, e.g. the
                                                    generation budget (default: the longest answer)

    ``lengths`` are the answers of one batch (one group, or several groups flattened); all must be >= 1.
    """
    L = np.asarray(lengths, dtype=float)
    if L.ndim != 1 or L.size == 0 or not np.all(np.isfinite(L)) or np.any(L < 1):
        raise ValueError(f"lengths must be a flat, non-empty list of token counts >= 1, got {lengths!r}")
    G = L.size
    if aggregation == "sequence-mean":
        return 1.0 / (G * L)
    if aggregation == "token-mean":
        return np.full(G, 1.0 / L.sum())
    if aggregation == "constant":
        L_max = float(L.max()) if max_length is None else float(max_length)
        if not (math.isfinite(L_max) and L_max >= L.max()):
            raise ValueError(f"max_length must be at least the longest answer ({L.max():g}), got {max_length!r}")
        return np.full(G, 1.0 / (G * L_max))
    raise ValueError(f"unknown aggregation {aggregation!r}; expected one of {AGGREGATIONS}")


def answer_loss_weights(lengths: Any, aggregation: Aggregation, max_length: float | None = None) -> np.ndarray:
    """The total weight of each answer in the loss: |o_i| · w_i (sums to 1 for the two means, <= 1 for constant)."""
    return np.asarray(lengths, dtype=float) * token_loss_weights(lengths, aggregation, max_length)


def length_weight_columns(lengths: Any, max_length: float | None = None) -> dict[str, np.ndarray]:
    """One row per answer: its length and its total weight in the loss under each aggregation (for a table)."""
    L = np.asarray(lengths, dtype=float)
    return {"tokens |o_i|": L.astype(int)} | {
        AGGREGATION_LABELS[a]: answer_loss_weights(L, a, max_length) for a in AGGREGATIONS
    }
