"""Calibration and emergence: reliability diagrams and ECE, simulated models with a known miscalibration (and a
closed form for their expected ECE), a "before and after preference tuning" toy, temperature scaling, and
emergence as a choice of metric.

The lesson context is seed 002, A13.3 (defining and measuring calibration), A13.4 (why post-training breaks it)
and A11.6 (is emergence real?).

Reliability diagram and ECE (Guo, Pleiss, Sun and Weinberger 2017, arXiv 1706.04599, §2; ECE from Naeini, Cooper
and Hauskrecht 2015). n predictions with confidence c_i in [0, 1] and correctness a_i in {0, 1}, split into M
bins B_m::

    acc(B_m)  = mean of a_i over B_m,      conf(B_m) = mean of c_i over B_m
    ECE = sum_m |B_m| / n · |acc(B_m) - conf(B_m)|
    MCE = max_m |acc(B_m) - conf(B_m)|      over the non-empty bins

Equal-width bins (Guo et al.): B_m = the c_i in ((m-1)/M, m/M], with c = 0 in the first bin. Equal-mass bins
(adaptive binning, as in Nixon et al. 2019, "Measuring calibration in deep learning", from memory): sort the
predictions by confidence and cut them into M runs whose sizes differ by at most one (np.array_split of the
ranks; tied confidences on a cut may land in two bins). Empty bins (only equal width has them): weight 0 in
ECE, left out of MCE, accuracy and confidence NaN in the diagram.

A known miscalibration, accuracy = c^γ. Confidences c follow a Beta(a, b) distribution and each prediction is
right with probability f(c) = c^γ (γ > 1: overconfident, γ < 1: underconfident, γ = 1: calibrated). In the
infinite-sample limit bin m holds the mass P_m = P(c in B_m) and its gap is E[c - c^γ | B_m], so

    ECE_inf = sum_m P_m |E[c | B_m] - E[c^γ | B_m]| = sum_m |∫_{B_m} (c - c^γ) beta(c; a, b) dc|
    ∫_l^u c^γ beta(c; a, b) dc = B(a + γ, b) / B(a, b) · [I_u(a + γ, b) - I_l(a + γ, b)]

with I the regularised incomplete beta function (and γ = 1 for E[c]). Because c^γ <= c on [0, 1] for γ >= 1
(and >= c for γ <= 1), the gap has one sign in every bin: the absolute values come out of the sum and
ECE_inf = |E[c] - E[c^γ]| = |a / (a + b) - B(a + γ, b) / B(a, b)|, the same for every number of bins and for
equal-mass bins too. Binning matters in this limit only when the reliability curve crosses the diagonal, as in
the tuned toy below; at finite n, ECE is biased upward by the noise of each bin's accuracy.

Before and after preference tuning (a toy). Each prediction is one answer option's probability c (as in the
GPT-4 technical report's figure, which bins the probability of each of the A/B/C/D choices of MMLU questions).
The pre-trained model is calibrated: the option is right with probability c. Tuning pushes the stated
probability toward 0 or 1 without changing what is right: c' = sigmoid(κ · logit c), κ > 1. So at a stated c'
the accuracy is sigmoid(logit(c') / κ): above the diagonal below 1/2, below it above 1/2, crossing at 1/2 by
construction. That is exactly a logit scale of κ, so temperature scaling with T = κ undoes it. What the report
shows (OpenAI 2023, GPT-4 Technical Report, arXiv 2303.08774, Figure 8 and §5 Limitations; checked through the
search tool against quotations of the figure's caption, not the primary PDF): a reliability diagram of the
pre-trained GPT-4 on a subset of MMLU, the x-axis the model's probability for each of the A/B/C/D choices, close
to the diagonal, and of the post-trained (PPO) model on the same subset, caption "The post-training hurts
calibration significantly"; the panels print ECE 0.007 and 0.074 (as quoted by several secondary sources). The
post-trained curve is not a simple sag: it sits above the diagonal at low probabilities and below at high ones,
crossing near 0.3-0.4 rather than at 1/2. The report names post-training, not RLHF or any one operator, and gives
no cause. The toy's κ is illustrative, not fitted to the figure.

Temperature scaling (Guo et al. 2017, §4.2). One scalar T > 0 divides a multi-class model's logits:
p = softmax(z / T). T is fitted on held-out data by minimising the mean negative log-likelihood (a 1-D bounded
search on log T, deterministic). Dividing by T > 0 keeps every argmax, so accuracy is unchanged; only the
confidences move. The simulation: true logits z ~ scale · N(0, I) per example, the label drawn from softmax(z),
and the model reports T_0 · z (T_0 > 1: overconfident). Fitting recovers T ≈ T_0 (the NLL's minimiser in the
infinite-sample limit is exactly T_0: the scaled logits then give the true label distribution).

Emergence as a metric choice (Schaeffer, Miranda and Koyejo 2023, arXiv 2304.15004; they argue that many reported
emergent abilities are produced by the metric, not that emergence cannot happen). Their model, §2: the per-token
cross-entropy falls as a power law in scale, L(N) = (N / c)^α with α < 0, and the probability of one right token
is p = exp(-L). Written in log10-compute x with a midpoint x_0 and a slope α > 0 (this module's parametrisation)::

    L(x) = 10^(-α (x - x_0)),     p(x) = exp(-L(x))                  smooth in x
    exact match on k-token answers  = p^k                            (each token right independently)
    expected tokens right           = k p;   token edit distance = k (1 - p)   (linear in p)

The exact-match curve sits near 0 for long, then rises steeply: it crosses a threshold τ where p = τ^(1/k), i.e.
x = x_0 - log10(-ln(τ) / k) / α. Token independence and substitution-only errors (so that the edit distance to
the target is the number of wrong tokens) are this toy's assumptions.

numpy throughout; scipy (special and optimize) is imported lazily where needed. No torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.arrays import as_float_array

Binning = Literal["width", "mass"]
BINNINGS: tuple[str, ...] = ("width", "mass")
N_BINS = 15  # Guo et al. 2017 use M = 15
T_BOUNDS = (0.05, 20.0)  # the temperature search's range


# ---------------------------------------------------------------------------------------------------------------
# argument checks


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return float(value)


def _whole(name: str, value: int, lo: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < lo:
        raise ValueError(f"{name} must be a whole number >= {lo}, got {value!r}")
    return int(value)


def _binning(binning: str) -> str:
    if binning not in BINNINGS:
        raise ValueError(f"binning must be one of {BINNINGS}, got {binning!r}")
    return binning


def _predictions(confidence: ArrayLike, correct: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    c = as_float_array(confidence, "confidence").reshape(-1)
    a = as_float_array(correct, "correct").reshape(-1)
    if c.size == 0:
        raise ValueError("give at least one prediction")
    if c.shape != a.shape:
        raise ValueError(f"confidence and correct need one entry per prediction, got {c.size} and {a.size}")
    if np.any((c < 0) | (c > 1)):
        raise ValueError("confidences must lie in [0, 1]")
    if np.any((a != 0) & (a != 1)):
        raise ValueError("correct must hold 0 (wrong) or 1 (right) for each prediction")
    return c, a


# ---------------------------------------------------------------------------------------------------------------
# reliability diagram, ECE, MCE


def equal_width_bin_index(confidence: ArrayLike, n_bins: int = N_BINS) -> NDArray[np.int64]:
    """Bin of each confidence among M equal-width bins ((m-1)/M, m/M], c = 0 in the first: ceil(c M) - 1."""
    c = as_float_array(confidence, "confidence")
    m = _whole("n_bins", n_bins)
    return np.clip(np.ceil(c * m).astype(np.int64) - 1, 0, m - 1)


def equal_mass_bin_index(confidence: ArrayLike, n_bins: int = N_BINS) -> NDArray[np.int64]:
    """Bin of each confidence among M equal-mass bins: sorted by confidence (stable), cut into runs whose sizes
    differ by at most one (the first n mod M runs one longer, as np.array_split). M > n leaves no bin empty: M is
    lowered to n."""
    c = as_float_array(confidence, "confidence").reshape(-1)
    m = min(_whole("n_bins", n_bins), c.size)
    order = np.argsort(c, kind="stable")
    base, extra = divmod(c.size, m)
    sizes = np.full(m, base) + (np.arange(m) < extra)
    idx = np.empty(c.size, dtype=np.int64)
    idx[order] = np.repeat(np.arange(m), sizes)
    return idx


@dataclass(frozen=True)
class Reliability:
    """A reliability diagram's bins and the calibration errors computed from them (M bins)."""

    binning: str  # "width" or "mass"
    edges: NDArray[np.float64]  # (M+1,) equal width: m/M; equal mass: min, the cut points' confidences, max
    count: NDArray[np.int64]  # (M,)
    confidence: NDArray[np.float64]  # (M,) mean confidence per bin, NaN where empty
    accuracy: NDArray[np.float64]  # (M,) accuracy per bin, NaN where empty
    weight: NDArray[np.float64]  # (M,) count / n
    ece: float  # sum_m weight_m |accuracy_m - confidence_m|
    mce: float  # max over non-empty bins of |accuracy_m - confidence_m|
    overall_accuracy: float
    mean_confidence: float

    @property
    def gap(self) -> NDArray[np.float64]:
        """confidence - accuracy per bin: > 0 overconfident, < 0 underconfident, NaN where empty."""
        return self.confidence - self.accuracy


def reliability_diagram(
    confidence: ArrayLike, correct: ArrayLike, n_bins: int = N_BINS, binning: str = "width"
) -> Reliability:
    """Bin the predictions (equal width or equal mass) and compute each bin's accuracy and confidence, ECE, MCE."""
    c, a = _predictions(confidence, correct)
    kind = _binning(binning)
    idx = equal_width_bin_index(c, n_bins) if kind == "width" else equal_mass_bin_index(c, n_bins)
    m = int(idx.max()) + 1 if kind == "mass" else _whole("n_bins", n_bins)
    count = np.bincount(idx, minlength=m)  # (M,)
    conf_sum = np.bincount(idx, weights=c, minlength=m)
    acc_sum = np.bincount(idx, weights=a, minlength=m)
    filled = count > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.where(filled, conf_sum / count, np.nan)
        acc = np.where(filled, acc_sum / count, np.nan)
    weight = count / c.size
    gap = np.abs(np.where(filled, acc - conf, 0.0))
    if kind == "width":
        edges = np.arange(m + 1) / m
    else:
        order = np.sort(c)
        starts = np.r_[0, np.cumsum(count)[:-1]]
        edges = np.r_[order[starts], order[-1]]
    return Reliability(
        binning=kind,
        edges=edges,
        count=count,
        confidence=conf,
        accuracy=acc,
        weight=weight,
        # ECE = sum_m |B_m| / n · |acc(B_m) - conf(B_m)|; empty bins weigh 0
        ece=float(weight @ gap),
        mce=float(gap[filled].max()),
        overall_accuracy=float(a.mean()),
        mean_confidence=float(c.mean()),
    )


def expected_calibration_error(
    confidence: ArrayLike, correct: ArrayLike, n_bins: int = N_BINS, binning: str = "width"
) -> float:
    """ECE = sum_m |B_m| / n · |acc(B_m) - conf(B_m)| (Naeini et al. 2015; Guo et al. 2017 eq. 3)."""
    return reliability_diagram(confidence, correct, n_bins, binning).ece


def max_calibration_error(
    confidence: ArrayLike, correct: ArrayLike, n_bins: int = N_BINS, binning: str = "width"
) -> float:
    """MCE = max_m |acc(B_m) - conf(B_m)| over the non-empty bins (Guo et al. 2017 eq. 5)."""
    return reliability_diagram(confidence, correct, n_bins, binning).mce


# ---------------------------------------------------------------------------------------------------------------
# a simulated model with accuracy c^γ, and its expected ECE in the infinite-sample limit


def _beta_params(a: float, b: float) -> tuple[float, float]:
    return _positive("the Beta distribution's a", a), _positive("the Beta distribution's b", b)


def simulate_power_miscalibration(
    n: int, gamma: float, a: float = 5.0, b: float = 2.0, seed: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """n predictions with confidence c ~ Beta(a, b) that are right with probability c^γ: (confidence, correct)."""
    n = _whole("n", n)
    gamma = _positive("gamma", gamma)
    a, b = _beta_params(a, b)
    rng = np.random.default_rng(seed)
    c = rng.beta(a, b, size=n)
    correct = (rng.random(n) < c**gamma).astype(np.float64)
    return c, correct


def power_bin_moments(
    edges: ArrayLike, gamma: float, a: float = 5.0, b: float = 2.0
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per bin [e_m, e_{m+1}] of c ~ Beta(a, b): (P_m, ∫ c dens, ∫ c^γ dens), the last two unnormalised.

    ∫_l^u c^g beta(c; a, b) dc = B(a + g, b) / B(a, b) · [I_u(a + g, b) - I_l(a + g, b)]
    """
    from scipy.special import betainc, betaln  # lazy: only the closed forms need it

    e = as_float_array(edges, "edges").reshape(-1)
    if e.size < 2 or np.any(np.diff(e) <= 0) or e[0] < 0 or e[-1] > 1:
        raise ValueError("edges must increase strictly within [0, 1]")
    gamma = _positive("gamma", gamma)
    a, b = _beta_params(a, b)

    def moment(g: float) -> NDArray[np.float64]:
        return math.exp(betaln(a + g, b) - betaln(a, b)) * np.diff(betainc(a + g, b, e))

    return np.diff(betainc(a, b, e)), moment(1.0), moment(gamma)


def expected_ece_power(gamma: float, a: float = 5.0, b: float = 2.0, n_bins: int = N_BINS) -> float:
    """The infinite-sample ECE with M equal-width bins when accuracy = c^γ and c ~ Beta(a, b).

    ECE_inf = sum_m |∫_{B_m} (c - c^γ) beta(c; a, b) dc|, which equals |E[c] - E[c^γ]| for every M (the gap never
    changes sign); computed bin by bin here so that the tests check the identity too.
    """
    m = _whole("n_bins", n_bins)
    _, first, power = power_bin_moments(np.arange(m + 1) / m, gamma, a, b)
    return float(np.sum(np.abs(first - power)))


def mean_gap_power(gamma: float, a: float = 5.0, b: float = 2.0) -> float:
    """E[c] - E[c^γ] = a / (a + b) - B(a + γ, b) / B(a, b): mean confidence minus accuracy (> 0: overconfident)."""
    from scipy.special import betaln

    gamma = _positive("gamma", gamma)
    a, b = _beta_params(a, b)
    return a / (a + b) - math.exp(betaln(a + gamma, b) - betaln(a, b))


# ---------------------------------------------------------------------------------------------------------------
# before and after preference tuning (a toy)


def _logit(p: NDArray) -> NDArray:
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)


def _sigmoid(x: NDArray) -> NDArray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def sharpen(confidence: ArrayLike, kappa: float) -> NDArray[np.float64]:
    """The tuned model's stated probability: sigmoid(κ · logit c); κ > 1 pushes it toward 0 or 1."""
    c = as_float_array(confidence, "confidence")
    kappa = _positive("kappa", kappa)
    if np.any((c < 0) | (c > 1)):
        raise ValueError("confidences must lie in [0, 1]")
    return _sigmoid(kappa * _logit(c))


@dataclass(frozen=True)
class TuningToy:
    """The same predictions before and after the toy's preference tuning (only the stated probability moves)."""

    kappa: float
    correct: NDArray[np.float64]  # (n,) 0/1, the same before and after
    before: NDArray[np.float64]  # (n,) calibrated probabilities c
    after: NDArray[np.float64]  # (n,) sigmoid(κ logit c)
    before_diagram: Reliability
    after_diagram: Reliability


def preference_tuning_toy(
    n: int = 20_000,
    kappa: float = 2.5,
    a: float = 1.0,
    b: float = 1.0,
    n_bins: int = 10,
    binning: str = "width",
    seed: int = 0,
) -> TuningToy:
    """A calibrated model (c ~ Beta(a, b), right with probability c) and the same model after tuning, c -> c'."""
    n = _whole("n", n)
    a, b = _beta_params(a, b)
    rng = np.random.default_rng(seed)
    c = rng.beta(a, b, size=n)
    correct = (rng.random(n) < c).astype(np.float64)
    after = sharpen(c, kappa)
    return TuningToy(
        float(kappa),
        correct,
        c,
        after,
        reliability_diagram(c, correct, n_bins, binning),
        reliability_diagram(after, correct, n_bins, binning),
    )


def tuned_accuracy(stated: ArrayLike, kappa: float) -> NDArray[np.float64]:
    """The toy's reliability curve after tuning: the accuracy at stated probability c' is sigmoid(logit(c') / κ)."""
    c = as_float_array(stated, "stated")
    return _sigmoid(_logit(c) / _positive("kappa", kappa))


# ---------------------------------------------------------------------------------------------------------------
# temperature scaling of a multi-class model


def _logits_labels(logits: ArrayLike, labels: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    z = as_float_array(logits, "logits")
    if z.ndim != 2 or z.shape[0] < 1 or z.shape[1] < 2:
        raise ValueError(f"logits must be (examples, classes) with at least 2 classes, got shape {z.shape}")
    y = np.asarray(labels)
    if y.shape != (z.shape[0],) or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"labels must be {z.shape[0]} whole class numbers")
    if y.min() < 0 or y.max() >= z.shape[1]:
        raise ValueError(f"labels must lie in [0, {z.shape[1]})")
    return z, y.astype(np.int64)


def _log_softmax(z: NDArray) -> NDArray:
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.sum(np.exp(z - m), axis=-1, keepdims=True))


def simulate_logit_model(
    n: int, n_classes: int = 10, scale: float = 2.0, true_temperature: float = 2.0, seed: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """(model logits, labels): true logits z ~ scale · N(0, I), y ~ softmax(z), the model reports T_0 · z."""
    n, k = _whole("n", n), _whole("n_classes", n_classes, 2)
    scale, t0 = _positive("scale", scale), _positive("true_temperature", true_temperature)
    rng = np.random.default_rng(seed)
    z = scale * rng.standard_normal((n, k))
    p = np.exp(_log_softmax(z))
    # inverse-CDF sampling of each row's label
    y = np.minimum((rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1), k - 1)
    return t0 * z, y.astype(np.int64)


def nll(logits: ArrayLike, labels: ArrayLike, T: float = 1.0) -> float:
    """Mean negative log-likelihood of the labels under softmax(z / T), nats."""
    z, y = _logits_labels(logits, labels)
    t = _positive("T", T)
    return float(-np.mean(_log_softmax(z / t)[np.arange(y.size), y]))


def confidences(logits: ArrayLike, labels: ArrayLike, T: float = 1.0) -> tuple[NDArray, NDArray]:
    """(max softmax(z / T) per example, whether its argmax is the label): the inputs of a reliability diagram."""
    z, y = _logits_labels(logits, labels)
    t = _positive("T", T)
    lp = _log_softmax(z / t)
    return np.exp(lp.max(axis=1)), (np.argmax(z, axis=1) == y).astype(np.float64)


def fit_temperature(logits: ArrayLike, labels: ArrayLike, bounds: tuple[float, float] = T_BOUNDS) -> float:
    """The T that minimises the held-out mean NLL of softmax(z / T): a bounded 1-D search on log T (Brent's
    method as in scipy's minimize_scalar(method="bounded"), deterministic, to xatol 1e-10 on log T)."""
    from scipy.optimize import minimize_scalar  # lazy: only fitting needs it

    z, y = _logits_labels(logits, labels)
    lo, hi = _positive("the lower bound", bounds[0]), _positive("the upper bound", bounds[1])
    if lo >= hi:
        raise ValueError(f"need lower < upper bound, got {bounds!r}")
    rows = np.arange(y.size)

    def objective(log_t: float) -> float:
        return float(-np.mean(_log_softmax(z / math.exp(log_t))[rows, y]))

    res = minimize_scalar(objective, bounds=(math.log(lo), math.log(hi)), method="bounded", options={"xatol": 1e-10})
    return float(math.exp(res.x))


@dataclass(frozen=True)
class TemperatureScaling:
    """One temperature fitted on held-out data and its effect on a test set."""

    T: float
    nll_before: float  # test NLL at T = 1
    nll_after: float  # test NLL at the fitted T
    ece_before: float
    ece_after: float
    accuracy_before: float
    accuracy_after: float  # equal to accuracy_before: dividing by T > 0 keeps the argmax
    before: Reliability
    after: Reliability


def temperature_scaling(
    val_logits: ArrayLike,
    val_labels: ArrayLike,
    test_logits: ArrayLike,
    test_labels: ArrayLike,
    n_bins: int = N_BINS,
    binning: str = "width",
) -> TemperatureScaling:
    """Fit T on the validation set, then compare the test set's NLL, ECE and accuracy at T = 1 and at T."""
    t = fit_temperature(val_logits, val_labels)
    c0, a0 = confidences(test_logits, test_labels, 1.0)
    c1, a1 = confidences(test_logits, test_labels, t)
    before = reliability_diagram(c0, a0, n_bins, binning)
    after = reliability_diagram(c1, a1, n_bins, binning)
    return TemperatureScaling(
        T=t,
        nll_before=nll(test_logits, test_labels, 1.0),
        nll_after=nll(test_logits, test_labels, t),
        ece_before=before.ece,
        ece_after=after.ece,
        accuracy_before=float(a0.mean()),
        accuracy_after=float(a1.mean()),
        before=before,
        after=after,
    )


# ---------------------------------------------------------------------------------------------------------------
# emergence as a metric choice


def per_token_accuracy(log_compute: ArrayLike, alpha: float = 0.5, x0: float = 22.0) -> NDArray[np.float64]:
    """p(x) = exp(-L(x)), L(x) = 10^(-α (x - x_0)): Schaeffer et al.'s power-law loss, in log10-compute x."""
    x = as_float_array(log_compute, "log_compute")
    alpha = _positive("alpha", alpha)
    # L = 10^(-alpha (x - x0)); p = exp(-L)
    return np.exp(-np.power(10.0, -alpha * (x - float(x0))))


def exact_match(p: ArrayLike, k: int) -> NDArray[np.float64]:
    """P(all k tokens right) = p^k, tokens independent."""
    pa = as_float_array(p, "p")
    if np.any((pa < 0) | (pa > 1)):
        raise ValueError("p must lie in [0, 1]")
    return pa ** _whole("k", k)


def expected_tokens_right(p: ArrayLike, k: int) -> NDArray[np.float64]:
    """E[number of right tokens] = k p: a linear metric of the same model."""
    pa = as_float_array(p, "p")
    return _whole("k", k) * pa


def token_edit_distance(p: ArrayLike, k: int) -> NDArray[np.float64]:
    """E[token edit distance to the target] = k (1 - p), with substitution errors only (the distance is the
    number of wrong tokens)."""
    pa = as_float_array(p, "p")
    return _whole("k", k) * (1.0 - pa)


def exact_match_crossing(threshold: float, k: int, alpha: float = 0.5, x0: float = 22.0) -> float:
    """The log10-compute where exact match p^k reaches τ: x = x_0 - log10(-ln(τ) / k) / α."""
    if isinstance(threshold, bool) or not isinstance(threshold, int | float | np.number) or not 0 < threshold < 1:
        raise ValueError(f"the threshold must lie strictly between 0 and 1, got {threshold!r}")
    k, alpha = _whole("k", k), _positive("alpha", alpha)
    # p^k = tau  <=>  L = -ln(tau) / k  <=>  10^(-alpha (x - x0)) = -ln(tau) / k
    return float(x0) - math.log10(-math.log(threshold) / k) / alpha


@dataclass(frozen=True)
class EmergenceCurves:
    """The same smooth model scored three ways along log-compute (S points)."""

    log_compute: NDArray[np.float64]  # (S,)
    k: int
    per_token: NDArray[np.float64]  # (S,) p
    exact_match: NDArray[np.float64]  # (S,) p^k
    tokens_right_share: NDArray[np.float64]  # (S,) k p / k = p: the linear metric on the same 0-1 scale
    edit_distance: NDArray[np.float64]  # (S,) k (1 - p)
    threshold: float
    crossing: float  # log10-compute where p^k = threshold


def emergence_curves(
    log_compute: ArrayLike, k: int = 5, alpha: float = 0.5, x0: float = 22.0, threshold: float = 0.5
) -> EmergenceCurves:
    """Per-token accuracy, exact match on k-token answers, the linear metrics and the exact-match crossing."""
    x = as_float_array(log_compute, "log_compute").reshape(-1)
    p = per_token_accuracy(x, alpha, x0)
    return EmergenceCurves(
        log_compute=x,
        k=_whole("k", k),
        per_token=p,
        exact_match=exact_match(p, k),
        tokens_right_share=expected_tokens_right(p, k) / k,
        edit_distance=token_edit_distance(p, k),
        threshold=float(threshold),
        crossing=exact_match_crossing(threshold, k, alpha, x0),
    )


def tuned_logits(before: ArrayLike, kappa: float) -> NDArray[np.float64]:
    """The toy's tuned model as two-class logits (n, 2): [κ · logit c, 0], whose softmax gives class 0 (the option
    is right) the stated probability sigmoid(κ logit c). Built from the pre-trained c, so a stated probability that
    rounds to 0 or 1 in floating point keeps a finite logit (temperature scaling fits T on these)."""
    c = as_float_array(before, "before").reshape(-1)
    if np.any((c <= 0) | (c >= 1)):
        raise ValueError("the pre-trained probabilities must lie strictly between 0 and 1")
    z = _positive("kappa", kappa) * _logit(c)
    return np.column_stack([z, np.zeros_like(z)])
