"""The GRPO page's state and what it shows: one group's advantages (main), and, when asked for, the tabs: which
prompts teach, PPO vs GRPO, and normalising within the group vs across the batch."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core import grpo
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, inputs, with_answers
from views import predict as ask
from views.state import Answer, Field, Spec, State
from viz import format as fmt
from viz.grpo import (
    EpsSweep,
    grpo_advantages_figure,
    grpo_batch_contrast_figure,
    grpo_difficulty_figure,
    ppo_vs_grpo_figure,
    ppo_vs_grpo_table,
)
from viz.predict import predict_figure, with_guess

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "How does GRPO get rid of PPO's value model, and what does that cost?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "group's mean reward is the baseline",
    "teaches nothing",
    "second trainable full-size model",
)

QUICK_CHECK = QuickCheck(
    question=(
        "In GRPO, a group of **4 answers** to one prompt all get **reward 1** (binary correctness reward, nothing "
        "else). What policy-gradient signal does the group give, and what can you do about it?"
    ),
    options=(
        "None: every advantage is 0; drop such groups and sample other prompts",
        "A positive one: all 4 answers are reinforced; keep the group as it is",
        "None with the std division; drop the std (Dr. GRPO) to get a positive one",
    ),
    right=0,
    answer=(
        "**None.** Every reward equals the mean, so every advantage is 0 in every mode (r − mean is 0 before any "
        "division, so dropping the std, as Dr. GRPO does, changes nothing); only the KL term acts, where the loss has "
        "one (DeepSeekMath's β = 0.04; DAPO has none, and the group then adds nothing to the gradient). "
        "Vanilla GRPO keeps the group anyway: it still counts in the loss's normaliser and still feels the KL term. "
        "Drop such groups and sample other prompts (DAPO's dynamic sampling, Yu et al. 2025), or pick prompts of "
        "medium difficulty for the current model. Try the preset *All correct (no signal)*."
    ),
)

DEFAULT_REWARDS = "1,0,0,1,1,0,0,0"  # worked example C
VIEWS = ("Which prompts teach?", "PPO vs GRPO", "Within group vs batch")  # the tabs, and the parts they show
DIFFICULTY, PPO, BATCH = VIEWS
SHORT = {"population": "population std, ÷G", "sample": "sample std, ÷(G−1)", "none": "no std, Dr. GRPO"}
LENGTHS, MAX_LENGTH = (100, 200, 400, 1600), 2048  # the batch tab's length table: answer lengths, budget L_max
# URL text -> ε: 0, then 1, 2 and 5 per decade from 10⁻⁸ to 0.1 (the steps of the ε slider under the bars)
EPS = {"0": 0.0} | {f"{m}e-{d}": float(f"{m}e-{d}") for d in range(8, 1, -1) for m in (1, 2, 5)} | {"0.1": 0.1}


def _preset(p: grpo.GroupPreset) -> dict[str, str]:
    return {
        "rewards": inputs.format_rewards(p.rewards),
        "std": p.std,
        "eps": next(k for k, v in EPS.items() if v == p.eps),
    }


SPEC = Spec(
    "GRPO",
    (
        Field(
            "rewards",
            f"Rewards, one per answer ({grpo.G_MIN} to {grpo.G_MAX})",
            "text",
            DEFAULT_REWARDS,
            aliases=("r",),
            help="1 = the checker accepts the answer, 0 = it does not; or any real scores from a reward model. "
            "Commas or spaces between them. Clicking a bar flips that answer's reward.",
        ),
        Field(
            "std",
            "Divide by",
            "choice",
            grpo.STD_MODES[0],
            choices=grpo.STD_MODES,
            widget="radio",
            extra=(("captions", [grpo.STD_LABELS[m] for m in grpo.STD_MODES]),),
        ),
        Field(
            "eps",
            "ε added to the std",
            "choice",
            "0",
            choices=tuple(EPS),
            widget="select_slider",
            help="Unused with no std. The slider under the bars drags ε in the browser (with a std, in a group whose "
            "rewards differ).",
        ),
        Field("grpo_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        ask.switch("predict_grpo"),
        ask.guess("guess_adv", "Your guess: the advantage A_i", "float", -1e3, 1e3, step=0.01, fmt="%.2f"),
    ),
    presets={name: _preset(p) for name, p in grpo.PRESETS.items()},
    answers={
        "Worked example C (3 of 8 correct)": Answer(
            "Push up / down", "+1.29 / −0.77", "lesson 001 section 4, worked example C"
        ),
    },
)


def group_of(state: State) -> tuple[grpo.GroupView, str | None]:
    """The group a state shows, and a message when its typed rewards cannot be used (then worked example C)."""
    eps = EPS[state.eps]
    try:
        return grpo.group_view(tuple(inputs.parse_rewards(state.rewards).tolist()), state.std, eps), None
    except ValueError as err:
        fallback = grpo.group_view(tuple(inputs.parse_rewards(DEFAULT_REWARDS).tolist()), state.std, eps)
        return fallback, f"Rewards `{state.rewards[:80]}`: {err}. Showing worked example C instead."


def eps_sweep(v: grpo.GroupView, eps: str) -> EpsSweep:
    """The advantages of group ``v`` (a std mode) at every ε of :data:`EPS`, in one numpy pass: the slider's steps.

    A_i = (r_i − mean) / (std + ε), with r_i − mean and the std (at ε = 0) from core; ``eps`` is the page's ε text,
    the slider's active step.
    """
    values = np.fromiter(EPS.values(), dtype=np.float64)  # (S,)
    centred = grpo.grpo_advantages(v.rewards, "none")  # (G,) r_i − mean
    std = 1.0 / float(grpo.advantage_scale(v.rewards, v.std, 0.0))  # the group's std (÷G or ÷(G−1)), > 0 here
    denominators = std + values  # (S,)
    return EpsSweep(tuple(EPS), centred[None, :] / denominators[:, None], denominators, list(EPS).index(eps))


def summary(v: grpo.GroupView, correct: str | None) -> str | None:
    """The caption under the readouts: the group in numbers and what the chosen divisor does (None: no signal)."""
    s, std = v.stats, v.std
    if not s.has_signal:
        return None
    text = f"**{correct} correct** · " if correct is not None else ""
    text += f"mean {s.mean:.4g} · std {s.std_population:.3g}. "
    if std == "population":
        return text + (
            f"Within this group, switching the divisor rescales every bar: the sample std multiplies them by "
            f"{v.factors['sample']:.4g}, no std by {v.factors['none']:.4g} (= std + ε). Across a batch "
            "the sample-std factor √((G−1)/G) is the same for every group (while ε is small against the "
            "std), but the no-std factor is each group's own std, so dropping the std re-weights prompts and "
            "changes the direction of the batch update (Liu et al. 2025)."
        )
    return text + (
        f"The {grpo.STD_LABELS[std]} multiplies every advantage by {v.factors[std]:.4g} compared with the "
        "population std; within this group the signs and the order of the bars stay the same. "
        + (
            "Across a batch this factor is the same √((G−1)/G) for every group of size G (while ε is small "
            "against the std; with ε it is (std + ε)/(sample std + ε), which depends on the group): while ε "
            "is small it rescales only the policy term, which with the KL in the loss is like multiplying β by the "
            "inverse factor (and scaling the whole loss, which Adam nearly ignores); with a larger ε it also "
            "re-weights groups slightly."
            if std == "sample"
            else "Across a batch this factor is each group's own std, so it differs from prompt to prompt "
            "and changes the direction of the batch update (Liu et al. 2025)."
        )
    )


def figures(state: State, options: Options = DEFAULT) -> View:
    """The group's bars (``main``) and, when asked for, each tab's figures (parts named by the tab labels).

    Rewards that cannot be read give a notice and worked example C, never an exception. ``facts``: the group
    (``group``, a :class:`core.grpo.GroupView`), ``has_signal``, ``correct`` ("3 of 8", None unless 0/1 rewards),
    ``summary`` (None without signal), and the tabs' tables ``ppo_table`` and ``length_weights`` when built.
    """
    view = View()
    v, problem = group_of(state)
    if problem is not None:
        view.notices.append(("warning", problem))
    s, G, std, eps = v.stats, v.stats.G, v.std, v.eps
    correct = f"{s.n_correct} of {G}" if s.n_correct is not None else None
    view.facts.update(group=v, has_signal=s.has_signal, correct=correct, summary=summary(v, correct), predict="off")
    predicting = ask.mode(state, "predict_grpo", "guess_adv")
    which, truth = asked(v)
    question = f"What advantage does {which} get? (divided by the {grpo.STD_LABELS[std]}, ε = {state.eps})"
    if predicting == "hidden" and options.wants("main"):
        slots = {"type": "bar", "x": list(range(1, G + 1)), "y": list(v.rewards), "name": "reward r_i (click to flip)"}
        view.figures["main"] = predict_figure(
            question, x_title="answer", y_title="reward", traces=[slots], **options.look
        )
    elif options.wants("main"):
        # ε changes the bars only for a std mode and a group with signal: then the slider under them drags ε
        sweep = eps_sweep(v, state.eps) if std != "none" and s.has_signal else None
        # one y axis for the three modes and every ε (the largest |A| is at ε = 0): the bars move, the axis does not
        y_max = (v if eps == 0 else grpo.group_view(v.rewards, std, 0.0)).y_range
        view.figures["main"] = grpo_advantages_figure(
            v.rewards, v.advantages, mean=s.mean, denominator=v.denominator, mode_label=SHORT[std], y_max=y_max,
            eps_sweep=sweep, **options.look,
        )  # fmt: skip
        if sweep is not None:
            view.drags["main"] = Drag("eps", sweep.labels)
    view.readouts = [
        Readout("Mean reward", f"{s.mean:.4g}", "the baseline mean(r₁..r_G), which PPO gets from its value model"),
        Readout("Std (÷G)", f"{s.std_population:.3g}", f"population std; sample std (÷(G−1)): {s.std_sample:.3g}"),
        Readout("Correct answers", correct or "—", None if correct is not None else "the rewards are not all 0 or 1"),
        Readout(
            "Push up / down",
            f"{fmt.signed(v.advantages.max())} / {fmt.signed(v.advantages.min())}".replace("-", "−")
            if s.has_signal
            else "none",
            "the largest and smallest advantage in the group",
        ),
        Readout(
            "Mode factor",
            f"× {v.factors[std]:.4g}",
            "every advantage is this times its value with the population std (the lesson's convention)",
        ),
        Readout(
            "Scale 1/(std + ε)" if std != "none" else "Scale (no std)",
            f"{v.scale:,.4g}" if s.has_signal else "— (no signal)",
            (
                "A_i = scale × (r_i − mean); ε caps the scale at 1/ε"
                if std != "none"
                else "no division: A_i = r_i − mean, and ε does not enter"
            )
            if s.has_signal
            else (
                "every r_i − mean is 0, so every advantage is 0 whatever the scale; with ε = 0 the scale 1/(0 + 0) "
                "is undefined and the division 0/0, which this page sets to 0 (implementations add ε to the std)"
                if std != "none"
                else "every r_i − mean is 0, so every advantage is 0 (no division in this mode)"
            ),
        ),
    ]

    if options.wants(DIFFICULTY):
        c = grpo.difficulty_curves(G, eps)
        others = {SHORT[m]: c.expected_abs_advantage[m] for m in grpo.STD_MODES if m != std}
        # its markers place this group on the curves, which gives the held-back answer away while predicting
        shown = s.is_binary and predicting != "hidden"
        current_p, label = (s.success_rate, f"this group: {correct} correct") if shown else (None, "")
        view.figures[DIFFICULTY] = grpo_difficulty_figure(
            c.p, c.signal_probability, c.expected_abs_advantage[std], G=G, mode_label=SHORT[std],
            current_p=current_p, current_label=label, other_modes=others, **options.look,
        )  # fmt: skip
    if options.wants(PPO):
        view.facts["ppo_table"] = ppo_vs_grpo_table()
        view.figures[PPO] = ppo_vs_grpo_figure(G, **options.look)
    if options.wants(BATCH) and predicting != "hidden":  # it shows this group's advantages
        batch = grpo.contrast_batch(v.rewards)
        this_label = f"this group<br>{correct} correct" if correct is not None else "this group"
        view.figures[BATCH] = grpo_batch_contrast_figure(
            batch, grpo.grpo_advantages(batch, std, eps), grpo.batch_normalised_advantages(batch, std, eps),
            prompt_labels=[this_label, "easy prompt<br>all correct", "hard prompt<br>all wrong"], **options.look,
        )  # fmt: skip
        view.facts["length_weights"] = pd.DataFrame(
            grpo.length_weight_columns(list(LENGTHS), max_length=MAX_LENGTH)
        ).round(4)

    view.tables["Group"] = lambda: pd.DataFrame(
        {
            "answer": range(1, G + 1),
            "reward": v.rewards,
            **{f"advantage_{m}": v.by_mode[m] for m in grpo.STD_MODES},
            "eps": eps,
        }
    )
    view.tables["Difficulty"] = lambda: _difficulty_table(G, eps)
    if predicting == "hidden":
        ask.hide(view, question, ("Std", "Push up", "Scale"), tables=("Group",))
        view.facts["summary"] = f"**{correct} correct** · mean {s.mean:.4g}." if correct else None
    elif predicting == "revealed":
        guess_adv = float(state.guess_adv)
        if "main" in view.figures:
            view.figures["main"] = with_guess(
                view.figures["main"], guess_adv, f"your guess {guess_adv:+.2f}", axis="y", theme=options.theme
            )
        ask.reveal(
            view,
            Readout(f"Advantage of {which}", fmt.signed(truth), "(r_i − mean) / (std + ε) in the chosen mode"),
            f"{guess_adv:+.2f}",
            f"{guess_adv - truth:+.2f}",
            "your guess minus the advantage",
            value=truth,
        )
    return with_answers(SPEC, state, view)


def asked(v: grpo.GroupView) -> tuple[str, float]:
    """What the Predict-first question asks about and its answer: a correct answer's advantage (0/1 rewards with at
    least one correct), else the top-scored answer's."""
    if v.stats.is_binary and v.stats.n_correct:
        return "a correct answer", float(v.advantages[v.rewards == 1][0])
    return "the top-scored answer", float(v.advantages.max())


def _difficulty_table(G: int, eps: float) -> pd.DataFrame:
    c = grpo.difficulty_curves(G, eps)
    return pd.DataFrame(
        {
            "p": c.p,
            "P_signal": c.signal_probability,
            **{f"expected_abs_A_{m}": c.expected_abs_advantage[m] for m in grpo.STD_MODES},
            "G": G,
            "eps": eps,
        }
    )
