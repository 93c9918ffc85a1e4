"""The training lab's state and what it shows: a tiny GPT's loss curve over its gradient norm (main, with a drag over
the shipped learning-rate sweep), a preset's curve beside the run it is compared with, or a live run's curve with
the session's earlier runs. The shipped curves come from core/data/training_lab.npz (numpy only); a live run, which
imports torch, starts only from the page's Run button (:func:`start_run`)."""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import training_lab as lab
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz.predict import predict_figure, with_guess
from viz.training_lab import lab_figure, series

QUESTION = (
    "What do a healthy loss curve and its gradient norm look like, and how does a learning rate that is too high "
    "show on them?"
)
ANSWER_PHRASES = (
    "ends worse",
    "above the uniform guess",
    "log the gradient norm before clipping",
)

QUICK_CHECK = QuickCheck(
    question=(
        "Your byte-level model's training loss falls from 8 bits per byte to about 4.80 and sits flat for hundreds of "
        "steps. Predicting each byte by its frequency alone gives 4.80 bits on this text. What does the plateau "
        "mean, and what do you check first?"
    ),
    options=(
        "It has learned all it can at this size: train a bigger model",
        "Nothing learns at all: check that gradients reach the weights",
        "It predicts each byte by its frequency alone: check the LR in use",
        "It overfits the training split: add more data or dropout",
    ),
    right=2,
    answer=(
        "4.80 bits per byte is the unigram entropy of the training split: the model predicts each byte by its "
        "frequency and ignores the context (seed 002, A4.4). A learning rate too low or a warm-up too long are the "
        "usual causes: print the learning rate the optimizer actually uses after the warm-up, not the config's value. "
        "A curve flat at 8 bits would mean nothing learns at all (a zero learning rate, gradients not reaching the "
        "weights). In this toy a low rate alone does not stall there: drag the sweep to 1e-4 and its held-out loss "
        "ends at 5.73 bits, still falling. The preset *post-norm: stalls in this toy* (6 layers at the good run's "
        "3e-3) does stall near 4.8, at a normal rate. And a data pipeline whose inputs carry no information about the "
        "targets (a label or shift bug) leaves only the frequencies to learn (seed 002, A4.4's follow-up)."
    ),
)

LR_CHOICES = ("1e-4", "3e-4", "1e-3", "3e-3", "1e-2", "3e-2", "1e-1", "3e-1")
assert tuple(float(x) for x in LR_CHOICES) == lab.SWEEP_LRS
OPTIMIZERS = {"AdamW": "adamw", "SGD": "sgd"}
NORMS = {"pre-norm": "pre", "post-norm": "post"}
CLIPS = ("off", "0.5", "1", "2")
BATCHES = ("4", "8", "16", "32")
BITS = lab.BITS
UNIFORM_BITS = 8.0  # log2 256: a uniform guess over the bytes
POST_MARGIN = 0.5  # nats: the post-norm preset ends at least this far above pre-norm at the same depth (measured 1.01)

GOOD = "A4.4: a good run"
LR_HIGH = "A5.5: learning rate too high"
NO_WARMUP = "A1.6: no warm-up"
POST_DEEP = "post-norm: stalls in this toy"
NO_CLIP = "A1.11: no gradient clipping"
# each preset's core settings and the shipped run it is compared with (its twin), named as the legend shows it
PRESET_RUNS: dict[str, tuple[str, str | None, str]] = {
    GOOD: ("good", None, ""),
    LR_HIGH: ("lr_high", "good", "held-out, peak LR 3e-3"),
    NO_WARMUP: ("no_warmup", "good", "held-out, 20 warm-up steps"),
    POST_DEEP: ("post_deep", "pre_deep", "held-out, pre-norm, same depth"),
    NO_CLIP: ("no_clip", "good", "held-out, clipped at norm 1"),
}


def _fields_of(s: lab.Settings) -> dict[str, Any]:
    """The page's field values for core settings ``s``."""
    return {
        "lab_lr": f"{s.lr:.0e}".replace("e-0", "e-"),
        "lab_warmup": s.warmup,
        "lab_schedule": s.schedule,
        "lab_optimizer": {v: k for k, v in OPTIMIZERS.items()}[s.optimizer],
        "lab_batch": str(s.batch),
        "lab_norm": {v: k for k, v in NORMS.items()}[s.norm],
        "lab_layers": s.layers,
        "lab_clip": "off" if s.clip is None else f"{s.clip:g}",
        "lab_steps": s.steps,
        "lab_seed": s.seed,
    }


SPEC = Spec(
    "Training_lab",
    (
        Field(
            "lab_lr",
            "Peak learning rate",
            "choice",
            "3e-3",
            choices=LR_CHOICES,
            widget="select_slider",
            help="the shipped sweep's values, half a decade apart. The row under the figure drags it in the browser "
            "at the page's other defaults.",
        ),
        Field(
            "lab_warmup",
            "Warm-up (steps)",
            "int",
            20,
            lo=0,
            hi=200,
            step=10,
            help="linear from peak/warm-up to the peak",
        ),
        Field(
            "lab_schedule",
            "Schedule after the warm-up",
            "choice",
            "cosine",
            choices=lab.SCHEDULES,
            help="the schedules page's shapes: cosine; WSD, flat then a linear decay over the last 20%; linear, a "
            "decay over the whole run; constant. Cosine, WSD and linear each end at 10% of the peak; constant stays "
            "at the peak",
        ),
        Field(
            "lab_optimizer",
            "Optimizer",
            "choice",
            "AdamW",
            choices=tuple(OPTIMIZERS),
            widget="segmented",
            help="AdamW: β = 0.9, 0.95, weight decay 0.1 on the matrices. SGD: momentum 0.9",
        ),
        Field("lab_batch", "Batch (windows of 64 bytes)", "choice", "16", choices=BATCHES, widget="segmented"),
        Field(
            "lab_norm",
            "Normalisation",
            "choice",
            "pre-norm",
            choices=tuple(NORMS),
            widget="segmented",
            help="pre-norm: x + f(RMSNorm(x)); post-norm: RMSNorm(x + f(x))",
        ),
        Field("lab_layers", "Layers", "int", 2, lo=1, hi=8, step=1),
        Field("lab_clip", "Gradient clipping (max global norm)", "choice", "1", choices=CLIPS, widget="segmented"),
        Field("lab_steps", "Steps", "int", lab.LAB_STEPS, lo=10, hi=600, step=10),
        Field("lab_seed", "Seed", "int", 0, lo=0, hi=9999, step=1),
        ask.switch("predict_lab"),
        ask.guess(
            "guess_lab_bits", "Your guess: held-out bits per byte at the end", "float", 0.0, 16.0, step=0.1, fmt="%.2f"
        ),
    ),
    presets={name: _fields_of(lab.PRESETS[runs[0]]) for name, runs in PRESET_RUNS.items()},
)


def settings_of(state: State) -> tuple[lab.Settings, list[str]]:
    """The core settings of a page state, and notes on values adjusted to make a valid run."""
    notes = []
    steps = int(state.lab_steps)
    warmup = int(state.lab_warmup)
    if warmup >= steps:
        warmup = steps // 2
        notes.append(f"A warm-up of {int(state.lab_warmup)} steps is not shorter than the run: using {warmup}.")
    clip = None if state.lab_clip == "off" else float(state.lab_clip)
    s = lab.Settings(
        lr=float(state.lab_lr), warmup=warmup, schedule=state.lab_schedule, optimizer=OPTIMIZERS[state.lab_optimizer],
        batch=int(state.lab_batch), norm=NORMS[state.lab_norm], layers=int(state.lab_layers), clip=clip,
        steps=steps, seed=int(state.lab_seed),
    )  # fmt: skip
    return s, notes


@functools.cache
def shipped() -> dict[str, lab.Curve]:
    """The shipped curves by settings key (numpy only)."""
    return lab.load_sweep()[0]


def _series(c: lab.Curve) -> dict[str, Any]:
    return series(np.arange(1, c.steps_done + 1), c.loss * BITS, c.val_steps, c.val_loss * BITS, c.grad_norm,
                  c.layer_grad_norm)  # fmt: skip


def _top(c: lab.Curve) -> tuple[float, int]:
    """(highest train loss in bits, its step); inf for a NaN/inf loss."""
    loss = np.where(np.isfinite(c.loss), c.loss, np.inf)
    i = int(np.argmax(loss))
    return float(loss[i] * BITS), i + 1


def _excursion(c: lab.Curve, diverged: str, spike: str, below: str) -> str:
    """Which text fits ``c``: diverged (NaN/inf, or still above the uniform guess at the end), a spike above it that
    recovered (seed 002, A5.5: fast recovery), or never above it."""
    return diverged if lab.diverged(c) else spike if lab.above_uniform(c) else below


def _panel(c: lab.Curve, head: str) -> str:
    top, at = _top(c)
    end = (
        "no evaluation yet"
        if not c.val_loss.size
        else f"held-out at step {int(c.val_steps[-1])}: {c.final_val * BITS:.2f} bits/byte"
    )
    peak = _excursion(
        c,
        "above the uniform guess: diverged",
        "above the uniform guess, then back: a spike",
        "never above the uniform guess",
    )
    return "<br>".join([f"<b>{head}</b>", end, f"highest train loss: {top:.2f} bits (step {at})", peak])


def _readouts(c: lab.Curve, source: str, source_help: str) -> list[Readout]:
    top, at = _top(c)
    g = int(np.argmax(np.where(np.isfinite(c.grad_norm), c.grad_norm, np.inf))) if c.steps_done else 0
    clip = c.settings.clip
    out = []
    if c.val_loss.size:
        out.append(Readout("Held-out loss, last evaluation", f"{c.final_val * BITS:.2f} bits/byte",
                           f"step {int(c.val_steps[-1])}, {c.final_val:.3f} nats per byte, on the first "
                           f"{lab.VAL_WINDOWS} held-out windows of 64 bytes"))  # fmt: skip
    out += [
        Readout("Highest train loss", f"{top:.2f} bits/byte",
                f"at step {at}: " + _excursion(c, "above the uniform guess's 8 bits: the run diverged",
                                               "above the uniform guess's 8 bits, then back below: a spike with fast "
                                               "recovery", "never above the uniform guess's 8 bits")),
        Readout("Peak gradient norm", f"{c.grad_norm[g]:.3g}" if c.steps_done else "—",
                f"before clipping, at step {g + 1}; " + ("no clipping" if clip is None else f"clipped to {clip:g}")),
        Readout("Curve", source, source_help),
    ]  # fmt: skip
    return out


def _label(lr: float) -> str:
    return LR_CHOICES[lab.SWEEP_LRS.index(lr)]


def describe(s: lab.Settings) -> str:
    """The settings of a run in words: its peak learning rate and every other setting that differs from the page's
    defaults (the predict-first question names them all)."""
    d = lab.DEFAULT
    parts = [f"a peak learning rate of {_label(s.lr)}"]
    if s.warmup != d.warmup:
        parts.append("no warm-up" if s.warmup == 0 else f"{s.warmup} warm-up steps")
    if s.schedule != d.schedule:
        parts.append(f"a {s.schedule} schedule")
    if s.optimizer != d.optimizer:
        parts.append({v: k for k, v in OPTIMIZERS.items()}[s.optimizer])
    if s.batch != d.batch:
        parts.append(f"a batch of {s.batch} windows")
    if s.norm != d.norm:
        parts.append({v: k for k, v in NORMS.items()}[s.norm])
    if s.layers != d.layers:
        parts.append(f"{s.layers} layers")
    if s.clip != d.clip:
        parts.append("no clipping" if s.clip is None else f"clipping at norm {s.clip:g}")
    if s.steps != d.steps:
        parts.append(f"{s.steps} steps")
    if s.seed != d.seed:
        parts.append(f"seed {s.seed}")
    return ", ".join(parts)


def _others(runs: Sequence[tuple[str, lab.Curve]]) -> list[tuple[str, dict[str, Any]]]:
    return [(name, _series(c)) for name, c in runs]


def figures(
    state: State,
    options: Options = DEFAULT,
    runs: Sequence[tuple[str, lab.Curve]] = (),
    live: lab.Curve | None = None,
) -> View:
    """The main figure for ``state``: the shipped sweep with its drag at the page's other defaults, a preset's shipped
    curve with the run it is compared with, ``live`` (a run the page trained at these settings), or, for settings
    neither holds, the nearest shipped curve with a notice. ``runs``: the session's earlier runs, overlaid.

    Facts: ``shipped`` (the settings have a shipped curve), ``curve`` (the curve shown), ``diverged``, ``spike`` (above
    the uniform guess and back), ``predict``, ``settings``. Bad input gives a note, never an exception.

    Predict first asks about the curve shown (its settings, every one that differs from the defaults named, and its
    last evaluation's step), so that the answer is that curve's number."""
    view = View()
    s, notes = settings_of(state)
    view.notices += [("info", n) for n in notes]
    curves = shipped()
    look = options.look
    at_sweep = replace(s, lr=lab.DEFAULT.lr) == lab.DEFAULT
    title = "Your run: loss and gradient norm"
    twin: list[tuple[str, lab.Curve]] = []
    if live is not None:
        c, source, source_help = live, "live run", "trained on this machine with these settings"
        if live.stopped:
            source_help = f"stopped at step {live.steps_done} of {s.steps}"
    elif s.key() in curves:
        c, source, source_help = curves[s.key()], "shipped", "precomputed by make lab-sweep at these settings"
        title = "A shipped run: loss and gradient norm"
        for name, (mine, other, legend) in PRESET_RUNS.items():
            if other is not None and lab.PRESETS[mine] == s:
                twin = [(legend, curves[lab.PRESETS[other].key()])]
                if not at_sweep:  # a step of the sweep keeps the sweep's figure (its drag draws the same title)
                    title = f"{name.split(': ', 1)[1].capitalize()}, against its twin"
    else:
        near = replace(lab.DEFAULT, lr=s.lr)
        c, source, source_help = (
            curves[near.key()],
            "nearest shipped",
            f"peak LR {_label(s.lr)}, the defaults otherwise",
        )
        note = (
            "Not precomputed: press Run to train these settings (at most 30 s). The figure shows the nearest shipped "
            f"curve, peak LR {_label(s.lr)} at the page's defaults."
        )
        view.notices.append(("info", note))
        title = "Not precomputed: the nearest shipped curve"
    view.facts.update(shipped=s.key() in curves, curve=c, diverged=lab.diverged(c),
                      spike=lab.above_uniform(c) and not lab.diverged(c), settings=s)  # fmt: skip
    predicting = ask.mode(state, "predict_lab", "guess_lab_bits") if c.val_loss.size else "off"
    view.facts["predict"] = predicting
    asked = int(c.val_steps[-1]) if c.val_loss.size else c.steps_done
    question = (
        f"At {describe(c.settings)}, what held-out loss in bits per byte does the run reach at step {asked}? "
        "A uniform guess over the 256 bytes is 8."
    )
    if predicting == "hidden":
        view.figures["main"] = predict_figure(question, x_title="step", y_title="loss (bits per byte)",
                                              x_range=(0, c.settings.steps), y_range=(0, 9), **look)  # fmt: skip
    elif at_sweep and live is None:
        sweep = [curves[replace(lab.DEFAULT, lr=lr).key()] for lr in lab.SWEEP_LRS]
        panels = [_panel(x, f"peak LR {label}") for x, label in zip(sweep, LR_CHOICES, strict=True)]
        # no twin here: the sweep's drag swaps the traces of each step in the browser and cannot add one; the LR too
        # high preset's twin is the sweep's own 3e-3 step, and its readout gives the twin's number
        view.figures["main"] = lab_figure([_series(x) for x in sweep], panels, active=lab.SWEEP_LRS.index(s.lr),
                                          labels=LR_CHOICES, title="Loss and gradient norm by peak learning rate",
                                          others=_others(runs), **look)  # fmt: skip
        view.drags["main"] = Drag("lab_lr", LR_CHOICES)
    else:
        head = {"live run": "this run", "shipped": "shipped curve"}.get(source, f"nearest: peak LR {_label(s.lr)}")
        view.figures["main"] = lab_figure([_series(c)], [_panel(c, head)], title=title,
                                          others=_others([*twin, *runs]), **look)  # fmt: skip
    view.readouts = _readouts(c, source, source_help)
    if twin:
        tc = twin[0][1]
        view.readouts.insert(1, Readout("Its twin's held-out loss", f"{tc.final_val * BITS:.2f} bits/byte",
                                        twin[0][0].removeprefix("held-out, ")))  # fmt: skip
    view.tables["main"] = lambda: pd.DataFrame(
        {
            "step": np.arange(1, c.steps_done + 1),
            "lr": c.lr,
            "train_loss_nats": c.loss,
            "grad_norm": c.grad_norm,
            **{f"grad_norm_layer_{i + 1}": c.layer_grad_norm[:, i] for i in range(c.layer_grad_norm.shape[1])},
            "held_out_loss_nats": [
                float(c.val_loss[list(c.val_steps).index(k)]) if k in set(c.val_steps.tolist()) else math.nan
                for k in range(1, c.steps_done + 1)
            ],
        }
    )
    if predicting == "hidden":
        ask.hide(view, question, ("Held-out loss", "Highest train loss", "Peak gradient norm", "Its twin"),
                 tables=("main",))  # fmt: skip
    elif predicting == "revealed":
        g = float(state.guess_lab_bits)
        truth = c.final_val * BITS
        view.figures["main"] = with_guess(view.figures["main"], g, f"your guess: {g:.2f} bits/byte", axis="y",
                                          theme=options.theme)  # fmt: skip
        answer = Readout("Held-out loss (the answer)", f"{truth:.2f} bits/byte", f"at step {asked}")
        error = f"{g - truth:+.2f}".replace("-", "−")
        ask.reveal(view, answer, f"{g:.2f}", error, "your guess minus the answer, bits per byte", value=truth)
    return with_answers(SPEC, state, view)


# The server process's live runs: one at a time (a second session gets a message, not a queue), trained in a thread
# of their own so that the session's page keeps answering (its Stop button, its other controls) while the curve
# grows; the finished ones kept by their settings, so that the same settings never train twice. Module state is
# process-wide: pages/19_Training_lab.py reads it.
RUN_LOCK = threading.Lock()
DONE: dict[str, lab.Curve] = {}
DONE_MAX = 32
RUN_LIMIT_S = 30.0  # a live run stops itself after this long


@dataclass
class LiveRun:
    """A run in its thread: the records train() has passed on so far, a stop flag, and the curve once done."""

    settings: lab.Settings
    label: str
    records: list[dict[str, Any]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.perf_counter)
    curve: lab.Curve | None = None
    error: str | None = None

    def partial(self) -> lab.Curve:
        """The curve so far."""
        return partial_curve(self.settings, list(self.records))


def start_live(state: State) -> LiveRun | None:
    """Start training the settings of ``state`` in a thread (torch is imported there); None while another run holds
    the process's lock."""
    if not RUN_LOCK.acquire(blocking=False):
        return None
    s = settings_of(state)[0]
    job = LiveRun(s, run_label(state))

    def should_stop() -> bool:
        return job.stop.is_set() or time.perf_counter() - job.started > RUN_LIMIT_S

    def work() -> None:
        try:
            job.curve = lab.run(s, on_step=lambda step, rec: job.records.append(rec), should_stop=should_stop)
            if not job.curve.stopped:
                DONE[s.key()] = job.curve
                while len(DONE) > DONE_MAX:
                    DONE.pop(next(iter(DONE)))
        except Exception as e:  # a message on the page, never a dead lock
            job.error = f"{type(e).__name__}: {e}"
        finally:
            RUN_LOCK.release()
            job.done.set()

    threading.Thread(target=work, name="training-lab-run", daemon=True).start()
    return job


def growing_figure(job: LiveRun, options: Options = DEFAULT, hidden: bool = False) -> go.Figure | None:
    """The running curve's figure (None before its first step, and while predict first hides the answer: the curve
    and its panel would print the held-out loss the question asks for)."""
    c = job.partial()
    if not c.steps_done or hidden:
        return None
    head = f"step {c.steps_done} of {job.settings.steps}"
    return lab_figure([_series(c)], [_panel(c, head)], title="Training: the curve so far", **options.look)


def partial_curve(s: lab.Settings, records: Sequence[dict[str, Any]]) -> lab.Curve:
    """A curve from the records a running train() has passed to on_step so far (the live figure while it grows)."""
    val = [(i + 1, r["val_loss"]) for i, r in enumerate(records) if "val_loss" in r]
    layers = np.asarray([r["layer_grad_norm"] for r in records], dtype=float).reshape(len(records), s.layers)
    return lab.Curve(
        s, np.asarray([r["loss"] for r in records], dtype=float), np.asarray([r["grad_norm"] for r in records], float),
        layers, np.asarray([r["lr"] for r in records], float), np.asarray([v[0] for v in val], dtype=np.int64),
        np.asarray([v[1] for v in val], dtype=float), stopped=True,
    )  # fmt: skip


def settings_key(state: State) -> str:
    """The key a live run is cached under."""
    return settings_of(state)[0].key()


def run_label(state: State) -> str:
    """A short name of a run's settings for the legend of later runs."""
    s = settings_of(state)[0]
    clip = "no clip" if s.clip is None else f"clip {s.clip:g}"
    return (f"run: LR {_label(s.lr)}, warm-up {s.warmup}, {s.schedule}, {state.lab_optimizer}, batch {s.batch}, "
            f"{state.lab_norm}, {s.layers} layers, {clip}")  # fmt: skip
