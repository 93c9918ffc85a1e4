"""Learning-rate schedules (warm-up + cosine, warm-up-stable-decay), a schedule-aware loss model, and mid-training.

Schedules (seed 002, A1.6): a linear warm-up to the peak over the first ``warmup`` steps, then

    cosine    eta(s) = eta_min + (eta_max - eta_min) · (1 + cos(pi · u)) / 2,    u = (s - warmup) / (steps - warmup)
    wsd       constant eta_max (stable), then a decay to eta_min over the last ``decay_steps`` steps, at progress
              u in [0, 1] of the decay:  linear  eta_max - (eta_max - eta_min) · u
                                         cosine  eta_min + (eta_max - eta_min) · (1 + cos(pi · u)) / 2
                                         1-sqrt  eta_min + (eta_max - eta_min) · (1 - sqrt(u))   (Hägele et al. 2024)
    constant  eta_max after the warm-up

Cosine is tied to the total step count fixed at step 0; WSD can branch a decay off its stable phase at any step.

The loss curve is a *model*, not data: the scaling law with learning-rate annealing of Tissue, Wang and Wang (2024,
"Scaling law with learning rate annealing", arXiv:2408.11029):

    L(s) = L0 + A · S1^(-alpha) - C · S2
    S1 = sum_{i<=s} eta_i                                  (the forward area: the area under the LR curve)
    S2 = sum_{i<=s} m_i,   m_i = lambda · m_{i-1} + (eta_{i-1} - eta_i)    (the annealing area, with momentum)

with eta measured relative to the peak here (eta_max = 1). The constants below are illustrative (chosen to give a
plausible curve over 10,000 steps, on which warm-up + cosine to 10% and WSD with a 20% decay end within 0.03 of
each other), not fitted to any run; lambda = 0.999 is the decay factor the paper uses. Which schedule ends lowest
in this model follows from these constants and is not a finding: Hägele et al. (2024, arXiv:2405.18392) measure a
cool-down of about 20% of the run matching cosine, and a 1-sqrt cool-down beating a linear one.

Also: the Kaplan issue (one cause among several, Chinchilla section 2; lesson section 3.3): a short run's loss read
off a long cosine schedule is too high, because at that step the long schedule has not annealed; and a data
mixture that moves to the best data during the decay (mid-training, seed 002 A9.3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Kind = Literal["cosine", "wsd", "constant"]
KINDS: tuple[str, ...] = ("cosine", "wsd", "constant")
DecayShape = Literal["linear", "cosine", "1-sqrt"]
DECAY_SHAPES: tuple[str, ...] = ("linear", "cosine", "1-sqrt")
MAX_STEPS = 1_000_000


def _whole(x: int | float, name: str, lo: int) -> int:
    if isinstance(x, bool) or not float(x).is_integer() or x < lo:
        raise ValueError(f"{name} must be a whole number >= {lo}, got {x!r}")
    return int(x)


def _decay(u: NDArray[np.float64], shape: str) -> NDArray[np.float64]:
    """Fraction of the way from eta_max to eta_min at progress u in [0, 1] (0 -> eta_max, 1 -> eta_min)."""
    if shape == "linear":
        return u
    if shape == "cosine":
        return (1.0 - np.cos(np.pi * u)) / 2.0
    if shape == "1-sqrt":  # lr = eta_min + (eta_max - eta_min)(1 - sqrt(u)): a fast drop, then a slow approach to
        return np.sqrt(u)  # the floor (Hägele et al. 2024; HF transformers' get_wsd_schedule(decay_type="1-sqrt"))
    raise ValueError(f"decay_shape must be one of {DECAY_SHAPES}, got {shape!r}")


def lr_schedule(
    kind: Kind,
    steps: int,
    peak_lr: float = 1.0,
    warmup: int | None = None,
    final_lr_frac: float = 0.1,
    decay_steps: int | None = None,
    decay_shape: DecayShape = "linear",
) -> NDArray[np.float64]:
    """The learning rate at steps 1..steps, shape (steps,).

    warmup: steps of linear warm-up from peak_lr/warmup to peak_lr (default 1% of the run, at least 1).
    final_lr_frac: eta_min / eta_max at the end of cosine and WSD. decay_steps (WSD only): length of the decay
    phase (default 20% of the run); decay_shape: its shape. Raises ValueError for an unknown kind, steps < 2,
    peak_lr <= 0, final_lr_frac outside [0, 1], or a warm-up / decay that does not fit in the run.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    steps = _whole(steps, "steps", 2)
    if steps > MAX_STEPS:
        raise ValueError(f"steps must be at most {MAX_STEPS:,}")
    if not (math.isfinite(peak_lr) and peak_lr > 0):
        raise ValueError(f"peak_lr must be a positive number, got {peak_lr!r}")
    if not 0.0 <= final_lr_frac <= 1.0:
        raise ValueError(f"final_lr_frac must lie in [0, 1], got {final_lr_frac!r}")
    W = max(1, round(0.01 * steps)) if warmup is None else _whole(warmup, "warmup", 0)
    if W >= steps:
        raise ValueError(f"warmup ({W}) must be shorter than the run ({steps} steps)")
    s = np.arange(1, steps + 1, dtype=np.float64)  # (steps,)
    eta_min = final_lr_frac * peak_lr
    # warm-up: eta = eta_max · s / W for s <= W
    warm = peak_lr * s / max(W, 1)
    if kind == "constant":
        after = np.full_like(s, peak_lr)
    elif kind == "cosine":
        u = np.clip((s - W) / (steps - W), 0.0, 1.0)
        after = peak_lr - (peak_lr - eta_min) * _decay(u, "cosine")
    else:
        D = max(1, round(0.2 * steps)) if decay_steps is None else _whole(decay_steps, "decay_steps", 1)
        if D > steps - W:
            raise ValueError(f"decay_steps ({D}) must fit after the warm-up ({steps - W} steps left)")
        start = steps - D  # the last stable step
        u = np.clip((s - start) / D, 0.0, 1.0)
        after = peak_lr - (peak_lr - eta_min) * _decay(u, decay_shape)
    return np.where(s <= W, warm, after)


def wsd_branch(
    steps: int, branch_step: int, decay_steps: int, peak_lr: float = 1.0, warmup: int | None = None, **kw
) -> NDArray[np.float64]:
    """A WSD run that leaves its stable phase at ``branch_step`` and decays over ``decay_steps`` (length
    branch_step + decay_steps). The shared stable prefix is identical for every branch: one long run, many ends."""
    branch_step = _whole(branch_step, "branch_step", 1)
    decay_steps = _whole(decay_steps, "decay_steps", 1)
    if branch_step + decay_steps > _whole(steps, "steps", 2):
        raise ValueError("the branch (branch_step + decay_steps) must end within the run")
    W = max(1, round(0.01 * steps)) if warmup is None else warmup
    if branch_step <= W:
        raise ValueError(f"branch_step must come after the warm-up ({W} steps)")
    return lr_schedule("wsd", branch_step + decay_steps, peak_lr, W, decay_steps=decay_steps, **kw)


# --------------------------------------------------------------------------------------------------------------
# the annealing loss model


@dataclass(frozen=True)
class AnnealingLossModel:
    """L(s) = L0 + A · S1^(-alpha) - C · S2 (Tissue et al. 2024); illustrative constants, eta relative to the peak."""

    L0: float = 2.0
    A: float = 8.0
    alpha: float = 0.5
    C: float = 1.5e-4
    lam: float = 0.999  # the momentum decay factor of the annealing area

    def areas(self, lr: Sequence[float] | NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(S1, S2) after each step for a schedule lr (eta_1..eta_s), shape (s,) each."""
        eta = np.asarray(lr, dtype=np.float64)
        if eta.ndim != 1 or eta.size == 0 or not np.all(np.isfinite(eta)) or np.any(eta < 0):
            raise ValueError("lr must be a non-empty list of finite learning rates >= 0")
        # S1 = sum_{i<=s} eta_i
        S1 = np.cumsum(eta)
        # m_i = lambda m_{i-1} + (eta_{i-1} - eta_i), with eta_0 = eta_1 (no annealing before the first step);
        # the warm-up's rises make m negative, as in the paper's definition
        d = np.concatenate([[0.0], eta[:-1] - eta[1:]])  # (s,)
        m = np.empty_like(d)
        acc = 0.0
        for i, di in enumerate(d):
            acc = self.lam * acc + di
            m[i] = acc
        S2 = np.cumsum(m)
        return S1, S2

    def loss(self, lr: Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
        """The modelled loss after each step of the schedule, shape (s,)."""
        S1, S2 = self.areas(lr)
        # L(s) = L0 + A S1^-alpha - C S2
        return self.L0 + self.A * np.power(np.maximum(S1, 1e-12), -self.alpha) - self.C * S2


DEFAULT_LOSS_MODEL = AnnealingLossModel()


@dataclass(frozen=True)
class KaplanGap:
    """Losses at several run lengths: read off one long cosine run vs a run whose cosine ends at that length."""

    lengths: NDArray[np.int64]
    read_from_long: NDArray[np.float64]
    own_schedule: NDArray[np.float64]

    @property
    def gap(self) -> NDArray[np.float64]:
        """How much too high the read-off loss is (>= 0 when annealing helps)."""
        return self.read_from_long - self.own_schedule


def kaplan_gap(
    long_steps: int,
    lengths: Sequence[int],
    model: AnnealingLossModel = DEFAULT_LOSS_MODEL,
    final_lr_frac: float = 0.1,
    warmup: int | None = None,
) -> KaplanGap:
    """For each short length n: the long cosine run's loss at step n against a full cosine run of n steps."""
    long_steps = _whole(long_steps, "long_steps", 2)
    n = np.asarray([_whole(x, "length", 2) for x in lengths], dtype=np.int64)
    if n.size == 0 or np.any(n > long_steps):
        raise ValueError("lengths must be non-empty and at most long_steps")
    W = max(1, round(0.01 * long_steps)) if warmup is None else warmup
    long_loss = model.loss(lr_schedule("cosine", long_steps, warmup=W, final_lr_frac=final_lr_frac))
    own = np.array(
        [
            model.loss(lr_schedule("cosine", int(k), warmup=min(W, int(k) - 1), final_lr_frac=final_lr_frac))[-1]
            for k in n
        ]
    )
    return KaplanGap(n, long_loss[n - 1], own)


# --------------------------------------------------------------------------------------------------------------
# mid-training: the data mixture over the run


@dataclass(frozen=True)
class Mixture:
    """Data-source weights over the run: weights (steps, K) sum to 1 at every step."""

    sources: tuple[str, ...]
    weights: NDArray[np.float64]


MIX_SOURCES: tuple[str, ...] = ("web", "code", "math", "curated (high quality)")
MIX_PRETRAIN: tuple[float, ...] = (0.80, 0.12, 0.05, 0.03)
MIX_ANNEAL: tuple[float, ...] = (0.35, 0.20, 0.15, 0.30)


def data_mixture(
    steps: int,
    decay_start: int,
    pretrain: Sequence[float] = MIX_PRETRAIN,
    anneal: Sequence[float] = MIX_ANNEAL,
    sources: Sequence[str] = MIX_SOURCES,
    ramp_steps: int | None = None,
) -> Mixture:
    """The mixture moves from ``pretrain`` to ``anneal`` weights over ``ramp_steps`` (default 10% of the decay)
    from ``decay_start`` on: the best data last (an illustration of mid-training, not any lab's recipe)."""
    steps = _whole(steps, "steps", 2)
    decay_start = _whole(decay_start, "decay_start", 0)
    if decay_start >= steps:
        raise ValueError("decay_start must fall inside the run")
    a = np.asarray(pretrain, dtype=np.float64)
    b = np.asarray(anneal, dtype=np.float64)
    if (
        a.shape != b.shape
        or a.shape != (len(sources),)
        or np.any(a < 0)
        or np.any(b < 0)
        or a.sum() <= 0
        or b.sum() <= 0
    ):
        raise ValueError("pretrain and anneal need one non-negative weight per source (not all zero)")
    a, b = a / a.sum(), b / b.sum()
    R = max(1, round(0.1 * (steps - decay_start))) if ramp_steps is None else _whole(ramp_steps, "ramp_steps", 1)
    s = np.arange(1, steps + 1, dtype=np.float64)
    f = np.clip((s - decay_start) / R, 0.0, 1.0)[:, None]  # (steps, 1) 0 before the decay, 1 after the ramp
    return Mixture(tuple(sources), (1.0 - f) * a + f * b)
