"""The tables of tests/test_view_numbers.py for the optimizers page: per view (tests/page_numbers.py ``views``), a list
of ``Ref(passage, value or reason, ...)`` for every number the view's readouts and figure texts show.

The references come from tests/optimizers_reference.py (each optimizer stepped in plain floats, the Hessian's
eigenvalues, the moment loops, the norms by their definitions, the shipped npz read with np.load), never from
core/optimizers.py or views/optimizers.py.
"""

from __future__ import annotations

import math

import numpy as np

from tests import optimizers_reference as R
from tests.page_numbers import Ref
from tests.test_page_numbers import FORMULA, GIVEN, _preset
from views import optimizers as v_opt

SPEC = v_opt.SPEC
D = SPEC.defaults()
STEP = "a step of the page's learning-rate sweep (its drag)"
START = "the start point the page states (views.optimizers START)"
SHIPPED = "the shipped file's configuration (core/optimizers_data.py), as the caption states it"
WIDTH = "a width of the shipped muP runs (core/optimizers_data.py)"
STEPS = "the page's steps (an input the view shows back)"
ONE = "1 of 1 − β^t (the formula written beside it)"
LABEL = "a percentile's or a layer's name"


def _surface(name: str) -> str:
    return "bowl" if name == v_opt.SURFACES[0] else "valley"


def paths(values: dict, *, readouts: bool = True, figure: bool = True) -> list[Ref]:
    """The Paths view's readouts and figure texts for a state's values (the defaults updated by ``values``)."""
    s = {f.name: values.get(f.name, D[f.name]) for f in SPEC.fields}
    surface, kappa, steps, wd = (
        _surface(s["opt_surface"]),
        float(s["opt_kappa"]),
        int(s["opt_steps"]),
        float(s["opt_wd"]),
    )
    lr = v_opt.LR_CHOICES.index(s["opt_lr"])
    exact = R.LR_STEPS[lr]
    limit, cond = R.stable_limit(surface, kappa)
    ends = [R.run(surface, kappa, k, exact, steps, wd=0.0 if k == "adam" else wd) for k in v_opt.OPTIMIZERS]
    out: list[Ref] = []
    if readouts:
        out += [
            Ref(f"SGD's stable limit 2/λ_max: {limit:.3g}", FORMULA, limit),
            Ref("SGD's stable limit 2/λ_max help", FORMULA),
            Ref(f"Condition number κ = λ_max/λ_min: {cond:.3g}", cond),
            Ref(f"after {steps} steps, from the same start", STEPS),
        ]
    if figure:
        finals = " ".join(f"{n}: {R.loss_text(f)}" for n, (_, _, f) in zip(v_opt.NAMES, ends, strict=True))
        numbers = [f for _, _, f in ends if math.isfinite(f) and f <= 1e6]
        out += [
            Ref("Five optimizers from (-1.5, 1) on", START, START),
            *(
                [
                    Ref(
                        "Five optimizers from (-1.5, 1) on f = (1 - x)² + 10(y - x²)²",
                        START,
                        START,
                        "the valley's minimum x = 1 (core.optimizers.rosenbrock's a)",
                        "the page's b (core.optimizers.rosenbrock)",
                    )
                ]
                if surface == "valley"
                else []
            ),
            Ref(f"η = {s['opt_lr']} , loss after {steps} steps {finals}", STEP, STEPS, *numbers),
        ]
    return out


def bias(b1: float = 0.9, b2: float = 0.999) -> list[Ref]:
    u = R.uncorrected_steps(5000, b1, b2)
    peak = int(np.argmax(u))
    return [
        Ref(
            "A constant gradient g from m = v = 0: m_t = (1 - β1^t) g and v_t = (1 - β2^t) g²",
            "the moments' start",
            ONE,
            ONE,
        ),
        Ref("the step without correction is η (1 - β1^t) / √(1 - β2^t)", ONE, ONE),
        Ref(f"Uncorrected first step: {u[0]:.2f} η", u[0]),
        Ref("Uncorrected first step help: (1 - β1) / √(1 - β2)", ONE, ONE),
        Ref(f"Largest uncorrected step: {u[peak]:.2f} η at t = {peak + 1}", u[peak], peak + 1),
        Ref("Largest uncorrected step help: (1 - β1^t) / √(1 - β2^t)", ONE, ONE),
        Ref(f"Adam's first steps, β1 = {b1:g}, β2 = {b2:g}", GIVEN, GIVEN),
    ]


def warmup(b2: float = 0.999) -> list[Ref]:
    return [
        Ref("against the closed form √(2 / n_eff)", "Var(g²) = 2σ⁴ for a zero-mean Gaussian"),
        Ref(
            f"Relative std of v̂ at t = 1: {100 * math.sqrt(2 / R.n_eff(1, b2)):.0f}%",
            "the step",
            100 * math.sqrt(2 / R.n_eff(1, b2)),
        ),
        Ref(
            "Relative std of v̂ at t = 1 help: √(2 / n_eff) for zero-mean Gaussian gradients; n_eff = 1",
            "the step",
            "Var(g²) = 2σ⁴",
            R.n_eff(1, b2),
        ),
        Ref(
            f"At t = 100: {100 * math.sqrt(2 / R.n_eff(100, b2)):.0f}%",
            "the step",
            100 * math.sqrt(2 / R.n_eff(100, b2)),
        ),
        Ref(
            "At t = 100 help: n_eff = 99.9 gradients behind v̂ (at most 1,999)",
            "the step",
            R.n_eff(100, b2),
            (1 + b2) / (1 - b2),
        ),
        Ref(
            "5th percentile of v̂ ÷ E[g²] at t = 10: 0.42",
            LABEL,
            "the step",
            "a simulation's quantile (2,000 seeded runs), checked against its own loop in "
            "test_views_optimizers.py::test_the_warm_up_quantile_by_a_loop",
        ),
        Ref(
            "5th percentile of v̂ ÷ E[g²] at t = 10 help: over 2,000 seeded runs: one run in 20",
            LABEL,
            "the step",
            "the number of simulated runs (views.optimizers)",
            "the 5th percentile: one in 20",
        ),
        Ref("^95th percentile", LABEL),
        Ref("^5th percentile", LABEL),
        Ref("^√(2 / n_eff)", "Var(g²) = 2σ⁴ for a zero-mean Gaussian"),
    ]


def norms(shift: float = 2.0) -> list[Ref]:
    s = R.norm_stats(shift)
    return [
        Ref("LayerNorm with eps 1e-5", "torch.nn.LayerNorm's default eps"),
        Ref("Input x: mean, RMS: {:.2f}, {:.2f}".format(*s["x"]), *s["x"]),
        Ref("LayerNorm(x): mean, RMS: {:.2f}, {:.2f}".format(*s["ln"]), *s["ln"]),
        Ref("(eps 1e-5)", "torch.nn.LayerNorm's default eps"),
        Ref("RMSNorm(x): mean, RMS: {:.2f}, {:.2f}".format(*s["rms"]), *s["rms"]),
    ]


def depth(init: str = "xavier", blocks: str = "12") -> list[Ref]:
    pre, post = R.shipped(f"grad/{init}/pre/L{blocks}"), R.shipped(f"grad/{init}/post/L{blocks}")
    return [
        Ref("The tiny GPT's blocks (RMSNorm, width 64, 4 heads)", SHIPPED, SHIPPED),
        Ref("under the tiny GPT's own GPT-2 init", "a name (GPT-2)"),
        Ref("Unlike Xiong et al.'s Fig. 3", "a figure's number in Xiong et al. 2020"),
        Ref(f"Last block: post-LN ÷ pre-LN: {post[-1] / pre[-1]:.2g}", float(post[-1] / pre[-1])),
        Ref(f"Pre-LN: first block ÷ last: {pre[0] / pre[-1]:.2f}", float(pre[0] / pre[-1])),
        Ref(f"Gradient norm by depth at initialisation, {blocks} blocks", GIVEN),
        Ref("block (1 = next to the embedding)", "the first block's number"),
    ]


def mup() -> list[Ref]:
    lrs = R.shipped("sweep/lrs")
    best = {p: [float(lrs[int(np.nanargmin(row))]) for row in R.shipped(f"sweep/{p}")] for p in ("sp", "mup")}
    sp, mp = R.shipped("coord/sp")[:, -1, 2], R.shipped("coord/mup")[:, -1, 2]
    return [
        Ref(
            "the hidden matrix's η divided by n / 32 and the output multiplied by 32 / n",
            "muP's base width here",
            "ibid.",
        ),
        Ref("at width 32 both agree", "muP's base width here"),
        Ref("about 11 s on one thread", float(R.shipped("seconds"))),
        Ref("Best η, SP: " + " → ".join(f"{x:.2g}" for x in best["sp"][::2]), *best["sp"][::2]),
        Ref(
            "Best η, SP help: standard parameterisation, widths 32, 128, 512: "
            + " → ".join(f"{x:.2g}" for x in best["sp"]),
            WIDTH,
            WIDTH,
            WIDTH,
            *best["sp"],
        ),
        Ref("Best η, muP: " + " → ".join(f"{x:.2g}" for x in best["mup"][::2]), *best["mup"][::2]),
        Ref(
            "Best η, muP help: widths 32, 128, 512: " + " → ".join(f"{x:.2g}" for x in best["mup"]),
            WIDTH,
            WIDTH,
            WIDTH,
            *best["mup"],
        ),
        Ref(
            f"Output's mean |coordinate| after 5 steps, SP: {sp[0]:.2f} → {sp[-1]:.2f}",
            "the coordinate check's steps",
            float(sp[0]),
            float(sp[-1]),
        ),
        Ref(
            "Output's mean |coordinate| after 5 steps, SP help: widths 32 → 256",
            "the coordinate check's steps",
            WIDTH,
            WIDTH,
        ),
        Ref(
            f"Output's mean |coordinate| after 5 steps, muP: {mp[0]:.2f} → {mp[-1]:.2f}",
            "the coordinate check's steps",
            float(mp[0]),
            float(mp[-1]),
        ),
        Ref(
            "Output's mean |coordinate| after 5 steps, muP help: widths 32 → 256",
            "the coordinate check's steps",
            WIDTH,
            WIDTH,
        ),
        Ref("^hidden layer 2, muP", LABEL),
        Ref("^width 32, SP", WIDTH),
        Ref("^width 32, muP", WIDTH),
        Ref("^width 128, SP", WIDTH),
        Ref("^width 128, muP", WIDTH),
        Ref("^width 512, SP", WIDTH),
        Ref("^width 512, muP", WIDTH),
    ]


def _new(refs: list[Ref], base: list[Ref]) -> list[Ref]:
    """The refs of a view that the defaults' view does not already hold word for word."""
    seen = {r.snippet for r in base}
    return [r for r in refs if r.snippet not in seen]


_BOWL50 = _preset(SPEC, "A1.5: SGD against Adam on a bowl of κ = 50")
_VALLEY = _preset(SPEC, "A1.5.1: AdamW against Adam + L2 in the valley")

OPT: dict[str, list[Ref]] = {
    "defaults": paths({}),
    "tab Bias correction": bias(),
    "tab Warm-up": warmup(),
    "tab LayerNorm vs RMSNorm": norms(),
    "tab Pre-LN vs post-LN": depth(),
    "tab muP": mup(),
    "preset A1.5: SGD against Adam on a bowl of κ = 50": _new(paths(_BOWL50), paths({})),
    "preset A1.5.1: AdamW against Adam + L2 in the valley": _new(paths(_VALLEY), paths({})),
}

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/21_Optimizers.py": OPT}
