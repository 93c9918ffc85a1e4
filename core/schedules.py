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
# WSD runs that differ only in the length of their decay


@dataclass(frozen=True)
class WsdSweep:
    """WSD runs of one length, one per decay length, sampled at some of their steps (more of them in the decay).

    Row r: ``decay_steps[r]``, the 1-based steps ``at[r]`` it is sampled at (increasing, the last step included) and
    the learning rate ``lr[r]`` and modelled loss ``loss[r]`` there."""

    steps: int
    decay_shape: str
    decay_steps: tuple[int, ...]
    at: tuple[NDArray[np.int64], ...]
    lr: tuple[NDArray[np.float64], ...]
    loss: tuple[NDArray[np.float64], ...]


def _momentum(d: NDArray[np.float64], m0: NDArray[np.float64], lam: float) -> NDArray[np.float64]:
    """m_k = lam · m_(k-1) + d_k along each row of d (R, K), from m_0 = m0 (R,): the recursion of
    :meth:`AnnealingLossModel.areas`, vectorised. Within a block of steps m is lam^j times a cumulative sum of
    d_i · lam^-i, the block short enough that lam^-i stays below 10^6 (256 steps for lam = 0.999: below 1.3), so
    nothing overflows or cancels; the blocks are chained by their last values."""
    block = 256 if lam >= 1.0 else 1 if lam <= 0.0 else max(1, min(256, int(13.8 / -math.log(lam))))
    R, K = d.shape
    nb = -(-K // block)
    padded = np.zeros((R, nb * block))
    padded[:, :K] = d
    x = padded.reshape(R, nb, block)
    j = np.arange(block, dtype=np.float64)
    local = lam**j * np.cumsum(x * lam**-j, axis=2)  # (R, nb, block): each block's m from a start of 0
    carry = np.empty((R, nb))  # m just before each block
    c = np.asarray(m0, dtype=np.float64)
    decay = lam**block
    for b in range(nb):
        carry[:, b] = c
        c = decay * c + local[:, b, -1]
    m = local + lam ** (j + 1) * carry[:, :, None]
    return m.reshape(R, nb * block)[:, :K]


def _sample_steps(steps: int, warmup: int, start: int, points: tuple[int, int]) -> NDArray[np.int64]:
    """About points[0] steps spread over the whole run (those up to the decay's start kept), the warm-up's end and
    the decay's start, and about points[1] steps spread over the decay (its last step, the run's, included)."""
    spread = np.linspace(1, steps, min(steps, points[0])).round().astype(np.int64)
    decay = start + np.linspace(0, steps - start, min(steps - start, points[1]) + 1).round().astype(np.int64)
    return np.unique(np.concatenate([spread[spread < start], [1, max(warmup, 1), start], decay]))


def wsd_sweep(
    steps: int,
    decay_steps: Sequence[int],
    *,
    warmup: int | None = None,
    final_lr_frac: float = 0.1,
    decay_shape: DecayShape = "linear",
    model: AnnealingLossModel | None = None,
    points: tuple[int, int] = (80, 100),
) -> WsdSweep:
    """The learning rate and the modelled loss of ``lr_schedule("wsd", steps, ...)`` for each of ``decay_steps``,
    all in one pass, sampled at about points[0] steps before each decay and points[1] in it (``_sample_steps``).

    Every WSD run is the constant schedule up to the start of its decay, so only the decays are computed: S1 and S2
    go on from the constant run's at that step, and the annealing momentum m from its value there. The decays are
    rows of arrays (blocks of up to eight rows of about one length, a million numbers at most), the momentum's
    recursion vectorised along them (:func:`_momentum`), S2 from m in closed form, the loss only at the samples; a
    linear decay (a constant drop per step) has eta, S1 and m in closed form too, at the samples alone. The same
    numbers as ``model.loss(lr_schedule("wsd", ...))`` to rounding error.
    """
    model = DEFAULT_LOSS_MODEL if model is None else model
    steps = _whole(steps, "steps", 2)
    const = lr_schedule("constant", steps, warmup=warmup)  # checks steps and the warm-up
    W = max(1, round(0.01 * steps)) if warmup is None else int(warmup)
    Ds = [_whole(D, "decay_steps", 1) for D in decay_steps]
    if not Ds or max(Ds) > steps - max(W, 1):  # a decay starts after a step at the peak (step 1 at the earliest)
        raise ValueError(f"need decay lengths from 1 to {steps - max(W, 1)} (after the warm-up and a step at the peak)")
    if not 0.0 <= final_lr_frac <= 1.0:
        raise ValueError(f"final_lr_frac must lie in [0, 1], got {final_lr_frac!r}")
    _decay(np.zeros(1), decay_shape)  # checks the shape
    S1c, S2c = model.areas(const)
    loss_c = model.L0 + model.A * np.power(np.maximum(S1c, 1e-12), -model.alpha) - model.C * S2c
    m_c = np.diff(S2c, prepend=0.0)  # the constant run's momentum m after each step
    lam = model.lam
    found: dict[int, tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]] = {}

    def keep(D: int, s: NDArray[np.int64], eta: NDArray, area: NDArray, gained: NDArray) -> None:
        """Row D from the LR, S1 and S2 gained in the decay at its samples s (read where s is past its start)."""
        start = steps - D
        stable = s <= start
        loss = model.L0 + model.A * np.power(S1c[start - 1] + area, -model.alpha) - model.C * (S2c[start - 1] + gained)
        found[D] = (s, np.where(stable, const[s - 1], eta), np.where(stable, loss_c[s - 1], loss))

    def s2(eta: NDArray, m: NDArray, m0: float) -> NDArray:
        """S2 gained in the decay, sum of m_1..m_k: (1 - lam) sum m_i = sum d_i + lam (m_0 - m_k), and the d_i sum
        to 1 - eta_k (lam < 1)."""
        return (1.0 - eta + lam * (m0 - m)) / (1.0 - lam)

    longest_first = sorted(set(Ds), reverse=True)
    if decay_shape == "linear" and lam < 1.0:
        # every drop d_k is (1 - floor) / D: eta, S1 and m in closed form at the samples alone
        for D in longest_first:
            start = steps - D
            s = _sample_steps(steps, W, start, points)
            k = np.maximum(s - start, 0).astype(np.float64)  # steps into the decay (0 before it)
            c, m0, lam_k = (1.0 - final_lr_frac) / D, float(m_c[start - 1]), lam**k
            eta, m = 1.0 - c * k, lam_k * m0 + c * (1.0 - lam_k) / (1.0 - lam)
            keep(D, s, eta, k - c * k * (k + 1) / 2, s2(eta, m, m0))
        longest_first = []
    rows = max(1, min(8, 1_000_000 // max(Ds)))  # blocks of rows of about one length (little padding)
    for b0 in range(0, len(longest_first), rows):
        block = np.asarray(longest_first[b0 : b0 + rows])
        k = np.arange(1, int(block[0]) + 1, dtype=np.float64)  # (K,): steps into the decay
        # (B, K), the peak 1; a shorter row's entries past its decay are never read
        eta = 1.0 - (1.0 - final_lr_frac) * _decay(np.minimum(k / block[:, None], 1.0), decay_shape)
        d = np.empty_like(eta)  # eta_(k-1) - eta_k, with eta_0 = 1 (the last stable step's)
        d[:, 0] = 1.0 - eta[:, 0]
        np.subtract(eta[:, :-1], eta[:, 1:], out=d[:, 1:])
        m0 = m_c[steps - block - 1]  # (B,)
        m = _momentum(d, m0, lam)
        area = np.cumsum(eta, axis=1)  # (B, K): S1 gained in the decay
        if lam == 1.0:
            gained = np.cumsum(m, axis=1)  # (B, K): S2 gained in the decay
        for r, D in enumerate(int(x) for x in block):
            s = _sample_steps(steps, W, steps - D, points)
            i = np.maximum(s - (steps - D) - 1, 0)  # (P,): the sample's index into the decay's row
            keep(D, s, eta[r, i], area[r, i], gained[r, i] if lam == 1.0 else s2(eta[r, i], m[r, i], m0[r]))
    at, lrs, losses = zip(*(found[D] for D in Ds), strict=True)
    return WsdSweep(steps, decay_shape, tuple(Ds), at, lrs, losses)


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
