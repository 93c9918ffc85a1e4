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
    ends = [R.run(surface, kappa, k, exact, steps, wd=wd if k in v_opt.DECAYED else 0.0) for k in v_opt.OPTIMIZERS]
    out: list[Ref] = []
    if readouts:
        out += [
            Ref(f"SGD's stable limit η_max: {limit:.3g}", limit),
            Ref("SGD's stable limit η_max help: 2/λ_max", FORMULA),
            *(
                [
                    Ref("SGD's stable limit η_max help: 2/λ_max near the minimum", FORMULA),
                    Ref(
                        f"at the start λ_max is {R.start_lambda_max(surface, kappa):.0f} and the local limit "
                        f"{2 / R.start_lambda_max(surface, kappa):.2g}",
                        R.start_lambda_max(surface, kappa),
                        2 / R.start_lambda_max(surface, kappa),
                    ),
                ]
                if surface == "valley"
                else []
            ),
            Ref(f"Condition number κ: {cond:.3g}", cond),
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
        Ref(
            f"above η only when β2 > 1 - (1 - β1)² ({1 - (1 - b1) ** 2:.4g} at β1 = {b1:g})",
            ONE,
            ONE,
            1 - (1 - b1) ** 2,
            GIVEN,
        ),
        Ref(f"the uncorrected step starts at {u[0]:.2f} η", u[0]),
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
            "Adam's step |m̂/√v̂|, 95th percentile at t = 2, 10: 1.00 η, 0.62 η",
            LABEL,
            "the step",
            "the step",
            "a simulation's quantile (2,000 seeded runs), checked against its own loop in "
            "test_views_optimizers.py::test_the_warm_up_quantile_by_a_loop",
            "ibid.",
        ),
        Ref(
            "Adam's step |m̂/√v̂|, 95th percentile at t = 2, 10 help: a seeded estimate over 2,000 runs",
            LABEL,
            "the step",
            "the step",
            "the number of simulated runs (views.optimizers RUNS)",
        ),
        Ref("at t = 1 the step is exactly η", "the first step"),
        Ref(
            f"Largest possible step at t = 10: {R.step_bound(10, 0.9, b2):.2f} η",
            "the step",
            R.step_bound(10, 0.9, b2),
        ),
        Ref("Largest possible step at t = 10 help", "the step"),
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
        Ref("like every coordinate ({:.2f} → {:.2f})".format(s["x"][0], s["rms"][0]), s["x"][0], s["rms"][0]),
    ]


def depth(init: str = "xavier", blocks: str = "12") -> list[Ref]:
    pre, post = R.shipped(f"grad/{init}/pre/L{blocks}"), R.shipped(f"grad/{init}/post/L{blocks}")
    return [
        Ref("The tiny GPT's blocks (RMSNorm, width 64, 4 heads)", SHIPPED, SHIPPED),
        Ref("under its GPT-2 init", "a name (GPT-2)"),
        Ref("the 0.02-scale embedding", "the standard deviation of core/tiny_gpt.py's init_params"),
        Ref(
            "(RMS 0.028 before the final norm, against 1.0 under post-LN)",
            R.residual_rms_before_final_norm("pre"),
            R.residual_rms_before_final_norm("post"),
        ),
        Ref(
            "by about 1/0.028 ≈ 35",
            FORMULA,
            R.residual_rms_before_final_norm("pre"),
            1 / R.residual_rms_before_final_norm("pre"),
        ),
        Ref("Xiong et al.'s Fig. 3 plots", "a figure's number in Xiong et al. 2020"),
        Ref("their Lemma 3)", "a lemma's number in Xiong et al. 2020"),
        Ref(f"Last block: post-LN ÷ pre-LN: {post[-1] / pre[-1]:.2g}", float(post[-1] / pre[-1])),
        Ref(f"Pre-LN: first block ÷ last: {pre[0] / pre[-1]:.2f}", float(pre[0] / pre[-1])),
        Ref(f"Gradient norm by depth at initialisation, {blocks} blocks", GIVEN),
        Ref("block (1 = next to the embedding)", "the first block's number"),
    ]


def mup() -> list[Ref]:
    lrs = R.shipped("sweep/lrs")
    loss = {p: R.shipped(f"sweep/{p}") for p in ("sp", "mup")}
    at = {p: [int(np.nanargmin(row)) for row in loss[p]] for p in ("sp", "mup")}
    best = {p: [float(lrs[i]) for i in at[p]] for p in ("sp", "mup")}
    assert all(0 < i < len(lrs) - 1 for p in at for i in at[p])  # no best at the sweep's edge: no "≤" to check
    span = {p: max(at[p]) - min(at[p]) for p in at}
    top = float(lrs[-1])
    sp, mp = R.shipped("coord/sp")[:, -1, 2], R.shipped("coord/mup")[:, -1, 2]
    seeds = "the sweep's seeds (core/optimizers_data.py SWEEP_SEEDS)"
    updates = "the coordinate check's updates: 5 forward passes, the last after 4 updates"

    def arrow(v: list[float]) -> str:
        return " → ".join(f"{x:.2g}" for x in v)

    return [
        Ref(
            "the hidden matrix's η divided by n / 32 and the output multiplied by 32 / n",
            "muP's base width here",
            "ibid.",
        ),
        Ref("at width 32 both agree", "muP's base width here"),
        Ref(
            "The sweep: 150 steps; its loss is the mean over the last 20 steps, then the mean over 3 seeds",
            SHIPPED,
            "the steps the sweep's loss averages (core/optimizers.py mup_lr_sweep)",
            seeds,
        ),
        Ref("before its update, seed 0", "the coordinate check's seed (core/optimizers_data.py)"),
        Ref("about 54 s on one thread", float(R.shipped("seconds"))),
        Ref("Best η, SP: " + arrow(best["sp"][::2]), *best["sp"][::2]),
        Ref(
            "Best η, SP help: standard parameterisation, widths 32, 128, 512 (the mean loss over 3 seeds): "
            + arrow(best["sp"])
            + f", spanning {span['sp']} steps of the sweep (a quarter decade each)",
            WIDTH,
            WIDTH,
            WIDTH,
            seeds,
            *best["sp"],
            span["sp"],
        ),
        Ref("Best η, muP: " + arrow(best["mup"][::2]), *best["mup"][::2]),
        Ref(
            "Best η, muP help: widths 32, 128, 512: "
            + arrow(best["mup"])
            + f", spanning {span['mup']} step{'s' if span['mup'] != 1 else ''} of the sweep (a quarter decade each)",
            WIDTH,
            WIDTH,
            WIDTH,
            *best["mup"],
            span["mup"],
        ),
        Ref(
            f"Loss at η = {top:.2g}, SP: " + " → ".join(f"{x:.2f}" for x in loss["sp"][:, -1]), STEP, *loss["sp"][:, -1]
        ),
        Ref(f"Loss at η = {top:.2g}, SP help: widths 32, 128, 512", STEP, WIDTH, WIDTH, WIDTH),
        Ref(
            f"Loss at η = {top:.2g}, muP: " + " → ".join(f"{x:.2f}" for x in loss["mup"][:, -1]),
            STEP,
            *loss["mup"][:, -1],
        ),
        Ref(f"Loss at η = {top:.2g}, muP help: widths 32, 128, 512", STEP, WIDTH, WIDTH, WIDTH),
        Ref(
            f"Output's mean |coordinate| after 4 updates, SP: {sp[0]:.2f} → {sp[-1]:.2f}",
            updates,
            float(sp[0]),
            float(sp[-1]),
        ),
        Ref("Output's mean |coordinate| after 4 updates, SP help: widths 32 → 256", updates, WIDTH, WIDTH),
        Ref(
            f"Output's mean |coordinate| after 4 updates, muP: {mp[0]:.2f} → {mp[-1]:.2f}",
            updates,
            float(mp[0]),
            float(mp[-1]),
        ),
        Ref("Output's mean |coordinate| after 4 updates, muP help: widths 32 → 256", updates, WIDTH, WIDTH),
        Ref("^hidden layer 2, muP", LABEL),
        Ref("^hidden layer 2, SP", LABEL),
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
