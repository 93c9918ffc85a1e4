"""The schedules page's state and what it shows: cosine against WSD with their modelled loss, WSD decays branched
off the stable phase, Kaplan's short runs read off a long cosine, and the data mixture during the decay."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core import schedules
from views import DEFAULT, Drag, Options, Readout, View
from views.state import Field, Spec, State
from viz.schedules import kaplan_figure, mixture_figure, schedule_figure, wsd_branch_figure, wsd_name

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = (
    "Why do some recent runs (MiniCPM, for one) use a warm-up-stable-decay (WSD) schedule"
    " instead of cosine, and what was wrong with Kaplan et al.'s scaling runs?"
)
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "when the learning rate decays",
    "branch a decay",
    "fixes the run's length",
    "ties you to a length",
    "0.03 nats too high",
)

VIEWS = ("WSD branches", "Kaplan's read-off", "Data mixture")
SHAPES = schedules.DECAY_SHAPES  # linear, cosine, 1-sqrt (Hägele et al. 2024)
KAPLAN_FRACTIONS = (0.1, 0.25, 0.5, 0.75)  # further short runs read off the long cosine, as fractions of it
# the WSD decay's drag: 0.01 and every 0.02 to 1 (51 curves of the run, about 4 kB each), and the page's own share
DECAY_SHARES = (0.01, *(round(0.02 * k, 2) for k in range(1, 51)))

SPEC = Spec(
    "Schedules",
    (
        Field("run_steps", "Run length (steps)", "int", 10_000, lo=100, hi=200_000, step=1000),
        Field(
            "warmup",
            "Warm-up (steps)",
            "int",
            100,
            lo=0,
            hi=100_000,
            step=10,
            help="about 1-2% of the run (seed 002, A1.6)",
        ),
        Field("lr_floor", "Final LR / peak", "float", 0.1, lo=0.0, hi=1.0, step=0.01, widget="slider"),
        Field("wsd_decay", "WSD decay (share of the run)", "float", 0.2, lo=0.01, hi=1.0, step=0.01, widget="slider"),
        Field(
            "wsd_shape",
            "WSD decay shape",
            "choice",
            "linear",
            choices=SHAPES,
            widget="segmented",
            help="How the LR falls from the peak to the floor over the decay, at progress u from 0 to 1: linear; "
            "cosine, a half cosine wave; 1-sqrt, floor + (peak - floor)(1 - √u), a fast drop and then a slow approach "
            "to the floor (Hägele et al. 2024's cool-down, which decays to 0, with a floor added as in Hugging Face's "
            "get_wsd_schedule).",
        ),
        Field("sched_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field("branch_at", "Branch the decay at step", "int", 5000, lo=2, hi=200_000, step=100),
        Field("kaplan_n", "Short run (steps)", "int", 2500, lo=2, hi=200_000, step=100),
    ),
    presets={
        "Lesson defaults: 10,000 steps, WSD 20% decay": {
            "run_steps": 10_000,
            "warmup": 100,
            "lr_floor": 0.1,
            "wsd_decay": 0.2,
            "wsd_shape": "linear",
        },
        "Kaplan: a 2,500-step run read off 10,000": {
            "sched_view": "Kaplan's read-off",
            "run_steps": 10_000,
            "kaplan_n": 2500,
        },
        "Branch a WSD decay at step 3,000": {"sched_view": "WSD branches", "run_steps": 10_000, "branch_at": 3000},
        "Mid-training: the best data during the decay": {"sched_view": "Data mixture", "wsd_decay": 0.2},
        "Long warm-up (10%)": {"warmup": 1000},
    },
)


def _settings(state: State) -> tuple[int, int, int, list[tuple[str, str]]]:
    """(steps, warm-up, WSD decay steps, notices), with values that cannot fit the run brought inside it."""
    notices: list[tuple[str, str]] = []
    steps = int(state.run_steps)
    W = int(state.warmup)
    if W >= steps // 2:
        W = max(1, steps // 100)
        notices.append(
            ("warning", f"A warm-up of {state.warmup:,} steps does not fit a {steps:,}-step run; using {W}.")
        )
    D = _decay_steps(float(state.wsd_decay), steps, W)
    if D < round(float(state.wsd_decay) * steps):
        notices.append(("info", f"The WSD decay was shortened to {D:,} steps to fit after the warm-up."))
    return steps, W, D, notices


def _decay_steps(share: float, steps: int, W: int) -> int:
    """The WSD decay's steps for a share of the run: at least one, and at least one stable step after the warm-up
    (so that a decay can branch off it)."""
    return min(max(1, round(share * steps)), steps - W - 1)


def _decay_label(share: float, D: int, steps: int) -> str:
    """The WSD trace's name at one decay share: the share and its steps, and when the warm-up shortened it."""
    x = f"{share:.2f}" if round(share, 2) == share else f"{share:g}"
    if D < round(share * steps):
        return f"{x} of the run, shortened to {D:,} steps (after the warm-up)"
    return f"{x} of the run ({D:,} steps)"


def figures(state: State, options: Options = DEFAULT) -> View:
    """Schedules with their modelled loss (``main``) and one figure per tab."""
    view = View()
    steps, W, D, notices = _settings(state)
    view.notices += notices
    floor = float(state.lr_floor)
    try:
        lrs = {
            "warm-up + cosine": schedules.lr_schedule("cosine", steps, warmup=W, final_lr_frac=floor),
            wsd_name(D, state.wsd_shape): schedules.lr_schedule(
                "wsd", steps, warmup=W, final_lr_frac=floor, decay_steps=D, decay_shape=state.wsd_shape
            ),
            "constant": schedules.lr_schedule("constant", steps, warmup=W),
        }
    except ValueError as err:  # a state that bypassed the spec (a deck, a test)
        view.notices.append(("warning", f"These settings give no schedule ({err}); showing the defaults."))
        return figures(SPEC.defaults(), options)
    model = schedules.DEFAULT_LOSS_MODEL
    ends = {name: float(model.loss(lr)[-1]) for name, lr in lrs.items()}
    names = list(lrs)
    # the constant run's -C·S2: only its warm-up's rises (negative annealing), the same in every schedule here
    warmup_term = float(-model.C * model.areas(lrs["constant"])[1][-1])
    constant_note = (
        f"no decay: only the warm-up's rise enters the annealing term (+{warmup_term:.2f} here, the same in every "
        "schedule)"
        if W > 0
        else "no decay and no warm-up: the annealing term is 0"
    )
    view.facts.update(ends=ends, steps=steps, warmup=W, decay=D)
    if options.wants("main"):
        share = float(state.wsd_decay)
        shares = sorted({*DECAY_SHARES, share})
        Ds = [_decay_steps(x, steps, W) for x in shares]
        sweep = schedules.wsd_sweep(
            steps, Ds, warmup=W, final_lr_frac=floor, decay_shape=state.wsd_shape, model=model
        )  # every share's WSD curves in one pass
        labels = [_decay_label(x, D, steps) for x, D in zip(shares, Ds, strict=True)]
        view.figures["main"] = schedule_figure(
            lrs, model, sweep=sweep, active=shares.index(share), labels=labels, **options.look
        )
        view.drags["main"] = Drag("wsd_decay", tuple(shares))
    view.readouts = [
        Readout("Modelled end loss: cosine", f"{ends[names[0]]:.3f}", "Tissue et al. 2024 form, illustrative"),
        Readout("Modelled end loss: WSD", f"{ends[names[1]]:.3f}", f"{D:,} decay steps, {state.wsd_shape}"),
        Readout("Modelled end loss: constant", f"{ends[names[2]]:.3f}", constant_note),
        Readout("Warm-up", f"{W:,} steps", f"{100 * W / steps:.1f}% of the run"),
    ]
    view.tables = {
        "Schedules": lambda: pd.DataFrame(
            {"step": np.arange(1, steps + 1)}
            | {f"lr {n}": lr for n, lr in lrs.items()}
            | {f"loss {n}": model.loss(lr) for n, lr in lrs.items()}
        )
    }

    if options.wants("WSD branches"):
        b = int(state.branch_at)
        if b <= W or b + D > steps:
            b2 = min(max(W + 1, b), steps - D)
            view.notices.append(
                ("warning", f"A decay of {D:,} steps cannot branch at step {b:,} in this run; branching at {b2:,}.")
            )
            b = b2
        branches = sorted({b, *(x for x in (steps // 4, steps // 2) if W < x <= steps - D)})
        shape = {"final_lr_frac": floor, "decay_shape": state.wsd_shape}  # the branches decay as the WSD run does
        view.figures["WSD branches"] = wsd_branch_figure(steps, branches, D, model, warmup=W, **shape, **options.look)
        end = float(model.loss(schedules.wsd_branch(steps, b, D, warmup=W, **shape))[-1])
        view.facts.update(branches=branches, branch=b, branch_end=end)

    if options.wants("Kaplan's read-off"):
        n = int(state.kaplan_n)
        if n > steps:
            view.notices.append(("warning", f"The short run ({n:,} steps) is longer than the run; using {steps:,}."))
            n = steps
        lengths = sorted({n, *(max(2, round(f * steps)) for f in KAPLAN_FRACTIONS)})
        gap = schedules.kaplan_gap(steps, lengths, model, final_lr_frac=floor, warmup=W)
        view.figures["Kaplan's read-off"] = kaplan_figure(
            gap, steps, model, warmup=W, final_lr_frac=floor, **options.look
        )
        i = lengths.index(n)
        view.facts.update(kaplan=gap, kaplan_n=n, read=float(gap.read_from_long[i]), own=float(gap.own_schedule[i]))
        view.readouts.append(
            Readout(
                f"Read off at {n:,} steps",
                f"{gap.read_from_long[i]:.3f}",
                f"the long cosine's loss at that step; against {gap.own_schedule[i]:.3f} with its own cosine: "
                f"{gap.gap[i]:.3f} too high",
            )
        )

    if options.wants("Data mixture"):
        mix = schedules.data_mixture(steps, steps - D)
        view.figures["Data mixture"] = mixture_figure(mix, lrs[names[1]], **options.look)
        view.facts.update(mixture=mix)
        view.readouts.append(
            Readout("Web share: stable → end of decay", f"{mix.weights[0, 0]:.0%} → {mix.weights[-1, 0]:.0%}")
        )
    return view
