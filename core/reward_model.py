"""The reward model: Bradley-Terry fitted to preference pairs, what it cannot identify, and how a length bias is hacked.

Section 3.6 of the lesson, seed 003 (Bradley-Terry, Q6 on length hacking, Q7 on reward-model accuracy), seed 002
(A6.3, A6.9). A labeler prefers answer w over answer l with probability

    P(w > l) = sigma(r_w - r_l),        L_RM = -log sigma(r_w - r_l) = softplus(r_l - r_w)

so only differences of rewards enter: r + c fits exactly as well as r. :func:`bradley_terry_fit` finds scalar
rewards for n items by maximum likelihood (Newton's method in numpy; in torch on a device when one is given). DPO is
the same form with the implicit reward beta · log(pi_theta / pi_ref) in place of r (see :func:`implicit_reward` and
core/dpo.py).

The length toy: a proxy reward r = quality + c · log2(length) grows with length; the KL-leash optimum
pi* ∝ pi_ref exp(r / beta) (core.kl_leash.kl_regularized_policy) picks longer answers as beta falls, while the
true quality first rises, then falls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.arrays import as_float_array
from core.kl_leash import kl_divergence, kl_regularized_policy

if TYPE_CHECKING:
    import torch


def _as_pairs(pairs: ArrayLike, n_items: int | None) -> tuple[NDArray[np.int64], int]:
    """(P, 2) integer (winner, loser) indices, checked, and the number of items."""
    try:
        a = np.asarray(pairs)
    except (TypeError, ValueError):
        raise ValueError("pairs must be a list of (winner, loser) index pairs") from None
    if a.size == 0:
        raise ValueError("no preference pairs: give at least one (winner, loser) pair")
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"pairs must have shape (P, 2): (winner, loser) per row; got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        if not np.issubdtype(a.dtype, np.floating) or np.any(a != np.round(a)):
            raise ValueError("pairs must hold whole item indices")
        a = a.astype(np.int64)
    if np.any(a < 0):
        raise ValueError("item indices must be >= 0")
    if np.any(a[:, 0] == a[:, 1]):
        raise ValueError("a pair compares two different items (winner == loser found)")
    n = int(a.max()) + 1 if n_items is None else int(n_items)
    if a.max() >= n:
        raise ValueError(f"item index {int(a.max())} out of range for n_items = {n}")
    return a.astype(np.int64), n


def _softplus(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.logaddexp(0.0, x)


def preference_probability(r_w: ArrayLike, r_l: ArrayLike) -> NDArray[np.float64] | float:
    """Bradley-Terry: P(w preferred to l) = sigma(r_w - r_l). Broadcasts; floats in, float out."""
    d = as_float_array(r_w, "r_w") - as_float_array(r_l, "r_l")
    p = np.exp(-_softplus(-d))  # sigma(d), exact in both tails
    return float(p) if p.ndim == 0 else p


# Rewards closer than this (relative to 1 + max |r|) count as tied when pairs are scored: items with the same record
# have equal maximum-likelihood rewards, which a fit returns a few ulps apart, in an order set by round-off (numpy
# and torch, or two BLAS builds, can disagree); Newton's tol (1e-10) resolves rewards far more finely than any real gap.
TIE_RTOL = 1e-9


def _reward_gap(r: NDArray[np.float64], idx: NDArray[np.int64]) -> NDArray[np.float64]:
    """r_w - r_l per pair (P,), with gaps below TIE_RTOL · (1 + max |r|) set to exactly 0 (ties)."""
    d = r[idx[:, 0]] - r[idx[:, 1]]  # (P,)
    return np.where(np.abs(d) <= TIE_RTOL * (1.0 + np.max(np.abs(r))), 0.0, d)


def bradley_terry_nll(rewards: ArrayLike, pairs: ArrayLike) -> float:
    """Mean -log sigma(r_w - r_l) over the pairs (nats per pair); adding a constant to all rewards changes nothing."""
    r = as_float_array(rewards, "rewards").reshape(-1)
    idx, _ = _as_pairs(pairs, r.size)
    # -log sigma(r_w - r_l) = softplus(r_l - r_w)
    return float(np.mean(_softplus(r[idx[:, 1]] - r[idx[:, 0]])))


def implicit_reward(logp_policy: ArrayLike, logp_ref: ArrayLike, beta: float) -> NDArray[np.float64] | float:
    """DPO's implicit reward r_hat = beta · (log pi_theta(y) - log pi_ref(y)); Bradley-Terry of it is the DPO loss."""
    b = float(beta)
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"beta must be positive, got {beta!r}")
    r = b * (as_float_array(logp_policy, "logp_policy") - as_float_array(logp_ref, "logp_ref"))
    return float(r) if r.ndim == 0 else r


# --------------------------------------------------------------------------------------------------------------
# the fit


# Newton's method runs in numpy unless a torch device is asked for. Measured on the 2-core CPU machine (float64,
# P = 20 n pairs, 6-7 Newton steps; one fit, numpy / torch on the CPU, best of 3):
#   n = 20: 0.6 / 2.1 ms,  n = 100: 1.7 / 3.0 ms,  n = 300: 13 / 15 ms,  n = 1000: 170 / 220 ms
# numpy wins at every size (torch's per-call overhead below a few hundred items, the same LAPACK solve above), and
# the page fits 3-20 answers (12 in the label-noise study): torch never pays here, so the page never imports it.
# ``device=`` runs the same Newton steps in torch (e.g. thousands of items on a GPU).


@dataclass(frozen=True)
class BTFit:
    """Rewards fitted by Bradley-Terry maximum likelihood."""

    rewards: NDArray[np.float64]  # (n,) mean 0 (the constant is not identified; the fit picks mean 0)
    nll: float  # mean -log sigma(r_w - r_l) over the training pairs, nats
    train_accuracy: float  # share of training pairs with r_w > r_l (a tie within TIE_RTOL is not)
    iterations: int
    converged: bool
    device: str  # where Newton ran: "cpu" for numpy, else the torch device
    backend: str  # "numpy" or "torch"


def _bradley_terry_newton(
    xp: Any, r: Any, w: Any, lo: Any, lam: float, max_iter: int, tol: float
) -> tuple[Any, int, bool]:
    """Newton's method for sum_pairs softplus(r_l - r_w) + (l2 / 2) · sum_i r_i^2, from r (n,) on (winner, loser)
    index arrays w, lo (P,). One definition for both array libraries: ``xp`` is numpy (arrays) or torch (tensors,
    all on one device); it uses only functions the two spell alike. Returns (rewards, iterations, converged)."""
    n = r.shape[0]
    converged, it = False, 0
    for it in range(1, max_iter + 1):  # noqa: B007 (it is reported)
        d = r[w] - r[lo]  # (P,) r_w - r_l
        # P(w > l) = sigma(d) = exp(-softplus(-d)), exact in both tails
        p = xp.exp(-xp.logaddexp(xp.zeros_like(d), -d))  # (P,)
        # d/dr_w softplus(r_l - r_w) = -(1 - p), d/dr_l = +(1 - p)
        g_pair = 1.0 - p  # (P,)
        grad = xp.bincount(lo, weights=g_pair, minlength=n) - xp.bincount(w, weights=g_pair, minlength=n) + lam * r
        # Hessian: each pair adds p(1 - p) (e_w - e_l)(e_w - e_l)^T: +h at (w, w) and (l, l), -h at (w, l) and (l, w)
        h = p * (1.0 - p)  # (P,)
        diag = xp.bincount(w, weights=h, minlength=n) + xp.bincount(lo, weights=h, minlength=n)  # (n,)
        off = xp.bincount(w * n + lo, weights=h, minlength=n * n).reshape(n, n)  # (n, n) h at (w, l)
        # f(r + c) = f(r) and the ridge is smallest at mean(r) = 0, so the optimum has mean 0 for every l2 >= 0:
        # Newton runs in the mean-zero subspace, with the constant direction given the Hessian's own scale
        # (keeps H well conditioned even for a tiny l2, and invertible for l2 = 0):
        # H = sum_pairs h (e_w - e_l)(e_w - e_l)^T + l2 I + (1 + mean_i H_ii) 11^T / n
        H = xp.diag(diag + lam) - off - off.T + (1.0 + float(diag.mean())) / n  # (n, n)
        try:
            step = xp.linalg.solve(H, grad)  # (n,)
        except (np.linalg.LinAlgError, RuntimeError):  # torch's LinAlgError is a RuntimeError
            step = r + math.nan
        if not bool(xp.isfinite(step).all()):
            raise ValueError(
                "the fit has no finite maximum: some item wins (or loses) every comparison, or the comparisons "
                "split into groups never compared with each other; use l2 > 0"
            )
        step = step - step.mean()
        r = r - step
        if float(xp.abs(step).max()) < tol * (1.0 + float(xp.abs(r).max())):
            converged = True
            break
    return r, it, converged


def bradley_terry_fit(
    pairs: ArrayLike,
    n_items: int | None = None,
    l2: float = 1e-3,
    max_iter: int = 100,
    tol: float = 1e-10,
    device: torch.device | str | None = None,
) -> BTFit:
    """Scalar rewards for n items from preference pairs, by maximum likelihood under Bradley-Terry.

    pairs: (P, 2) integer (winner, loser) indices. Minimises

        sum_pairs softplus(r_l - r_w) + (l2 / 2) · sum_i r_i^2

    by Newton's method in numpy, or in torch on ``device`` when one is given (the same steps,
    :func:`_bradley_terry_newton`). The small ridge l2 (a Gaussian prior) keeps the optimum finite when an
    item wins all its comparisons and picks the constant: at the optimum sum_i r_i = 0, because every pair's gradient
    adds +g to one item and -g to the other; with l2 = 0 the fit is centred the same way (it then needs a connected
    comparison graph without a perfect separation, else ValueError).
    """
    idx_np, n = _as_pairs(pairs, n_items)
    lam = float(l2)
    if not (math.isfinite(lam) and lam >= 0):
        raise ValueError(f"l2 must be >= 0, got {l2!r}")
    if device is None:
        r, it, converged = _bradley_terry_newton(np, np.zeros(n), idx_np[:, 0], idx_np[:, 1], lam, max_iter, tol)
        r_np, dev, backend = r, "cpu", "numpy"
    else:
        import torch

        from core.device import default_dtype

        t_dev = torch.device(device)
        idx = torch.as_tensor(idx_np, device=t_dev)  # (P, 2)
        r0 = torch.zeros(n, dtype=default_dtype(t_dev), device=t_dev)  # (n,)
        r, it, converged = _bradley_terry_newton(torch, r0, idx[:, 0], idx[:, 1], lam, max_iter, tol)
        r_np, dev, backend = r.cpu().numpy().astype(np.float64), str(t_dev), "torch"
    return BTFit(
        rewards=r_np,
        nll=bradley_terry_nll(r_np, idx_np),
        train_accuracy=float(np.mean(_reward_gap(r_np, idx_np) > 0)),
        iterations=it,
        converged=converged,
        device=dev,
        backend=backend,
    )


def sample_pairs(
    true_rewards: ArrayLike, n_pairs: int, flip: float = 0.0, rng: np.random.Generator | None = None, seed: int = 0
) -> NDArray[np.int64]:
    """n_pairs labelled comparisons of random distinct items: Bradley-Terry labels from the true rewards, each then
    flipped with probability ``flip`` (labeler noise). Returns (n_pairs, 2) (winner, loser) indices."""
    r = as_float_array(true_rewards, "true_rewards").reshape(-1)
    if r.size < 2:
        raise ValueError("need at least two items to compare")
    if not (0.0 <= float(flip) <= 0.5):
        raise ValueError(f"flip must be in [0, 0.5] (a flip rate above 1/2 reverses the labels), got {flip!r}")
    if not isinstance(n_pairs, int | np.integer) or n_pairs < 1:
        raise ValueError(f"n_pairs must be a positive whole number, got {n_pairs!r}")
    rng = np.random.default_rng(seed) if rng is None else rng
    i = rng.integers(0, r.size, n_pairs)  # (P,)
    j = (i + rng.integers(1, r.size, n_pairs)) % r.size  # (P,) never equal to i
    # P(i > j) = sigma(r_i - r_j), then a flip with probability `flip`
    i_wins = rng.random(n_pairs) < preference_probability(r[i], r[j])  # (P,)
    i_wins ^= rng.random(n_pairs) < flip
    return np.stack([np.where(i_wins, i, j), np.where(i_wins, j, i)], axis=1)


def pair_accuracy(rewards: ArrayLike, pairs: ArrayLike) -> float:
    """Share of pairs whose winner has the higher reward (ties count one half; see :data:`TIE_RTOL`)."""
    r = as_float_array(rewards, "rewards").reshape(-1)
    idx, _ = _as_pairs(pairs, r.size)
    d = _reward_gap(r, idx)  # (P,)
    return float(np.mean((d > 0) + 0.5 * (d == 0)))


@dataclass(frozen=True)
class NoiseStudy:
    """Held-out pair accuracy of fitted reward models as the labelers' flip rate grows."""

    flip: NDArray[np.float64]  # (L,)
    heldout_accuracy: NDArray[np.float64]  # (L,) the fitted model on fresh, equally noisy labels
    true_accuracy: NDArray[np.float64]  # (L,) the fitted model's ordering against the true rewards' ordering
    ceiling: NDArray[np.float64]  # (L,) the true rewards themselves on the held-out noisy labels
    fits: tuple[BTFit, ...]
    n_train: int
    n_test: int


def accuracy_vs_noise(
    true_rewards: ArrayLike,
    flips: ArrayLike = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5),
    n_train: int = 400,
    n_test: int = 2000,
    seed: int = 0,
    l2: float = 1e-3,
) -> NoiseStudy:
    """Fit Bradley-Terry on n_train pairs for each flip rate and score it on n_test held-out pairs.

    Even the true rewards cannot predict a noisy label better than the ceiling: Bradley-Terry's own randomness
    (close items are a coin toss) plus the flips; as the flip rate nears 1/2 everything falls to 50%.
    """
    r = as_float_array(true_rewards, "true_rewards").reshape(-1)
    f = as_float_array(flips, "flips").reshape(-1)
    rng = np.random.default_rng(seed)
    # all pairs of distinct items, for the accuracy against the true ordering
    a, b = np.triu_indices(r.size, k=1)
    distinct = r[a] != r[b]
    truth = np.stack([np.where(r[a] > r[b], a, b), np.where(r[a] > r[b], b, a)], axis=1)[distinct]
    held, true_acc, ceil, fits = [], [], [], []
    for flip in f:
        train = sample_pairs(r, n_train, float(flip), rng=rng)
        test = sample_pairs(r, n_test, float(flip), rng=rng)
        fit = bradley_terry_fit(train, n_items=r.size, l2=l2)
        fits.append(fit)
        held.append(pair_accuracy(fit.rewards, test))
        true_acc.append(pair_accuracy(fit.rewards, truth))
        ceil.append(pair_accuracy(r, test))
    return NoiseStudy(f, np.array(held), np.array(true_acc), np.array(ceil), tuple(fits), n_train, n_test)


# --------------------------------------------------------------------------------------------------------------
# a length-biased reward model against the KL leash


@dataclass(frozen=True)
class LengthToy:
    """Answers to one prompt of different lengths: the SFT model's probabilities and their true quality."""

    lengths: tuple[int, ...]  # tokens
    pi_ref: tuple[float, ...]
    quality: tuple[float, ...]  # the true reward (what people want)
    length_coef: float  # the proxy's reward per doubling of the length


# the best answer is of middle length; the SFT model prefers short-to-middle answers; the proxy pays 0.3 per doubling
LENGTH_TOY = LengthToy((50, 100, 200, 400, 800), (0.25, 0.35, 0.25, 0.10, 0.05), (0.2, 0.6, 0.8, 0.7, 0.5), 0.3)


def length_biased_reward(quality: ArrayLike, lengths: ArrayLike, length_coef: float) -> NDArray[np.float64]:
    """The proxy reward r = quality + c · log2(length): c more reward for every doubling of the answer's length."""
    q = as_float_array(quality, "quality")
    L = as_float_array(lengths, "lengths")
    if np.any(L <= 0):
        raise ValueError("lengths must be positive numbers of tokens")
    # r = q + c log2(L)
    return q + float(length_coef) * np.log2(L)


@dataclass(frozen=True)
class LengthSweep:
    """pi* ∝ pi_ref exp(r_proxy / beta) over a range of beta: how long its answers are and how good they truly are."""

    beta: NDArray[np.float64]  # (B,)
    pi: NDArray[np.float64]  # (B, K)
    mean_length: NDArray[np.float64]  # (B,) E_pi*[length], tokens
    proxy_reward: NDArray[np.float64]  # (B,) E_pi*[r_proxy]
    true_reward: NDArray[np.float64]  # (B,) E_pi*[quality]
    kl: NDArray[np.float64]  # (B,) KL(pi* || pi_ref), nats
    proxy: NDArray[np.float64]  # (K,) r_proxy per answer
    lengths: NDArray[np.float64]  # (K,)
    quality: NDArray[np.float64]  # (K,)
    pi_ref: NDArray[np.float64]  # (K,)
    best_beta: float  # the beta (on the grid) with the highest true reward


def length_bias_sweep(toy: LengthToy = LENGTH_TOY, betas: ArrayLike | None = None) -> LengthSweep:
    """The KL-leash optimum under a length-biased proxy for each beta (default 61 log-spaced values, 1e-2 .. 1e2)."""
    L = as_float_array(toy.lengths, "lengths")
    q = as_float_array(toy.quality, "quality")
    ref = as_float_array(toy.pi_ref, "pi_ref")
    if not (L.shape == q.shape == ref.shape) or L.size == 0:
        raise ValueError("lengths, quality and pi_ref need one entry per answer")
    beta = np.geomspace(1e-2, 1e2, 61) if betas is None else as_float_array(betas, "betas").reshape(-1)
    r = length_biased_reward(q, L, toy.length_coef)  # (K,)
    pi = kl_regularized_policy(ref, r, beta)  # (B, K), validates pi_ref and beta
    p_ref = ref / ref.sum()
    true_reward = pi @ q  # (B,)
    return LengthSweep(
        beta=beta,
        pi=pi,
        mean_length=pi @ L,
        proxy_reward=pi @ r,
        true_reward=true_reward,
        kl=np.asarray(kl_divergence(pi, np.broadcast_to(p_ref, pi.shape)), dtype=np.float64).reshape(-1),
        proxy=r,
        lengths=L,
        quality=q,
        pi_ref=p_ref,
        best_beta=float(beta[int(np.argmax(true_reward))]),
    )
