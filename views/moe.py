"""The MoE page's state and what it shows: the expert loads of a skewed top-k router against the capacity, kept and
dropped (main, with a drag over the capacity factor), DeepSeek-V3's bias balancing against the same router without
a bias, and total against active parameters with the expert-parallel all-to-all per token (one tab each, built only
when open)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import model_spec as ms
from core import moe
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz.moe import balance_figure, parameters_figure, routing_figure, with_panel_line
from viz.predict import predict_figure

QUESTION = (
    "How does a mixture-of-experts layer route tokens, what is token dropping, and what does the auxiliary balance "
    "loss balance?"
)
ANSWER_PHRASES = (
    "top-k experts",
    "over capacity",
    "fraction of dispatches",
)

QUICK_CHECK = QuickCheck(
    question=(
        "A layer of E = 8 experts routes T = 512 tokens top-2 with a capacity factor of 1.25, each expert's capacity "
        "being 1.25× its even share of the token–expert assignments. How many slots does each expert have, and how "
        "many does the layer have in all?"
    ),
    options=(
        "128 per expert, 1,024 in all",
        "160 per expert, 1,280 in all",
        "80 per expert, 640 in all",
        "40 per expert, 320 in all",
    ),
    right=1,
    answer=(
        "C = ⌈1.25 × 512 × 2 / 8⌉ = **160** slots per expert, so 8 × 160 = **1,280** slots for the 1,024 "
        "assignments: room for all of them in total, yet at the page's defaults (skew 1.5, seed 0) the skewed router "
        "still drops 141 of the 1,024 assignments at its popular experts (128 tokens lose one or both of their "
        "experts; drag the capacity factor under the Routing figure to 1.25)."
    ),
)

VIEWS = ("Routing", "Balancing", "Parameters")
ROUTING, BALANCING, PARAMETERS = VIEWS
FACTORS = (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
CF_CHOICES = tuple(f"{f:g}" for f in FACTORS)  # the field's choices: "0.5", ..., "1", ..., "3"
MODELS = tuple(name for name, spec in ms.CATALOGUE.items() if spec.is_moe)
SPLITS = ("1", "2", "4", "8")
# DeepSeek-V3 dispatches tokens to the experts in FP8 and combines their outputs in BF16 (DeepSeek-AI 2024,
# §3.3.3, and DeepEP's README); the other models: BF16 both ways, an assumption
DISPATCH_BYTES = {"DeepSeek-V3": 1.0}

SPEC = Spec(
    "MoE",
    (
        Field("moe_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field("moe_experts", "Experts E", "int", 8, lo=2, hi=64, step=1),
        Field("moe_top_k", "Top k", "int", 2, lo=1, hi=8, step=1),
        Field("moe_tokens", "Tokens in the batch T", "int", 512, lo=16, hi=4096, step=16),
        Field(
            "moe_skew",
            "Router skew",
            "float",
            1.5,
            lo=0.0,
            hi=5.0,
            step=0.25,
            fmt="%.2f",
            help="added to the logits, falling linearly from expert 0 to expert E − 1 (0: balanced on average)",
        ),
        Field(
            "moe_cf",
            "Capacity factor",
            "choice",
            "1",
            choices=CF_CHOICES,
            widget="segmented",
            help="slots per expert C = ⌈factor · T · k / E⌉. The row under the figure drags it in the browser.",
        ),
        Field("moe_seed", "Seed of the toy router", "int", 0, lo=0, hi=9999, step=1),
        Field("moe_gamma", "Bias update speed γ", "float", 0.01, lo=0.0, hi=0.1, step=0.001, fmt="%.3f"),
        Field(
            "moe_aux_step",
            "Aux-loss step α·η",
            "float",
            1.0,
            lo=0.0,
            hi=5.0,
            step=0.1,
            fmt="%.1f",
            help="the balance loss's weight times the learning rate of the per-expert logit offset it trains: not "
            "comparable to a real run's α (Switch: 0.01) times its learning rate, where the loss trains the whole "
            "router together with the language-model loss",
        ),
        Field("moe_steps", "Steps", "int", 100, lo=10, hi=400, step=10),
        Field("moe_model", "Model", "choice", MODELS[-1], choices=MODELS),
        Field("moe_ep", "Expert-parallel devices", "int", 8, lo=1, hi=256, step=1),
        Field(
            "moe_split",
            "Fine-grained split m",
            "choice",
            "1",
            choices=SPLITS,
            widget="segmented",
            help="cut each of the toy's E experts into m of 1/m the width and route to m·k of them (DeepSeekMoE)",
        ),
        ask.switch("predict_moe"),
        ask.guess("guess_dropped", "Your guess: assignments dropped", "int", 0, 100_000),
    ),
    presets={
        "A2.8: top-2 of 8, skewed, capacity factor 1.0": {
            "moe_experts": 8,
            "moe_top_k": 2,
            "moe_skew": 1.5,
            "moe_cf": "1",
            "moe_view": ROUTING,
        },
        "Switch: top-1, capacity factor 1.25": {
            "moe_experts": 8,
            "moe_top_k": 1,
            "moe_skew": 1.5,
            "moe_cf": "1.25",
            "moe_view": ROUTING,
        },
        "A3.3: DeepSeek-V3's bias balancing": {
            "moe_experts": 16,
            "moe_top_k": 2,
            "moe_skew": 2.0,
            "moe_gamma": 0.01,
            "moe_view": BALANCING,
        },
        "A3.3: DeepSeekMoE's fine-grained split, 16 experts top-2 cut in 4": {
            "moe_experts": 16,
            "moe_top_k": 2,
            "moe_split": "4",
            "moe_view": PARAMETERS,
        },
        "A3.5: Mixtral 8x7B, total against active": {"moe_model": "Mixtral-8x7B", "moe_view": PARAMETERS},
        "A3.3: DeepSeek-V3, 671B resident, 37B active": {
            "moe_model": "DeepSeek-V3",
            "moe_ep": 64,
            "moe_view": PARAMETERS,
        },
    },
)


@functools.lru_cache(maxsize=32)
def _routings(T: int, E: int, k: int, skew: float, seed: int) -> tuple[moe.Routing, ...]:
    logits = moe.toy_router_logits(T, E, skew, seed)
    return tuple(moe.route_tokens(logits, k, f, renormalize=k > 1) for f in FACTORS)


def _panel(r: moe.Routing, f: float) -> str:
    n = r.experts.size
    return "<br>".join(
        [
            f"<b>capacity factor {f:g}</b>",
            f"C = {r.capacity} slots per expert",
            f"dropped: {r.dropped} of {n:,} assignments",
            f"tokens that lost an expert: {r.dropped_tokens}",
        ]
    )


@functools.lru_cache(maxsize=32)
def _routing_fig(T: int, E: int, k: int, skew: float, seed: int, at: int, theme: str, pres: bool) -> go.Figure:
    rs = _routings(T, E, k, skew, seed)
    kept = [r.processed for r in rs]
    dropped = [r.load - r.processed for r in rs]
    panels = [_panel(r, f) for r, f in zip(rs, FACTORS, strict=True)]
    return routing_figure(kept, dropped, [r.capacity for r in rs], FACTORS, panels, active=at, theme=theme,
                          presenter=pres)  # fmt: skip


@functools.lru_cache(maxsize=16)
def _trajectory(steps: int, T: int, E: int, k: int, skew: float, gamma: float, seed: int) -> moe.BalanceTrajectory:
    return moe.balance_trajectory(steps, T, E, k, skew, gamma, seed)


@functools.lru_cache(maxsize=16)
def _aux_trajectory(steps: int, T: int, E: int, k: int, skew: float, step: float, seed: int) -> moe.AuxLossTrajectory:
    return moe.aux_loss_trajectory(steps, T, E, k, skew, step, seed)


def _count(n: int) -> str:
    """A whole count with thousands separators, or in scientific notation above 10¹² (C(512, 64) has 83 digits)."""
    return f"{n:,}" if n < 10**12 else f"{n:.3e}".replace("e+", "e")


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (``Routing``, ``Balancing``, ``Parameters``; ``main`` is the
    open tab's), each tab's readouts, the notes on the input and the table behind the Routing figure.

    Facts: ``dropped``, ``dropped_tokens``, ``capacity``, ``aux``, ``predict``; per tab ``imbalance_end``,
    ``imbalance_none`` (Balancing), ``total``, ``active`` (Parameters). Bad input gives a note, never an exception.
    """
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.moe_view)
    view = View()
    T, E, k = int(state.moe_tokens), int(state.moe_experts), int(state.moe_top_k)
    skew, seed = float(state.moe_skew), int(state.moe_seed)
    if k > E:
        view.notices.append(("info", f"Top k = {k} is more than the {E} experts: using k = {E}."))
        k = E
    f = float(state.moe_cf) if state.moe_cf in CF_CHOICES else 1.0
    at = FACTORS.index(f)
    r = _routings(T, E, k, skew, seed)[at]
    n = r.experts.size
    view.facts.update(dropped=r.dropped, dropped_tokens=r.dropped_tokens, capacity=r.capacity, aux=r.aux_loss)
    predicting = ask.mode(state, "predict_moe", "guess_dropped")
    view.facts["predict"] = predicting
    question = (
        f"{T:,} tokens, top-{k} of {E} experts, skew {skew:g}, capacity factor {f:g}: how many of the {n:,} "
        "assignments are dropped?"
    )
    if ROUTING in parts:
        if predicting == "hidden":
            view.figures[ROUTING] = predict_figure(
                question, x_title="expert", y_title="assignments (token, expert)", x_range=(-0.5, E - 0.5),
                y_range=(0, 3 * math.ceil(T * k / E)), **options.look,
            )  # fmt: skip
        else:
            view.figures[ROUTING] = _routing_fig(T, E, k, skew, seed, at, options.theme, options.presenter)
            view.drags[ROUTING] = Drag("moe_cf", CF_CHOICES)
    view.readouts = [
        Readout("Capacity C", f"{r.capacity}", f"⌈{f:g} · {T} · {k} / {E}⌉ slots per expert"),
        Readout(
            "Assignments dropped",
            f"{r.dropped:,} of {n:,}",
            "beyond C: the token gets nothing from that expert; its other experts and the residual still carry it",
        ),
        Readout(
            "Tokens that lost an expert",
            f"{r.dropped_tokens:,} of {T:,}",
            "slots filled token by token, each token's choices best first; another order (all first choices "
            "before any second, as GShard-style code does) gives another count, the dropped total stays",
        ),
        Readout(
            "Balance loss E·Σ f·P",
            f"{r.aux_loss:.3f}",
            "Switch Transformer's loss without its α, f normalised to sum to 1: 1 at uniform routing",
        ),
    ]
    if BALANCING in parts:
        steps, gamma, step = int(state.moe_steps), float(state.moe_gamma), float(state.moe_aux_step)
        tr = _trajectory(steps, T, E, k, skew, gamma, seed)
        ax = _aux_trajectory(steps, T, E, k, skew, step, seed)
        if predicting == "hidden":  # its curves' hover gives the loads, a hint at the answer
            view.figures[BALANCING] = predict_figure(
                question, x_title="step (a fresh batch each)", y_title="max ÷ mean load", x_range=(1, steps),
                y_range=(0, 3), **options.look,
            )  # fmt: skip
        else:
            view.figures[BALANCING] = balance_figure(
                tr.imbalance_without_bias, ax.imbalance, tr.imbalance, ax.prob_shift, **options.look
            )
        tail = max(1, steps // 10)
        end, none = float(tr.imbalance[-tail:].mean()), float(tr.imbalance_without_bias[-tail:].mean())
        aux_end, shift = float(ax.imbalance[-tail:].mean()), float(ax.prob_shift[-tail:].mean())
        moved_aux, moved_bias = float(ax.rerouted[-tail:].mean()), float(tr.rerouted[-tail:].mean())
        view.facts.update(imbalance_end=end, imbalance_none=none, imbalance_aux=aux_end, prob_shift=shift,
                          rerouted=(moved_aux, moved_bias))  # fmt: skip
        last = f"mean of the last {tail} steps"
        view.readouts += [
            Readout("Max ÷ mean load, no balancing", f"{none:.2f}", last),
            Readout("Max ÷ mean load, auxiliary loss", f"{aux_end:.2f}",
                    f"{last}, α·η = {step:g}: which method balances more here follows the two step sizes"),
            Readout("Max ÷ mean load, selection bias", f"{end:.2f}", f"{last}, γ = {gamma:g}"),
            Readout("Assignments off the router's own top k", f"{100 * moved_aux:.0f}% / {100 * moved_bias:.0f}%",
                    f"auxiliary loss / selection bias, {last}: the share outside the top k of the unbalanced logits; "
                    "the loss retrains the router, the bias overrides only the selection"),
            Readout("Router probabilities moved by the loss", f"{shift:.2f}",
                    f"{last}: mean total variation from the router's own; the bias leaves the affinities as they "
                    "are. No language-model loss trains this toy, so neither number is a cost in quality"),
        ]  # fmt: skip
    if PARAMETERS in parts:
        name = state.moe_model if state.moe_model in MODELS else MODELS[-1]
        specs = [ms.CATALOGUE[m] for m in MODELS]
        breakdowns = [ms.param_breakdown(s) for s in specs]
        totals = [b.total for b in breakdowns]
        actives = [b.active for b in breakdowns]
        i = MODELS.index(name)
        spec, b = specs[i], breakdowns[i]
        view.figures[PARAMETERS] = parameters_figure(MODELS, totals, actives, i, **options.look)
        ep = int(state.moe_ep)
        if spec.n_experts % ep:
            fit = max(d for d in range(1, min(ep, spec.n_experts) + 1) if spec.n_experts % d == 0)
            note = (
                f"{spec.n_experts} experts fill at most {spec.n_experts} devices: using {fit}."
                if ep > spec.n_experts
                else f"{spec.n_experts} experts do not split evenly over {ep} devices: using {fit}."
            )
            view.notices.append(("info", note))
            ep = fit
        dispatch = DISPATCH_BYTES.get(name, 2.0)
        # a token is sent once to each remote device that holds one of its experts (DeepEP), or once per expert
        a2a = moe.all_to_all_bytes_per_token(
            spec.d_model,
            spec.top_k,
            dispatch,
            combine_bytes_per_value=2.0,
            ep_size=ep,
            n_experts=spec.n_experts,
            dedup=True,
        )
        a2a_each = moe.all_to_all_bytes_per_token(spec.d_model, spec.top_k, dispatch, combine_bytes_per_value=2.0,
                                                  ep_size=ep)  # fmt: skip
        # forward FLOPs per token ~ 2 per active weight that multiplies: the input embedding is a lookup
        flops = 2 * (b.active - b.embedding)
        m = int(state.moe_split) if state.moe_split in SPLITS else 1
        split = moe.fine_grained_split(E, k, 1, m)
        view.facts.update(total=totals[i], active=actives[i], a2a=a2a, a2a_each=a2a_each, flops=flops,
                          combos=(split.combinations_before, split.combinations_after))  # fmt: skip
        shared = (
            f"{spec.n_shared_experts} shared (every token) + {spec.top_k} of {spec.n_experts} routed"
            if spec.n_shared_experts
            else f"{spec.top_k} of {spec.n_experts}, no shared expert"
        )
        precision = "FP8 out, BF16 back (DeepSeek-V3 §3.3.3; DeepEP)" if dispatch == 1.0 else "BF16 both ways (assumed)"
        view.readouts += [
            Readout(f"{name}: total", f"{totals[i] / 1e9:.1f}B",
                    f"{totals[i] * 2 / 1e9:,.0f} GB of weights in bf16, {totals[i] / 1e9:,.0f} GB in FP8: memory "
                    "follows the total"),
            Readout("Active per token", f"{actives[i] / 1e9:.1f}B",
                    f"about {flops / 1e9:.1f} GFLOPs per token forward: 2 per active weight, the embedding lookup "
                    "left out, attention over the context on top"),
            Readout("Experts per MoE layer", shared, f"experts of width {spec.d_expert:,} (SwiGLU)"),
            Readout("All-to-all per token and MoE layer", f"{a2a / 1024:.1f} KiB",
                    f"forward, dispatch and combine, {precision}, {ep} devices, uniform routing, a token sent once to "
                    f"each remote device that holds one of its experts; once per remote expert: "
                    f"{a2a_each / 1024:.1f} KiB. Payload only"),
            Readout(f"Split the toy's experts m = {m}",
                    f"{_count(split.combinations_before)} → {_count(split.combinations_after)}",
                    f"expert combinations per token, C({E}, {k}) → C({split.n_experts}, {split.top_k}), at the "
                    "same expert parameters and expert FLOPs (DeepSeekMoE, Dai et al. 2024)"
                    + (f"; the router grows from D·{E} to D·{split.n_experts} weights" if m > 1 else "")),
        ]  # fmt: skip
    view.tables[ROUTING] = lambda: pd.DataFrame(
        {
            "expert": np.arange(E),
            "assigned": r.load,
            "kept": r.processed,
            "dropped": r.load - r.processed,
            "capacity": r.capacity,
        }
    )
    if predicting == "hidden":
        # the loads above the tabs and on the Balancing tab hint at the answer too (max ÷ mean load times T·k/E)
        hints = ("Balance loss E·Σ f·P", "Max ÷ mean load, no balancing", "Max ÷ mean load, auxiliary loss",
                 "Max ÷ mean load, selection bias", "Assignments off the router's own top k")  # fmt: skip
        ask.hide(view, question, ("Assignments dropped", "Tokens that lost an expert", *hints), tables=(ROUTING,))
    elif predicting == "revealed":
        g = int(state.guess_dropped)
        if ROUTING in view.figures:
            view.figures[ROUTING] = with_panel_line(view.figures[ROUTING], f"<i>your guess: {g} dropped</i>")
        ask.reveal(
            view,
            Readout("Assignments dropped (the answer)", f"{r.dropped}", f"of {n:,}"),
            f"{g}",
            f"{g - r.dropped:+d}".replace("-", "−"),
            "your guess minus the answer",
            value=r.dropped,
        )
    if "main" in parts and state.moe_view in view.figures:
        view.figures["main"] = view.figures[state.moe_view]
        if state.moe_view in view.drags:
            view.drags["main"] = view.drags[state.moe_view]
    return with_answers(SPEC, state, view)
