"""DPO: the Bradley-Terry loss of one preference pair, with the reward model replaced by the policy itself.

Section 3.7 of the lesson. Inverting the optimal KL-regularised policy pi* ∝ pi_ref · exp(r / beta) writes the
reward through the policy, r(y) = beta · log(pi*(y) / pi_ref(y)) + beta · log Z. In the Bradley-Terry model only
the difference of two answers' rewards to the same prompt enters, so beta · log Z cancels. With the trained
policy pi_theta in place of pi*, a pair (winner y_w, loser y_l) gives

    r_hat(y)  = beta · (log pi_theta(y) - log pi_ref(y))          the implicit reward
    m         = r_hat(y_w) - r_hat(y_l)                           the margin
    L_DPO     = -log sigma(m) = log(1 + exp(-m))                   the loss (log 2 at pi_theta = pi_ref)
    dL/dlog pi_theta(y_w) = -beta · sigma(r_hat_l - r_hat_w),  dL/dlog pi_theta(y_l) = +beta · sigma(...)

sigma(r_hat_l - r_hat_w) = sigma(-m) is the gradient weight: large while the model still ranks the pair wrongly.
Pure numpy, vectorised: every argument broadcasts (a batch of pairs in one call); softplus in log-space.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

LOG2 = float(np.log(2.0))  # the loss at pi_theta = pi_ref (margin 0)


def _softplus(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """log(1 + exp(x)) without overflow."""
    return np.logaddexp(0.0, x)


def _sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """sigma(x) = 1 / (1 + exp(-x)) = exp(-softplus(-x)), exact in both tails."""
    return np.exp(-_softplus(-x))


def _as_logprob(x: ArrayLike, name: str) -> NDArray[np.float64]:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number (a sequence log-probability), got {x!r}") from None
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {x!r}")
    if np.any(a > 0):
        raise ValueError(f"{name} is a log-probability, so it must be <= 0, got {x!r}")
    return a


class DPOResult(NamedTuple):
    """The quantities of one DPO pair (or arrays of them, for a batch)."""

    loss: NDArray[np.float64] | float  # -log sigma(margin), nats
    reward_w: NDArray[np.float64] | float  # r_hat_w = beta · (log pi_theta(y_w) - log pi_ref(y_w))
    reward_l: NDArray[np.float64] | float  # r_hat_l = beta · (log pi_theta(y_l) - log pi_ref(y_l))
    margin: NDArray[np.float64] | float  # r_hat_w - r_hat_l
    weight: NDArray[np.float64] | float  # sigma(r_hat_l - r_hat_w), the gradient weight
    grad_logp_w: NDArray[np.float64] | float  # dL / d log pi_theta(y_w) = -beta · weight
    grad_logp_l: NDArray[np.float64] | float  # dL / d log pi_theta(y_l) = +beta · weight
    both_fell: bool | NDArray[np.bool_]  # both log-probabilities fell below the reference, yet the margin is > 0


def dpo_loss(
    logp_w: ArrayLike, logp_l: ArrayLike, ref_logp_w: ArrayLike, ref_logp_l: ArrayLike, beta: ArrayLike
) -> DPOResult:
    """The DPO loss of preference pairs from their four sequence log-probabilities and beta.

    logp_w, logp_l: log pi_theta of the winner and the loser (<= 0); ref_logp_w, ref_logp_l: the same under the
    frozen reference. All arguments broadcast; scalars in give floats out. Raises ValueError for non-finite or
    positive log-probabilities and for beta <= 0.

        L_DPO = -log sigma( beta · log(pi_theta(y_w) / pi_ref(y_w)) - beta · log(pi_theta(y_l) / pi_ref(y_l)) )
    """
    logp_w = _as_logprob(logp_w, "logp_w")
    logp_l = _as_logprob(logp_l, "logp_l")
    ref_logp_w = _as_logprob(ref_logp_w, "ref_logp_w")
    ref_logp_l = _as_logprob(ref_logp_l, "ref_logp_l")
    try:
        beta = np.asarray(beta, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"beta must be a positive number, got {beta!r}") from None
    if not np.all(np.isfinite(beta)) or np.any(beta <= 0):
        raise ValueError(f"beta must be positive and finite, got {beta!r}")

    # r_hat(y) = beta · (log pi_theta(y) - log pi_ref(y))
    reward_w = beta * (logp_w - ref_logp_w)  # (...)
    reward_l = beta * (logp_l - ref_logp_l)  # (...)
    # m = r_hat_w - r_hat_l
    margin = reward_w - reward_l  # (...)
    # L = -log sigma(m) = softplus(-m)
    loss = _softplus(-margin)  # (...)
    # weight = sigma(r_hat_l - r_hat_w) = sigma(-m) = -dL/dm
    weight = _sigmoid(-margin)  # (...)
    grad_w = -beta * weight  # dL/dlog pi_theta(y_w)
    grad_l = beta * weight  # dL/dlog pi_theta(y_l)
    # likelihood displacement: the margin grew although both answers became less likely than under pi_ref
    both_fell = (logp_w < ref_logp_w) & (logp_l < ref_logp_l) & (margin > 0)

    out = DPOResult(loss, reward_w, reward_l, margin, weight, grad_w, grad_l, both_fell)
    if np.ndim(margin) == 0:
        return DPOResult(*(bool(v) if isinstance(v, np.bool_) else float(v) for v in out))
    return DPOResult(*(np.broadcast_to(v, margin.shape).copy() for v in out))


class DPOCurve(NamedTuple):
    """The loss -log sigma(m) and the gradient weight sigma(-m) over a range of margins, for the figure."""

    margin: NDArray[np.float64]  # (n,)
    loss: NDArray[np.float64]  # (n,)
    weight: NDArray[np.float64]  # (n,)


def dpo_curve(margin: float = 0.0, n: int = 401, half_width: float | None = None) -> DPOCurve:
    """-log sigma(m) and sigma(-m) on n margins centred on 0, wide enough to show ``margin`` (at least ±6)."""
    if n < 2:
        raise ValueError(f"a curve needs at least 2 points, got n = {n}")
    m0 = float(margin)
    if not np.isfinite(m0):
        raise ValueError(f"margin must be finite, got {margin!r}")
    half = max(6.0, 1.25 * abs(m0)) if half_width is None else float(half_width)
    if not (half > 0 and np.isfinite(half)):
        raise ValueError(f"half_width must be positive, got {half_width!r}")
    m = np.linspace(-half, half, n)  # (n,)
    return DPOCurve(m, _softplus(-m), _sigmoid(-m))


@dataclass(frozen=True)
class DPOPreset:
    """A preference pair of the page: four sequence log-probabilities and beta."""

    key: str
    label: str
    logp_w: float
    logp_l: float
    ref_logp_w: float
    ref_logp_l: float
    beta: float


DPO_PRESETS: dict[str, DPOPreset] = {
    p.key: p
    for p in (
        # worked example B: rewards 0.2 and -0.1, margin 0.3, loss 0.554, weight 0.426
        DPOPreset("worked_b", "Worked example B", -10.0, -15.0, -12.0, -14.0, 0.1),
        # the start of training: pi_theta = pi_ref, margin 0, loss log 2, weight 0.5
        DPOPreset("at_reference", "Start of training (pi = pi_ref)", -12.0, -14.0, -12.0, -14.0, 0.1),
        # likelihood displacement: the winner fell by 1 nat, the loser by 6; the margin is still +0.5
        DPOPreset("both_fell", "Both answers less likely", -13.0, -20.0, -12.0, -14.0, 0.1),
    )
}
