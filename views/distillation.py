"""The distillation page's state and what it shows: a one-Gaussian student fitted to a two-mode teacher by forward KL
(mode-covering: moment matching) and by reverse KL (mode-seeking), dragged over the distance between the modes (main);
the temperature on soft targets and Hinton's T² factor; and token-level, sequence-level and on-policy distillation on
a two-token toy (one tab each, built only when open)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import distillation as dist
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz.distillation import kl_figure, sequence_figure, temperature_figure
from viz.predict import predict_figure, with_guess

QUESTION = (
    "What is distillation, why does the direction of the KL matter, and what do the temperature, sequence-level and "
    "on-policy distillation change?"
)
ANSWER_PHRASES = (  # not the bare "mode-covering" / "mode-seeking": the catalogue's search keywords name them
    "forward KL is mode-covering",
    "reverse KL is mode-seeking",
    "multiplies the soft loss by T²",
    "its own prefixes",
)

QUICK_CHECK = QuickCheck(
    question=(
        "A teacher has two equal, well-separated modes and the student is a single Gaussian (p = teacher, "
        "q = student). Which KL direction puts the student on one mode, and which puts it between the modes?"
    ),
    options=(
        "Reverse KL(q‖p): on one mode; forward KL(p‖q): between them",
        "Forward KL(p‖q): on one mode; reverse KL(q‖p): between them",
        "Both between them: either fit matches the teacher's mean",
        "Both on one mode: neither fit puts mass where the teacher has none",
    ),
    right=0,
    answer=(
        "Reverse KL(q‖p) puts it on **one mode** (mode-seeking); forward KL(p‖q) puts it **between** them with the "
        "teacher's mean and variance (mode-covering)."
    ),
)

VIEWS = ("Forward vs reverse KL", "Temperature", "Sequence vs on-policy")
KL, TEMPERATURE, SEQUENCE = VIEWS
DISTANCES = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.5, 6.0, 8.0, 10.0)  # the drag's steps, in teacher widths
D_CHOICES = tuple(f"{d:g}" for d in DISTANCES)
WEIGHTS = ("0.5", "0.4", "0.3")
CAPACITIES = ("1", "2")
X_SHOWN = 12.0  # the figure draws the grid on [-12, 12]
# Illustrative logits over five classes: the teacher's and a student's (the temperature tab's inputs)
TEACHER_LOGITS = (2.5, -0.5, -2.0, 0.7, 1.1)
STUDENT_LOGITS = (1.0, 0.2, -1.3, 2.1, 0.4)
CLASSES = ("class 1", "class 2", "class 3", "class 4", "class 5")
T_SWEEP = tuple(float(t) for t in np.geomspace(0.25, 40.0, 81))
SEQUENCES = ("A A", "A B", "B A", "B B")  # row-major over (y1, y2)
METHODS = ("token-level", "sequence-level", "on-policy")  # core.distillation.sequence_distillation's keys
# What the page calls each student: the third minimises the whole-sequence KL(q || p) exactly, gradient through the
# student's sampling included, which is MiniLLM's objective (Gu et al. 2024), not GKD's (no gradient through sampling)
LABELS = {"token-level": "token-level", "sequence-level": "sequence-level",
          "on-policy": "whole-sequence reverse KL (MiniLLM's objective)"}  # fmt: skip

SPEC = Spec(
    "Distillation",
    (
        Field("dist_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field(
            "dist_d",
            "Modes' distance d (widths)",
            "choice",
            "4",
            choices=D_CHOICES,
            widget="select_slider",
            help="the teacher is two Gaussians of width 1 at −d/2 and +d/2; the row under the figure drags d in "
            "the browser",
        ),
        Field(
            "dist_w",
            "Teacher's left-mode weight w",
            "choice",
            WEIGHTS[0],
            choices=WEIGHTS,
            widget="segmented",
            help="the left mode's share of the teacher's mass; the right mode has 1 − w",
        ),
        Field(
            "dist_k",
            "Student's capacity: Gaussian components",
            "choice",
            CAPACITIES[0],
            choices=CAPACITIES,
            widget="segmented",
            help="1: one Gaussian, which cannot represent two modes; 2: a mixture of two, which can",
        ),
        Field(
            "dist_T",
            "Temperature T",
            "float",
            4.0,
            lo=0.5,
            hi=20.0,
            step=0.5,
            fmt="%.1f",
            help="soft targets softmax(v / T) of the teacher's logits v; the student's logits are divided by the same "
            "T",
        ),
        Field(
            "dist_smooth",
            "Sequence-level student's smoothing ε",
            "float",
            0.05,
            lo=0.0,
            hi=0.3,
            step=0.01,
            fmt="%.2f",
            help="ε/V kept on every token at each position; at 0 the student gives the teacher's other sequences "
            "probability 0 and its forward KL is infinite",
        ),
        ask.switch("predict_dist"),
        ask.guess("guess_dist_mean", "Your guess: the reverse fit's distance from the midpoint", "float", 0.0, 10.0),
    ),
    presets={
        "A1.9.2 / A6.10: forward vs reverse KL, modes far apart": {"dist_view": KL, "dist_d": "8"},
        "Two clear peaks (d = 5): where does the reverse fit sit?": {"dist_view": KL, "dist_d": "5"},
        "Reverse KL picks the heavier mode": {"dist_view": KL, "dist_d": "8", "dist_w": "0.3"},
        "Capacity: a two-component student fits both ways": {"dist_view": KL, "dist_d": "8", "dist_k": "2"},
        "A6.10: the temperature and the T² factor": {"dist_view": TEMPERATURE, "dist_T": 10.0},
        "A6.10: sequence-level vs on-policy distillation": {"dist_view": SEQUENCE, "dist_smooth": 0.05},
    },
)


def _num(x: float, fmt: str = ".3f") -> str:
    return "∞" if math.isinf(x) else format(x, fmt)


def _signed(x: float) -> str:
    """x to two decimals with a true minus sign, and no "−0.00" for a mean that rounds to zero."""
    return f"{round(x, 2) + 0.0:.2f}".replace("-", "−")


@functools.lru_cache(maxsize=8)
def _fits(weight: float, components: int) -> tuple[dist.KLFits, ...]:
    """Both fits at every distance of the drag: the same whatever the page's d, so that a drag step is the page."""
    return tuple(dist.kl_fits(d, weight=weight, components=components) for d in DISTANCES)


def _panel(f: dist.KLFits) -> str:
    fw, rv = f.forward, f.reverse
    lines = [
        f"<b>modes d = {f.distance:g} widths apart</b>",
        f"forward fit: mean {_signed(fw.mean)}, sd {math.sqrt(fw.variance):.2f}",
        f"  KL(p‖q) {fw.forward_kl:.3f}, KL(q‖p) {fw.reverse_kl:.3f}",
        f"reverse fit: mean {_signed(rv.mean)}, sd {math.sqrt(rv.variance):.2f}",
        f"  KL(p‖q) {rv.forward_kl:.3f}, KL(q‖p) {rv.reverse_kl:.3f}",
    ]
    return "<br>".join(lines)


@functools.lru_cache(maxsize=16)
def _kl_fig(weight: float, components: int, at: int, theme: str, pres: bool) -> go.Figure:
    fits = _fits(weight, components)
    x = fits[0].x
    keep = np.flatnonzero(np.abs(x) <= X_SHOWN + 1e-9)[::2]  # every other grid point: spacing 0.1
    dx = float(x[1] - x[0])  # probabilities per grid point / spacing: a density
    return kl_figure(
        x[keep].astype(np.float32),
        [(f.p[keep] / dx).astype(np.float32) for f in fits],
        [(f.forward.q[keep] / dx).astype(np.float32) for f in fits],
        [(f.reverse.q[keep] / dx).astype(np.float32) for f in fits],
        D_CHOICES,
        [_panel(f) for f in fits],
        active=at,
        components=components,
        theme=theme,
        presenter=pres,
    )


@functools.lru_cache(maxsize=4)
def _sweep() -> dist.TemperatureSweep:
    return dist.temperature_sweep(STUDENT_LOGITS, TEACHER_LOGITS, T_SWEEP)


@functools.lru_cache(maxsize=32)
def _students(smoothing: float) -> dict[str, dist.SequenceStudent]:
    return dist.sequence_distillation(dist.TOY_TEACHER, smoothing=smoothing)


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (the three ``VIEWS``; ``main`` is the open tab's), each
    tab's readouts, and the tables behind them.

    Facts: ``predict``, ``reverse_mean`` and ``reverse_offset`` (the reverse fit's mean and its distance from the
    midpoint at the page's d), ``fits`` (the page's :class:`core.distillation.KLFits`).
    """
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.dist_view)
    view = View()
    d_text = state.dist_d if state.dist_d in D_CHOICES else "4"
    at = D_CHOICES.index(d_text)
    weight = float(state.dist_w) if state.dist_w in WEIGHTS else 0.5
    k = int(state.dist_k) if state.dist_k in CAPACITIES else 1
    f = _fits(weight, k)[at]
    fw, rv = f.forward, f.reverse
    offset = abs(rv.mean)  # the modes sit at -d/2 and +d/2: the midpoint is x = 0
    view.facts.update(fits=f, reverse_mean=rv.mean, reverse_offset=offset)
    predicting = ask.mode(state, "predict_dist", "guess_dist_mean")
    view.facts["predict"] = predicting
    question = (
        f"The teacher's two modes are d = {f.distance:g} widths apart. "
        + ("A single Gaussian" if k == 1 else "A two-Gaussian mixture")
        + " is fitted by reverse KL, KL(q‖p). How far from the midpoint between the modes does its mean sit, "
        "in teacher widths?"
    )
    view.readouts = [
        Readout(
            "Forward fit: mean, sd",
            f"{_signed(fw.mean)}, {math.sqrt(fw.variance):.2f}",
            "argmin KL(p‖q): for one Gaussian, the teacher's own mean and variance (moment matching)",
        ),
        Readout(
            "Forward fit: KL(p‖q), KL(q‖p)",
            f"{fw.forward_kl:.3f}, {fw.reverse_kl:.3f}",
            "nats, sums over the grid; the first is the one it minimises",
        ),
        Readout(
            "Reverse fit: mean, sd",
            f"{_signed(rv.mean)}, {math.sqrt(rv.variance):.2f}",
            "argmin KL(q‖p), found numerically; on a tie between the two modes the left one is drawn",
        ),
        Readout(
            "Reverse fit: KL(p‖q), KL(q‖p)",
            f"{rv.forward_kl:.3f}, {rv.reverse_kl:.3f}",
            "nats; the second is the one it minimises",
        ),
    ]
    if KL in parts:
        if predicting == "hidden":
            view.figures[KL] = predict_figure(
                question,
                x_title="x (in teacher widths)",
                y_title="probability density",
                x_range=(-X_SHOWN, X_SHOWN),
                **options.look,
            )
        else:
            view.figures[KL] = _kl_fig(weight, k, at, options.theme, options.presenter)
            view.drags[KL] = Drag("dist_d", D_CHOICES)
    if TEMPERATURE in parts:
        sw = _sweep()
        T = float(state.dist_T)
        p_T = dist.soft_targets(TEACHER_LOGITS, T)
        h = float(dist.soft_target_entropy(TEACHER_LOGITS, T))
        g_raw = float(np.linalg.norm(dist.soft_loss_gradient(STUDENT_LOGITS, TEACHER_LOGITS, T, scaled=False)))
        g_scaled = float(np.linalg.norm(dist.soft_loss_gradient(STUDENT_LOGITS, TEACHER_LOGITS, T, scaled=True)))
        view.figures[TEMPERATURE] = temperature_figure(
            sw.T, sw.teacher_probs, CLASSES, sw.entropy, math.log(len(CLASSES)), sw.grad_norm, sw.scaled_grad_norm,
            sw.limit_grad_norm, T, **options.look,
        )  # fmt: skip
        view.facts["temperature"] = (float(p_T.max()), h, g_raw, g_scaled, sw.limit_grad_norm)
        view.readouts += [
            Readout("Soft targets: the top class's probability", f"{float(p_T.max()):.3f}",
                    f"softmax(v / T) at T = {T:g}, of the teacher's logits v"),
            Readout("Soft targets' entropy H(p_T)", f"{h:.3f}",
                    f"nats; log 5 = {math.log(5):.3f} is the most five classes can have"),
            Readout("Soft loss gradient |∇ KL|, without T²", f"{g_raw:.4f}",
                    "falls about as 1/T² once T is large against the logits"),
            Readout("Soft loss gradient |∇ T² KL|, with T²", f"{g_scaled:.4f}",
                    f"tends to |z − v| / N = {sw.limit_grad_norm:.4f} (centred logits) as T grows"),
        ]  # fmt: skip
        view.tables[TEMPERATURE] = lambda: pd.DataFrame(
            {"T": sw.T, "entropy_nats": sw.entropy, "kl": sw.kl, "soft_loss_T2_kl": sw.loss,
             "grad_norm_without_T2": sw.grad_norm, "grad_norm_with_T2": sw.scaled_grad_norm}
            | {f"p_T_{c.replace(' ', '_')}": sw.teacher_probs[:, i] for i, c in enumerate(CLASSES)}
        )  # fmt: skip
    if SEQUENCE in parts:
        eps = float(state.dist_smooth)
        st = _students(eps)
        teacher = np.asarray(dist.TOY_TEACHER, dtype=float)
        view.figures[SEQUENCE] = sequence_figure(
            SEQUENCES, teacher.ravel(), {LABELS[m]: st[m].joint.ravel() for m in METHODS},
            {LABELS[m]: (st[m].kl_on_teacher_prefixes, st[m].kl_on_own_prefixes) for m in METHODS}, eps,
            **options.look,
        )  # fmt: skip
        view.readouts += [
            Readout(f"{LABELS[m]}: KL(p‖q), KL(q‖p)", f"{_num(st[m].forward_kl)}, {_num(st[m].reverse_kl)}",
                    "over whole two-token sequences, nats" + (f"; smoothing ε = {eps:g}" if m == "sequence-level"
                                                               else ""))
            for m in METHODS
        ]  # fmt: skip
        view.readouts += [
            Readout(f"{LABELS[m]}: q(A A), q(A A or B B)", f"{st[m].mode_mass:.3f}, {st[m].coherent_mass:.3f}",
                    "the teacher gives its mode A A 0.50 and the two consistent answers 0.90")
            for m in METHODS
        ]  # fmt: skip
        view.tables[SEQUENCE] = lambda: pd.DataFrame(
            {"sequence": SEQUENCES, "teacher": teacher.ravel()} | {LABELS[m]: st[m].joint.ravel() for m in METHODS}
        )
    view.tables[KL] = lambda: pd.DataFrame({"x": f.x, "teacher_p": f.p, "forward_fit_q": fw.q, "reverse_fit_q": rv.q})
    if predicting == "hidden":
        ask.hide(view, question, ("Reverse fit",), tables=(KL,))
    elif predicting == "revealed":
        g = float(state.guess_dist_mean)
        if KL in view.figures:
            view.figures[KL] = with_guess(view.figures[KL], g, f"your guess: {g:g}", theme=options.theme)
        ask.reveal(
            view,
            Readout(
                "Reverse fit: distance from the midpoint (the answer)",
                f"{offset:.2f}",
                f"|mean| of argmin KL(q‖p) at d = {f.distance:g}",
            ),
            f"{g:g}",
            f"{g - offset:+.2f}".replace("-", "−"),
            "your guess minus the answer",
            value=offset,
        )
    if "main" in parts:
        view.show_as_main(state.dist_view)
    return with_answers(SPEC, state, view)
