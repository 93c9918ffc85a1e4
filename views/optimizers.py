"""The optimizers page's state and what it shows: SGD, momentum, Adam, Adam with L2 and AdamW on a 2-D loss surface
(main, with a drag over the learning rate), Adam's bias correction, the noise of its early second moment (warm-up),
LayerNorm against RMSNorm, pre-LN against post-LN gradient norms by depth at initialisation, and muP (one tab each,
built only when open). The last two read core/data/optimizers.npz: the page never imports torch."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import optimizers as opt
from core.optimizers_data import COORD_STEPS, SWEEP_SEEDS, shipped
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz.moe import with_panel_line
from viz.optimizers import bias_figure, depth_figure, mup_figure, norm_figure, trajectory_figure, warmup_figure
from viz.predict import predict_figure

QUESTION = (
    "How do SGD, momentum, Adam and AdamW differ, why does Adam need bias correction and warm-up, and what do "
    "LayerNorm and RMSNorm remove?"
)
ANSWER_PHRASES = (
    "by the root of its second moment",
    "biased toward zero",
    "decay outside the adaptive step",
)

QUICK_CHECK = QuickCheck(
    question=(
        "Adam with β1 = 0.9, β2 = 0.98 and no bias correction sees a constant gradient. How large is its first step, "
        "in units of η?"
    ),
    options=(
        "1 η",
        "5 η",
        "0.71 η",
        "3.16 η",
    ),
    right=2,
    answer=(
        "m_1 = 0.1 g and √v_1 = √0.02 |g| = 0.141 |g|, so the step is 0.1 / 0.141 = **0.71 η**: smaller than η "
        "here, because β2 < 1 − (1 − β1)² = 0.99; at β2 = 0.999 it would be 3.16 η (the Bias correction tab)."
    ),
)

VIEWS = ("Paths", "Bias correction", "Warm-up", "LayerNorm vs RMSNorm", "Pre-LN vs post-LN", "muP")
PATHS, BIAS, WARMUP, NORMS, DEPTH, MUP = VIEWS
SURFACES = ("Ill-conditioned bowl", "Curved valley")
OPTIMIZERS = ("sgd", "momentum", "adam", "adam_l2", "adamw")
NAMES = ("SGD", "SGD + momentum", "Adam", "Adam + L2", "AdamW")
DECAYED = ("adam_l2", "adamw")  # the optimizers the weight-decay control applies to; SGD and momentum stay plain
LRS = tuple(float(x) for x in opt.lr_sweep(1e-3, 1.0, 13))  # a quarter decade apart
LR_CHOICES = tuple(f"{x:.3g}" for x in LRS)
START = (-1.5, 1.0)
BOX = {"Ill-conditioned bowl": ((-2.0, 2.0), (-1.5, 1.5)), "Curved valley": ((-2.0, 2.0), (-1.0, 3.0))}
DIVERGED = 1e6  # a final loss above this, or not finite, is shown as diverged
NORM_DIM = 8
RUNS = 2000  # the warm-up tab's simulated runs

SPEC = Spec(
    "Optimizers",
    (
        Field("opt_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field(
            "opt_surface",
            "Loss surface",
            "choice",
            SURFACES[0],
            choices=SURFACES,  # a select box: the two segments wrapped onto two lines and pushed the sidebar down
            help="the bowl f = ½(κ x² + y²); the valley f = (1 − x)² + 10 (y − x²)², Rosenbrock's with 10 for his 100",
        ),
        Field("opt_kappa", "Condition number κ of the bowl", "float", 10.0, lo=1.0, hi=100.0, step=1.0, fmt="%.0f"),
        Field(
            "opt_lr",
            "Learning rate η",
            "choice",
            "0.1",
            choices=LR_CHOICES,
            widget="select_slider",
            help="the same η for every optimizer, a quarter decade apart. The row under the figure drags it in the "
            "browser.",
        ),
        Field("opt_steps", "Steps", "int", 60, lo=5, hi=300, step=5),
        Field("opt_beta1", "β1 (momentum, Adam's first moment)", "float", 0.9, lo=0.0, hi=0.99, step=0.01, fmt="%.2f"),
        Field("opt_beta2", "Adam's β2", "float", 0.999, lo=0.5, hi=0.9999, step=0.001, fmt="%.4f"),
        Field(
            "opt_wd",
            "Weight decay λ",
            "float",
            0.1,
            lo=0.0,
            hi=1.0,
            step=0.05,
            fmt="%.2f",
            help="for Adam + L2 and AdamW only (SGD and SGD + momentum are always plain, without decay); torch's "
            "convention: Adam + L2 adds λθ to the gradient; AdamW multiplies θ by 1 − ηλ each step",
        ),
        Field(
            "opt_shift",
            "Mean added to the vector",
            "float",
            2.0,
            lo=-5.0,
            hi=5.0,
            step=0.5,
            fmt="%.1f",
            help="the LayerNorm vs RMSNorm tab: a seeded vector of unit-variance coordinates plus this offset",
        ),
        Field("opt_depth", "Blocks", "choice", "12", choices=("4", "12"), widget="segmented"),
        Field(
            "opt_init",
            "Initialisation",
            "choice",
            "xavier",
            choices=("xavier", "gpt2"),
            widget="segmented",
            help="xavier: Glorot normal weight matrices and an embedding N(0, 1), which the tied head reuses (so the "
            "initial logits are large); gpt2: the tiny GPT's own N(0, 0.02²) with the residual projections scaled "
            "down by depth",
        ),
        ask.switch("predict_opt"),
        ask.guess(
            "guess_opt_lr",
            "Your guess: the largest η at which SGD converges",
            "float",
            0.0,
            100.0,
            step=0.01,
            fmt="%.3g",
        ),
    ),
    presets={
        "A1.5: SGD against Adam on a bowl of κ = 50": {
            "opt_surface": SURFACES[0],
            "opt_kappa": 50.0,
            "opt_lr": "0.1",
            "opt_view": PATHS,
        },
        "A1.5.1: AdamW against Adam + L2 in the valley": {
            "opt_surface": SURFACES[1],
            "opt_lr": "0.1",
            "opt_wd": 0.5,
            "opt_steps": 300,
            "opt_view": PATHS,
        },
        "A1.5.2: Adam's bias correction at β2 = 0.999": {"opt_beta1": 0.9, "opt_beta2": 0.999, "opt_view": BIAS},
        "A1.6.1: why warm-up: Adam's second moment from few steps": {"opt_beta2": 0.999, "opt_view": WARMUP},
        "A1.7: LayerNorm against RMSNorm": {"opt_shift": 2.0, "opt_view": NORMS},
        "A1.6.1: pre-LN against post-LN at 12 blocks": {"opt_depth": "12", "opt_init": "xavier", "opt_view": DEPTH},
        "A11.2: muP's coordinate check and best learning rate": {"opt_view": MUP},
    },
)


def _surface(name: str, kappa: float) -> opt.Surface:
    return opt.quadratic(kappa) if name == SURFACES[0] else opt.rosenbrock(1.0, 10.0)


def _hessian(s: opt.Surface, p: tuple[float, float]) -> np.ndarray:
    if s.kind == "quadratic":
        return np.diag([s.a, s.b])
    x, y = p  # f_xx = 2 − 4 b (y − x²) + 8 b x², f_xy = −4 b x, f_yy = 2 b
    return np.array([[2 - 4 * s.b * (y - x * x) + 8 * s.b * x * x, -4 * s.b * x], [-4 * s.b * x, 2 * s.b]])


def _hessian_at_minimum(s: opt.Surface) -> np.ndarray:
    return _hessian(s, (s.a, s.a * s.a) if s.kind == "rosenbrock" else (0.0, 0.0))


@functools.lru_cache(maxsize=16)
def _paths(surface: str, kappa: float, steps: int, beta1: float, beta2: float, wd: float) -> tuple[np.ndarray, ...]:
    """Positions (n_lr, steps + 1, 2) and losses (n_lr, steps + 1) per optimizer, every LR of the sweep at once."""
    s = _surface(surface, kappa)
    out = []
    for name in OPTIMIZERS:
        tr = opt.trajectory(s, name, LRS, steps, START, momentum=beta1, betas=(beta1, beta2),  # type: ignore[arg-type]
                            weight_decay=wd if name in DECAYED else 0.0)  # fmt: skip
        out.append((tr.positions, tr.losses))
    return tuple(out)


def _loss_text(x: float) -> str:
    return "diverged" if not np.isfinite(x) or x > DIVERGED else f"{x:.2g}"


def _panel(lr: str, steps: int, finals: list[float]) -> str:
    lines = [f"<b>η = {lr}</b>, loss after {steps} steps"]
    lines += [f"{n}: {_loss_text(f)}" for n, f in zip(NAMES, finals, strict=True)]
    return "<br>".join(lines)


@functools.lru_cache(maxsize=16)
def _paths_fig(surface: str, kappa: float, steps: int, b1: float, b2: float, wd: float, at: int, theme: str,
               pres: bool) -> go.Figure:  # fmt: skip
    s = _surface(surface, kappa)
    runs = _paths(surface, kappa, steps, b1, b2, wd)
    (x0, x1), (y0, y1) = BOX[surface]
    xs, ys, Z = opt.loss_grid(s, (x0, x1), (y0, y1), 121)
    paths = [[runs[k][0][i] for k in range(len(OPTIMIZERS))] for i in range(len(LRS))]
    panels = [_panel(LR_CHOICES[i], steps, [float(runs[k][1][i, -1]) for k in range(len(OPTIMIZERS))])
              for i in range(len(LRS))]  # fmt: skip
    title = "f = ½(κx² + y²)" if surface == SURFACES[0] else "f = (1 − x)² + 10(y − x²)²"
    return trajectory_figure(xs, ys, np.log10(Z + 1e-3), paths, NAMES, s.minimum, LR_CHOICES, panels, active=at,
                             title=f"Five optimizers from ({START[0]:g}, {START[1]:g}) on {title}", theme=theme,
                             presenter=pres)  # fmt: skip


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (``main`` is the open tab's), their readouts and notes.

    Facts: ``finals`` (each optimizer's last loss at the page's η), ``limit`` (SGD's stable limit 2/λ_max),
    ``predict``; per tab ``first_step``, ``peak`` (Bias correction), ``rel_std`` (Warm-up), ``ratio`` (Pre-LN vs
    post-LN), ``best`` (muP). Bad input gives a note, never an exception."""
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.opt_view)
    view = View()
    surface = state.opt_surface if state.opt_surface in SURFACES else SURFACES[0]
    kappa, steps = float(state.opt_kappa), int(state.opt_steps)
    b1, b2, wd = float(state.opt_beta1), float(state.opt_beta2), float(state.opt_wd)
    lr = state.opt_lr if state.opt_lr in LR_CHOICES else "0.1"
    at = LR_CHOICES.index(lr)
    s = _surface(surface, kappa)
    lam = np.linalg.eigvalsh(_hessian_at_minimum(s))
    limit = 2.0 / float(lam[-1])
    lam_start = float(np.linalg.eigvalsh(_hessian(s, START))[-1])
    runs = _paths(surface, kappa, steps, b1, b2, wd)
    finals = [float(r[1][at, -1]) for r in runs]
    view.facts.update(finals=finals, limit=limit)
    predicting = ask.mode(state, "predict_opt", "guess_opt_lr")
    view.facts["predict"] = predicting
    where = "the bowl" if surface == SURFACES[0] else "the valley, near its minimum"
    question = f"Plain SGD on {where}: above which learning rate η does it diverge?"
    if PATHS in parts:
        if predicting == "hidden":
            (x0, x1), (y0, y1) = BOX[surface]
            view.figures[PATHS] = predict_figure(question, x_title="x", y_title="y", x_range=(x0, x1),
                                                 y_range=(y0, y1), **options.look)  # fmt: skip
        else:
            view.figures[PATHS] = _paths_fig(surface, kappa, steps, b1, b2, wd, at, options.theme, options.presenter)
            view.drags[PATHS] = Drag("opt_lr", LR_CHOICES)
    best = min(range(len(NAMES)), key=lambda k: finals[k] if np.isfinite(finals[k]) else np.inf)
    view.readouts = [
        Readout("SGD's stable limit η_max", f"{limit:.3g}",
                ("2/λ_max, from the Hessian's largest eigenvalue (the bowl's is the same everywhere): above this η "
                 "plain SGD overshoots further each step along that direction" if surface == SURFACES[0] else
                 f"2/λ_max near the minimum, from the Hessian there: above this η plain SGD overshoots further each "
                 f"step along its steep direction; at the start λ_max is {lam_start:.0f} and the local limit "
                 f"{2.0 / lam_start:.2g}")),
        Readout("Condition number κ", f"{lam[-1] / lam[0]:.3g}",
                "λ_max/λ_min of the Hessian at the minimum: SGD's η is capped by the steep direction and crawls "
                "along the flat"),
        Readout("Lowest loss at this η", NAMES[best], f"after {steps} steps, from the same start"),
    ]  # fmt: skip
    if BIAS in parts:
        bc = opt.bias_correction_steps(5000, b1, b2)
        peak = int(np.argmax(bc.uncorrected))
        view.facts.update(first_step=float(bc.uncorrected[0]), peak=(peak + 1, float(bc.uncorrected[peak])))
        view.figures[BIAS] = bias_figure(bc.t, bc.corrected, bc.uncorrected, f"β1 = {b1:g}, β2 = {b2:g}",
                                         float(bc.uncorrected[0]), **options.look)  # fmt: skip
        above = 1.0 - (1.0 - b1) ** 2  # (1 − β1)/√(1 − β2) > 1  ⇔  β2 > 1 − (1 − β1)²
        view.readouts += [
            Readout("Uncorrected first step", f"{bc.uncorrected[0]:.2f} η",
                    f"(1 − β1) / √(1 − β2) for a constant gradient: above η only when β2 > 1 − (1 − β1)² "
                    f"({above:.4g} at β1 = {b1:g})"),
            Readout("Largest uncorrected step", _peak_text(b1, b2, float(bc.uncorrected[peak]), peak + 1),
                    "(1 − β1^t) / √(1 − β2^t); it never exceeds η when β2 ≤ β1; with the correction every step "
                    "is η"),
        ]  # fmt: skip
    if WARMUP in parts:
        noise = _noise(b1, b2)
        n_eff = opt.second_moment_effective_samples(100, b2)
        view.facts["rel_std"] = (float(noise.rel_std_closed_form[0]), float(noise.rel_std_closed_form[99]))
        view.figures[WARMUP] = warmup_figure(noise.t, noise.v_ratio, noise.rel_std_closed_form, noise.rel_std_simulated,
                                             **options.look)  # fmt: skip
        view.readouts += [
            Readout("Relative std of v̂ at t = 1", f"{100 * noise.rel_std_closed_form[0]:.0f}%",
                    "√(2 / n_eff) for zero-mean Gaussian gradients; n_eff = 1 at the first step"),
            Readout("At t = 100", f"{100 * noise.rel_std_closed_form[99]:.0f}%",
                    f"n_eff = {n_eff[-1]:.1f} gradients behind v̂ (at most {(1 + b2) / (1 - b2):,.0f})"),
            Readout("Adam's step |m̂/√v̂|, 95th percentile at t = 2, 10",
                    f"{noise.step[-1, 1]:.2f} η, {noise.step[-1, 9]:.2f} η",
                    f"a seeded estimate over {RUNS:,} runs on the same gradients: m̂ shares v̂'s noise, so a small v̂ "
                    "does not make a large step; at t = 1 the step is exactly η"),
            Readout("Largest possible step at t = 10", f"{opt.adam_step_bound(10, b1, b2):.2f} η",
                    "for any gradients, by Cauchy–Schwarz on m̂ = Σ a_i g_i and v̂ = Σ b_i g_i²: √(Σ a_i² / b_i)"),
        ]  # fmt: skip
    if NORMS in parts:
        x = np.random.default_rng(0).standard_normal(NORM_DIM) + float(state.opt_shift)
        ln, rms = opt.layer_norm(x), opt.rms_norm(x)
        view.figures[NORMS] = norm_figure(x, ln, rms, **options.look)

        def stats(v: np.ndarray) -> str:
            return f"{v.mean():.2f}, {np.sqrt((v * v).mean()):.2f}"

        view.readouts += [
            Readout("Input x: mean, RMS", stats(x)),
            Readout("LayerNorm(x): mean, RMS", stats(ln), "mean removed, then scaled to unit variance (eps 1e-5)"),
            Readout("RMSNorm(x): mean, RMS", stats(rms),
                    f"scaled to unit RMS; the mean is not subtracted: it is divided by the RMS like every coordinate "
                    f"({x.mean():.2f} → {rms.mean():.2f})"),
        ]  # fmt: skip
    if DEPTH in parts:
        depth = state.opt_depth if state.opt_depth in ("4", "12") else "12"
        init = state.opt_init if state.opt_init in ("xavier", "gpt2") else "xavier"
        data = shipped()
        pre, post = data[f"grad/{init}/pre/L{depth}"], data[f"grad/{init}/post/L{depth}"]
        view.facts["ratio"] = float(post[-1] / pre[-1])
        view.figures[DEPTH] = depth_figure(pre, post, init, **options.look)
        view.readouts += [
            Readout("Last block: post-LN ÷ pre-LN", f"{post[-1] / pre[-1]:.2g}",
                    "the top block's gradient norm, post-LN over pre-LN, at initialisation"),
            Readout("Pre-LN: first block ÷ last", f"{pre[0] / pre[-1]:.2f}", "the pre-LN norms across depth"),
        ]  # fmt: skip
    if MUP in parts:
        data = shipped()
        cw, sw, lrs = data["coord/widths"], data["sweep/widths"], data["sweep/lrs"]
        sp, mup = data["coord/sp"][:, -1, :], data["coord/mup"][:, -1, :]
        view.figures[MUP] = mup_figure(cw, sp[:, 2], mup[:, 2], mup[:, 1], sw, lrs, data["sweep/sp"],
                                       data["sweep/mup"], sp_hidden=sp[:, 1], **options.look)  # fmt: skip
        at = {p: [int(np.nanargmin(row)) for row in data[f"sweep/{p}"]] for p in ("sp", "mup")}
        best = {p: [float(lrs[i]) for i in at[p]] for p in ("sp", "mup")}
        view.facts["best"] = best
        widths = ", ".join(f"{int(w)}" for w in sw)
        top = len(lrs) - 1

        def lr_text(i: int) -> str:
            # a best η at either end of the sweep is a bound, not an optimum
            edge = " (the sweep's edge)"
            return f"≤ {lrs[i]:.2g}{edge}" if i == 0 else f"≥ {lrs[i]:.2g}{edge}" if i == top else f"{lrs[i]:.2g}"

        def arrow(idx: list[int]) -> str:
            return " → ".join(lr_text(i) for i in idx)

        def moves(idx: list[int]) -> str:
            span = max(idx) - min(idx)
            return f"spanning {span} step{'s' if span != 1 else ''} of the sweep (a quarter decade each)"

        def losses(p: str, j: int) -> str:
            return " → ".join(f"{x:.2f}" for x in data[f"sweep/{p}"][:, j])

        view.readouts += [
            Readout("Best η, SP", arrow(at["sp"][::2]),
                    f"standard parameterisation, widths {widths} (the mean loss over {SWEEP_SEEDS} seeds): "
                    f"{arrow(at['sp'])}, {moves(at['sp'])}"),
            Readout("Best η, muP", arrow(at["mup"][::2]), f"widths {widths}: {arrow(at['mup'])}, {moves(at['mup'])}"),
            Readout(f"Loss at η = {lrs[top]:.2g}, SP", losses("sp", top),
                    f"widths {widths}: the robust signal; near each width's best η the curves are flat"),
            Readout(f"Loss at η = {lrs[top]:.2g}, muP", losses("mup", top), f"widths {widths}"),
            Readout(f"Output's mean |coordinate| after {COORD_STEPS - 1} updates, SP",
                    f"{sp[0, 2]:.2f} → {sp[-1, 2]:.2f}", f"widths {int(cw[0])} → {int(cw[-1])}: grows with width"),
            Readout(f"Output's mean |coordinate| after {COORD_STEPS - 1} updates, muP",
                    f"{mup[0, 2]:.2f} → {mup[-1, 2]:.2f}", f"widths {int(cw[0])} → {int(cw[-1])}"),
        ]  # fmt: skip

    def finite(parts: list[np.ndarray]) -> np.ndarray:
        # a diverged path overflows to ±inf: the table leaves those cells empty, as the figure stops drawing them
        a = np.concatenate(parts)
        return np.where(np.isfinite(a), a, np.nan)

    view.tables[PATHS] = lambda: pd.DataFrame(
        {
            "optimizer": [n for n in NAMES for _ in range(steps + 1)],
            "step": np.tile(np.arange(steps + 1), len(NAMES)),
            "x": finite([r[0][at, :, 0] for r in runs]),
            "y": finite([r[0][at, :, 1] for r in runs]),
            "loss": finite([r[1][at] for r in runs]),
        }
    )
    if predicting == "hidden":
        ask.hide(view, question, ("SGD's stable limit", "Condition number", "Lowest loss"), tables=(PATHS,))
    elif predicting == "revealed":
        g = float(state.guess_opt_lr)
        if PATHS in view.figures:
            view.figures[PATHS] = with_panel_line(view.figures[PATHS], f"<i>your guess: η = {g:.3g}</i>")
        ask.reveal(view, Readout("SGD's stable limit (the answer)", f"{limit:.3g}", "2 / λ_max"), f"{g:.3g}",
                   ask.ratio_text(g, limit), "your guess against the answer", value=limit)  # fmt: skip
    if "main" in parts:
        view.show_as_main(state.opt_view)
    return with_answers(SPEC, state, view)


def _peak_text(b1: float, b2: float, value: float, step: int) -> str:
    """The largest uncorrected step, or, where it never rises visibly above η, that: with β2 ≤ β1 the factor
    (1 − β1^t) / √(1 − β2^t) stays below 1 for every t (√(1 − β2^t) ≥ 1 − β2^t ≥ 1 − β1^t), and its maximum over the
    computed steps is only where it has rounded to 1 in floats, not a peak."""
    if b2 <= b1:
        return "never above η (rises toward η)"
    if f"{value:.2f}" == "1.00":
        return "at most 1.00 η (rises toward η)"
    return f"{value:.2f} η at t = {step}"


@functools.lru_cache(maxsize=8)
def _noise(b1: float, b2: float) -> opt.SecondMomentNoise:
    return opt.second_moment_noise(200, b1, b2, runs=RUNS, seed=0, quantiles=(0.05, 0.5, 0.95))
