"""Compute-optimal scaling: the Chinchilla loss fit, the iso-FLOP U-curve and its closed-form optimum.

Pure numpy, vectorised over arrays (no torch: these are a handful of scalars per point). Symbols follow the
lesson: N parameters, D training tokens, C training FLOPs, and the fit L(N, D) = E + A / N^alpha + B / D^beta.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatOrArray = float | NDArray[np.float64]  # a per-N quantity: float for one N, (n,) array for n of them

FLOPS_PER_PARAM_TOKEN = 6.0  # C ≈ 6 N D: 2N forward + 4N backward FLOPs per token
SERVING_FLOPS_PER_PARAM = 2.0  # 2N FLOPs per generated token
TRAINING_BYTES_PER_PARAM = 16.0  # mixed-precision Adam: bf16 weights + grads (4), fp32 master + 2 moments (12)
RULE_TOKENS_PER_PARAM = 20.0  # the Chinchilla rule of thumb D ≈ 20 N


@dataclass(frozen=True)
class ScalingFit:
    """One parametric fit L(N, D) = E + A / N^alpha + B / D^beta (here beta is an exponent, not RLHF's beta)."""

    key: str
    label: str
    short: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float


FITS: dict[str, ScalingFit] = {
    "hoffmann2022": ScalingFit(
        "hoffmann2022", "Hoffmann et al. 2022 (Chinchilla, approach 3)", "Hoffmann 2022", 1.69, 406.4, 410.7, 0.34, 0.28
    ),
    "epoch2024": ScalingFit(
        "epoch2024",
        "Besiroglu et al. 2024 (Epoch AI replication)",
        "Epoch AI 2024",
        1.8172,
        482.01,
        2085.43,
        0.3478,
        0.3658,
    ),
}


@dataclass(frozen=True)
class Accelerator:
    """A GPU's peak dense bf16 throughput, in FLOP/s."""

    name: str
    peak_flops: float


ACCELERATORS: dict[str, Accelerator] = {
    "H100": Accelerator("NVIDIA H100 SXM", 989e12),
    "H200": Accelerator("NVIDIA H200 SXM", 989e12),  # same tensor cores as the H100; more, faster memory
    "A100": Accelerator("NVIDIA A100", 312e12),
}


def fit_by_short_name(short: str) -> str:
    """The key of the fit whose short name (as shown on the page and in links) is ``short``."""
    for key, f in FITS.items():
        if f.short == short:
            return key
    raise ValueError(f"unknown fit {short!r}; expected one of {[f.short for f in FITS.values()]}")


def _fit(fit: str | ScalingFit) -> ScalingFit:
    if isinstance(fit, ScalingFit):
        return fit
    try:
        return FITS[fit]
    except KeyError:
        raise ValueError(f"unknown fit {fit!r}; expected one of {sorted(FITS)}") from None


def training_flops(N: ArrayLike, D: ArrayLike) -> NDArray[np.float64] | float:
    """C = 6 N D: training FLOPs of a dense transformer with N parameters on D tokens."""
    return FLOPS_PER_PARAM_TOKEN * np.asarray(N, dtype=float) * np.asarray(D, dtype=float)


def tokens_for_budget(C: ArrayLike, N: ArrayLike) -> NDArray[np.float64]:
    """D = C / (6 N): the tokens a budget of C FLOPs buys for a model of N parameters."""
    return np.asarray(C, dtype=float) / (FLOPS_PER_PARAM_TOKEN * np.asarray(N, dtype=float))


def chinchilla_loss(N: ArrayLike, D: ArrayLike, fit: str | ScalingFit = "hoffmann2022") -> NDArray[np.float64]:
    """L(N, D) = E + A / N^alpha + B / D^beta, in nats per token; broadcasts over N and D."""
    f = _fit(fit)
    N = np.asarray(N, dtype=float)
    D = np.asarray(D, dtype=float)
    # Powers as exp(-alpha log N): exact for positive inputs and free of overflow for N up to 1e300.
    return f.E + f.A * np.exp(-f.alpha * np.log(N)) + f.B * np.exp(-f.beta * np.log(D))


def isoflop_loss(C: ArrayLike, N: ArrayLike, fit: str | ScalingFit = "hoffmann2022") -> NDArray[np.float64]:
    """L(N) on the iso-FLOP line of budget C: the loss with D = C / (6 N)."""
    return chinchilla_loss(N, tokens_for_budget(C, N), fit)


def chinchilla_optimum(
    C: ArrayLike, fit: str | ScalingFit = "hoffmann2022"
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(N_opt, D_opt): the minimum of L(N, D) subject to 6 N D = C, in closed form (lesson, section 3.3).

    G = (alpha A / (beta B))^(1 / (alpha + beta))
    N_opt = G (C/6)^a,   D_opt = G^-1 (C/6)^b,   a = beta / (alpha + beta),  b = alpha / (alpha + beta)
    """
    f = _fit(fit)
    C6 = np.asarray(C, dtype=float) / FLOPS_PER_PARAM_TOKEN
    G = (f.alpha * f.A / (f.beta * f.B)) ** (1.0 / (f.alpha + f.beta))
    a = f.beta / (f.alpha + f.beta)
    N_opt = G * C6**a
    D_opt = C6 / N_opt  # = G^-1 (C/6)^b, since a + b = 1
    return N_opt, D_opt


def rule_of_thumb(C: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(N, D) of the "20 tokens per parameter" rule: C = 6 N (20 N) = 120 N^2, so N = sqrt(C / 120)."""
    N = np.sqrt(np.asarray(C, dtype=float) / (FLOPS_PER_PARAM_TOKEN * RULE_TOKENS_PER_PARAM))
    return N, RULE_TOKENS_PER_PARAM * N


def hardware_flops(n_gpus: ArrayLike, hours: ArrayLike, peak_flops: ArrayLike, mfu: ArrayLike) -> NDArray:
    """C = n_GPU · seconds · F · MFU: the useful FLOPs a cluster delivers (MFU as a fraction, 0.4 = 40%)."""
    return (
        np.asarray(n_gpus, dtype=float)
        * np.asarray(hours, dtype=float)
        * 3600.0
        * np.asarray(peak_flops, dtype=float)
        * np.asarray(mfu, dtype=float)
    )


def training_seconds(C: ArrayLike, n_gpus: ArrayLike, peak_flops: ArrayLike, mfu: ArrayLike) -> NDArray:
    """Time = C / (n_GPU · F · MFU), in seconds of wall clock."""
    return np.asarray(C, dtype=float) / (
        np.asarray(n_gpus, dtype=float) * np.asarray(peak_flops, dtype=float) * np.asarray(mfu, dtype=float)
    )


@dataclass(frozen=True)
class Hardware:
    """A training cluster: how many GPUs of which peak throughput, at which model FLOPs utilisation."""

    n_gpus: float = 8
    peak_flops: float = 989e12
    mfu: float = 0.40

    @property
    def useful_flops_per_gpu(self) -> float:
        return self.peak_flops * self.mfu

    def budget(self, hours: float) -> float:
        """The useful FLOPs this cluster delivers in ``hours`` of wall clock."""
        return float(hardware_flops(self.n_gpus, hours, self.peak_flops, self.mfu))

    @classmethod
    def from_preset(cls, gpu: str, n_gpus: float, mfu_percent: float) -> Hardware:
        """A cluster of ``n_gpus`` GPUs of a preset in :data:`ACCELERATORS`, at ``mfu_percent`` % MFU."""
        if gpu not in ACCELERATORS:
            raise ValueError(f"unknown GPU {gpu!r}; expected one of {sorted(ACCELERATORS)}")
        return cls(float(n_gpus), ACCELERATORS[gpu].peak_flops, float(mfu_percent) / 100.0)


@dataclass(frozen=True)
class Plan:
    """Everything the scaling page reports about training N parameters with a budget of C FLOPs.

    The per-N fields (N, D, tokens_per_param, loss, excess_pct, memory_bytes, serving_flops_per_token) are floats
    for a scalar N (from :func:`plan`) and arrays for an array of N (from :func:`plan_sweep`); the budget's fields
    (C, the optimum, the rule of thumb, time) are floats either way.
    """

    C: float
    N: FloatOrArray
    D: FloatOrArray
    tokens_per_param: FloatOrArray
    loss: FloatOrArray
    N_opt: float
    D_opt: float
    loss_opt: float
    excess_pct: FloatOrArray  # loss above the fit's minimum, in % of the minimum
    tokens_per_param_opt: float
    N_rule: float
    D_rule: float
    loss_rule: float
    train_seconds: float
    gpu_days: float
    memory_bytes: FloatOrArray  # training states at 16 bytes per parameter (activations excluded)
    serving_flops_per_token: FloatOrArray


def plan_sweep(
    C: float, N: ArrayLike, fit: str | ScalingFit = "hoffmann2022", hardware: Hardware | None = None
) -> Plan:
    """:class:`Plan` for every model size in ``N`` on one budget ``C`` (array fields, one entry per N)."""
    N = np.asarray(N, dtype=float)
    if not np.isfinite(C) or C <= 0 or not np.all(np.isfinite(N)) or np.any(N <= 0):
        raise ValueError(f"C and N must be positive and finite, got C={C!r}, N={N!r}")
    hw = hardware or Hardware()
    D = tokens_for_budget(C, N)
    N_opt, D_opt = chinchilla_optimum(C, fit)
    N_rule, D_rule = rule_of_thumb(C)
    loss = isoflop_loss(C, N, fit)
    loss_opt = isoflop_loss(C, N_opt, fit)
    seconds = training_seconds(C, hw.n_gpus, hw.peak_flops, hw.mfu)
    return Plan(
        C=float(C),
        N=N,
        D=D,
        tokens_per_param=D / N,
        loss=loss,
        N_opt=float(N_opt),
        D_opt=float(D_opt),
        loss_opt=float(loss_opt),
        excess_pct=100.0 * (loss - loss_opt) / loss_opt,
        tokens_per_param_opt=float(D_opt / N_opt),
        N_rule=float(N_rule),
        D_rule=float(D_rule),
        loss_rule=float(isoflop_loss(C, N_rule, fit)),
        train_seconds=float(seconds),
        gpu_days=float(seconds) * hw.n_gpus / 86400.0,
        memory_bytes=TRAINING_BYTES_PER_PARAM * N,
        serving_flops_per_token=SERVING_FLOPS_PER_PARAM * N,
    )


def plan(C: float, N: float, fit: str | ScalingFit = "hoffmann2022", hardware: Hardware | None = None) -> Plan:
    """Summarise the plan "N parameters on the budget C" against the fit's optimum and the 20-tokens rule."""
    sweep = plan_sweep(C, [N], fit, hardware)
    return Plan(**{k: float(v[0]) if isinstance(v, np.ndarray) else v for k, v in vars(sweep).items()})


C_RANGE = (1e18, 1e26)  # budgets the page accepts, in FLOPs
N_RANGE = (1e6, 1e13)  # model sizes the page accepts, in parameters


def clamp_budget(C: float) -> tuple[float, bool]:
    """C clamped to :data:`C_RANGE`, and whether clamping changed it."""
    clamped = float(min(max(C, C_RANGE[0]), C_RANGE[1]))
    return clamped, clamped != C


@dataclass(frozen=True)
class IsoflopStudy:
    """All the data of the scaling page for one budget, one plan and one fit."""

    current: Plan  # the plan of the page's controls (scalar fields)
    curve: Plan  # sweep over N for the drawn U-curve
    slider: Plan  # sweep over the slider's steps (the plan's own N included)
    slider_active: int  # index of the plan's N among the slider's steps
    other_fit: str
    other: Plan  # the same plan under the other fit
    budgets: NDArray[np.float64]  # (B,) a family of budgets, one per decade
    family_N: NDArray[np.float64]  # (B, P)
    family_loss: NDArray[np.float64]  # (B, P)
    family_N_opt: NDArray[np.float64]  # (B,)
    family_loss_opt: NDArray[np.float64]  # (B,)


def curve_columns(study: IsoflopStudy, fit: str) -> dict[str, NDArray | float | str]:
    """The drawn U-curve as table columns (for a CSV): one row per model size."""
    curve = study.curve
    return {
        "N_params": curve.N,
        "D_tokens": curve.D,
        "tokens_per_param": curve.tokens_per_param,
        "loss": curve.loss,
        "C_flops": curve.C,
        "fit": fit,
    }


def family_columns(study: IsoflopStudy) -> dict[str, NDArray]:
    """The family of budgets as long-format table columns (for a CSV): one row per (budget, model size)."""
    return {
        "C_flops": np.repeat(study.budgets, study.family_N.shape[1]),
        "N_params": study.family_N.ravel(),
        "loss": study.family_loss.ravel(),
    }


def isoflop_study(
    C: float, N: float, fit: str = "hoffmann2022", hardware: Hardware | None = None, steps: int = 97
) -> IsoflopStudy:
    """Everything the scaling page draws: the U-curve around the optimum and the plan, slider steps, the
    same plan under the other fit, and a family of budgets 1e18..1e26 with their optima."""
    current = plan(C, N, fit, hardware)
    lo = min(current.N_opt / 100, N / 2)  # the x range shows the optimum, the rule and the plan
    hi = max(current.N_opt * 100, N * 2)
    curve = plan_sweep(C, isoflop_grid(C, lo, hi, 241), fit, hardware)
    slider_N = np.unique(np.append(isoflop_grid(C, lo * 1.5, hi / 1.5, steps), N))
    other_fit = "epoch2024" if _fit(fit).key == "hoffmann2022" else "hoffmann2022"
    budgets = np.logspace(18, 26, 9)
    family_N, family_loss = isoflop_family(budgets, fit, span=30)
    family_N_opt, _ = chinchilla_optimum(budgets, fit)
    return IsoflopStudy(
        current=current,
        curve=curve,
        slider=plan_sweep(C, slider_N, fit, hardware),
        slider_active=int(np.searchsorted(slider_N, N)),
        other_fit=other_fit,
        other=plan(C, N, other_fit, hardware),
        budgets=budgets,
        family_N=family_N,
        family_loss=family_loss,
        family_N_opt=family_N_opt,
        family_loss_opt=isoflop_loss(budgets, family_N_opt, fit),
    )


def isoflop_grid(C: float, N_min: float, N_max: float, points: int = 241) -> NDArray[np.float64]:
    """Model sizes log-spaced from N_min to N_max (the x axis of a U-curve)."""
    if not (0 < N_min < N_max):
        raise ValueError(f"need 0 < N_min < N_max, got {N_min!r}, {N_max!r}")
    return np.geomspace(N_min, N_max, points)


def isoflop_family(
    budgets: ArrayLike, fit: str | ScalingFit = "hoffmann2022", span: float = 100.0, points: int = 121
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """U-curves of several budgets at once: (N, L), each of shape (budgets, points).

    Each row spans N_opt / span to N_opt * span around its own optimum, so every curve shows its U.
    """
    C = np.asarray(budgets, dtype=float).reshape(-1, 1)  # (budgets, 1)
    N_opt, _ = chinchilla_optimum(C, fit)  # (budgets, 1)
    u = np.linspace(-np.log(span), np.log(span), points)  # (points,)
    N = N_opt * np.exp(u)  # (budgets, points)
    return N, isoflop_loss(C, N, fit)


def optimal_loss(C: ArrayLike, fit: str | ScalingFit = "hoffmann2022") -> NDArray[np.float64]:
    """L_opt(C): the loss of the compute-optimal model at budget C, in closed form (nats per token).

    With N_opt = G (C/6)^a and D_opt = G^-1 (C/6)^b (see :func:`chinchilla_optimum`) both power terms fall like
    (C/6)^-gamma, gamma = alpha beta / (alpha + beta), so
        L_opt(C) = E + K (C/6)^-gamma,   K = A G^-alpha + B G^beta
    """
    f = _fit(fit)
    G = (f.alpha * f.A / (f.beta * f.B)) ** (1.0 / (f.alpha + f.beta))
    gamma = f.alpha * f.beta / (f.alpha + f.beta)
    K = f.A * G**-f.alpha + f.B * G**f.beta
    return f.E + K * (np.asarray(C, dtype=float) / FLOPS_PER_PARAM_TOKEN) ** -gamma


def compute_equivalent(loss: ArrayLike, fit: str | ScalingFit = "hoffmann2022") -> NDArray[np.float64]:
    """The budget C (FLOPs) at which a compute-optimal model reaches ``loss``: the inverse of :func:`optimal_loss`.

        C = 6 ((L - E) / K)^(-1 / gamma)

    A plan's loss mapped through this function, divided by the plan's own C, is its compute efficiency (1 for a
    compute-optimal plan, below 1 otherwise). ``loss`` must lie above the irreducible loss E.
    """
    f = _fit(fit)
    L = np.asarray(loss, dtype=float)
    if not np.all(np.isfinite(L)) or np.any(L <= f.E):
        raise ValueError(f"loss must be finite and above the fit's irreducible loss E = {f.E}, got {loss!r}")
    G = (f.alpha * f.A / (f.beta * f.B)) ** (1.0 / (f.alpha + f.beta))
    gamma = f.alpha * f.beta / (f.alpha + f.beta)
    K = f.A * G**-f.alpha + f.B * G**f.beta
    return FLOPS_PER_PARAM_TOKEN * ((L - f.E) / K) ** (-1.0 / gamma)


def compute_efficiency(C: ArrayLike, N: ArrayLike, fit: str | ScalingFit = "hoffmann2022") -> NDArray[np.float64]:
    """The share of the budget a compute-optimal model needs to match N parameters trained on C FLOPs (<= 1)."""
    return compute_equivalent(isoflop_loss(C, N, fit), fit) / np.asarray(C, dtype=float)


def loss_penalty_pct(C: ArrayLike, factor: ArrayLike, fit: str | ScalingFit = "hoffmann2022") -> NDArray[np.float64]:
    """How far above the fit's minimum (in %) a model ``factor`` times the optimal size lands on the budget C."""
    N_opt, _ = chinchilla_optimum(C, fit)
    loss_opt = isoflop_loss(C, N_opt, fit)
    return 100.0 * (isoflop_loss(C, N_opt * np.asarray(factor, dtype=float), fit) - loss_opt) / loss_opt


def compute_waste_pct(C: ArrayLike, factor: ArrayLike, fit: str | ScalingFit = "hoffmann2022") -> NDArray[np.float64]:
    """The compute-equivalent of being ``factor`` times off the optimal size: the % of the budget C that a
    compute-optimal model would save at the same loss, 100 (1 - efficiency). Under a fit of this form it does not
    depend on C (both power terms scale alike), unlike :func:`loss_penalty_pct`, which shrinks as C grows."""
    N_opt, _ = chinchilla_optimum(C, fit)
    return 100.0 * (1.0 - compute_efficiency(C, N_opt * np.asarray(factor, dtype=float), fit))


def optimal_tokens_per_param(C: ArrayLike, fit: str | ScalingFit = "hoffmann2022") -> NDArray[np.float64]:
    """D_opt / N_opt at budget C: the fit's compute-optimal tokens per parameter (constant only if alpha = beta)."""
    N_opt, D_opt = chinchilla_optimum(C, fit)
    return D_opt / N_opt
