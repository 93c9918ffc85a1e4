"""Learning-rate schedules and mid-training: cosine against WSD under a modelled loss, WSD branches, Kaplan's
read-off issue and the data mixture during the decay."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, cached_view, draw_tabs
from views import Options
from views import schedules as view_of

page = Page.setup(
    "Learning-rate schedules and mid-training",
    ":material/trending_down:",
    "Much of a run's final loss drop comes when the learning rate decays. Cosine fixes the run's length at step 0; "
    "warm-up-stable-decay (WSD) can branch a decay off its stable phase at any step, and the data seen during that "
    "decay counts most.",
    # two lines: on one, the equation is wider than a 1400 px window and scrolls (a region no key can reach)
    r"\begin{gathered}\eta(s) = \eta_{\min} + \tfrac{1}{2}(\eta_{\max} - \eta_{\min})\bigl(1 + \cos \pi u\bigr),\\ "
    r"L(s) = L_0 + A\,S_1^{-\alpha} - C\,S_2,\quad S_1 = \sum_{i \le s} \eta_i,\quad "
    r"S_2 = \sum_{i \le s} m_i,\quad m_i = \lambda m_{i-1} + (\eta_{i-1} - \eta_i)\end{gathered}",
    spec=view_of.SPEC,
    short_title="LR schedules and mid-training",
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        for name in ("run_steps", "warmup", "lr_floor", "wsd_decay", "wsd_shape", "branch_at", "kaplan_n"):
            page.control(name)

    with page.views():
        tabs = dict(zip(view_of.VIEWS, draw_tabs(view_of.SPEC["sched_view"]), strict=True))
    parts = {"main"} | {name for name, tab in tabs.items() if tab.open}
    state = page.state()
    out = figures(state, Options(theme=page.theme, presenter=page.presenter, parts=frozenset(parts)))
    page.show_notices(out)
    page.figure(out.figures["main"], key="fig-schedules", filename="lr-schedules")
    st.caption(
        "The loss curves are a model, not measurements: the scaling law with learning-rate annealing of Tissue et al. "
        "(2024), with illustrative constants."
    )
    page.readouts(out.readouts)

    if tabs["WSD branches"].open:
        with tabs["WSD branches"]:
            page.chart(out.figures["WSD branches"], "fig-wsd", "wsd-branches")
            st.caption(
                f"Every branch shares the stable prefix, so one long run gives several finished models. The decay "
                f"branched at step {out.facts['branch']:,} ends at {out.facts['branch_end']:.3f} (modelled)."
            )
    if tabs["Kaplan's read-off"].open:
        with tabs["Kaplan's read-off"]:
            page.chart(out.figures["Kaplan's read-off"], "fig-kaplan", "kaplan-read-off")
            st.caption(
                f"A {out.facts['kaplan_n']:,}-step run read off the {out.facts['steps']:,}-step cosine: "
                f"{out.facts['read']:.3f}; the same length with its own cosine: {out.facts['own']:.3f} (modelled)."
            )
    if tabs["Data mixture"].open:
        with tabs["Data mixture"]:
            page.chart(out.figures["Data mixture"], "fig-mixture", "data-mixture")
            st.caption(
                "An illustrative mixture, not any lab's recipe: from mostly web text to more code, mathematics and "
                "curated text early in the WSD decay (dashed: the learning rate)."
            )

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
A schedule starts with a short linear warm-up (about 1-2% of the steps) because Adam's moment estimates are
noisy at first (seed 002, A1.6; Liu et al., 2020). Warm-up + cosine (Loshchilov and Hutter, 2017) then decays
smoothly to a floor at a step count fixed in advance; WSD holds the peak and decays only over the last part of the
run (MiniCPM, Hu et al., 2024; Hägele et al., 2024).

The loss curves come from a **model**: L(s) = L0 + A·S1^(−α) − C·S2 (Tissue et al., 2024), where S1, the
area under the learning-rate curve, measures progress from taking steps, and S2, the momentum-smoothed sum of the
learning rate's drops, measures annealing. The constants are illustrative. In it, with the defaults, the constant
run ends at 2.229, cosine to 10% at 2.128 and WSD with a 20% linear decay at 2.156: the decayed runs end close
together, far below the constant one. Which decayed run ends lowest comes from the chosen constants and is not a
finding: Hägele et al. (2024) measure a cool-down of about 20% of the run matching cosine at equal length, and
their 1-sqrt cool-down, η_max(1 − √u) with u the progress through the cool-down from 0 to 1 (drawn here with a
floor: η_min + (η_max − η_min)(1 − √u)),
a fast drop and then a slow approach to the floor, beating a linear one (here it ends at 2.142).

**WSD branches.** The stable phase is shared, so decays branched from several checkpoints give models of several
lengths from one run (seed 002, A1.6; Hägele et al., 2024); a later branch ends lower.

**Kaplan's read-off.** Kaplan et al. (2020) trained with one schedule length and read the losses of shorter runs
off checkpoints of a long cosine that had not yet decayed, so those losses were too high and data looked less
useful than it is (Hoffmann et al., 2022, section 2; seed 001, section 3.3). In the model, a 2,500-step run read
off a 10,000-step cosine sits at 2.292, against 2.263 with its own cosine. This is the cause Hoffmann et al. named,
but only one of several behind the gap between Kaplan's and Chinchilla's allocations (seed 002, A11.1): counting
non-embedding parameters and fitting at small scale (Pearce and Song, 2024); the last layer's FLOPs, the warm-up
length and optimizer settings tuned per scale (Porian et al., 2024, who find that with those fixed, a carefully
tuned decay is not essential).

**Mid-training.** Because the decay shapes the final weights most, runs change their data during it: more code,
mathematics and curated text, the best data last (seed 002, A9.3; seed 001, section 2; MiniCPM mixes high-quality
data into its decay, Hu et al., 2024). The mixture shown is an illustration.
"""
        )

    page.quick_check(
        "Halfway through a cosine run you decide to train twice as long. Why is that awkward, and what does WSD "
        "change?",
        "The cosine has already decayed halfway towards its floor for the old length; stretching it changes the "
        "schedule you have already followed. WSD stays at the peak until you choose to decay, so you keep going and "
        "branch the decay later (seed 002, A1.6).",
    )
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="The decay produces a large share of the final loss drop, so cosine ties you to a length chosen "
            "at step 0, while WSD branches a decay from any checkpoint, which also makes mid-training on the best "
            "data a separate, repeatable step (seed 002, A1.6 and A9.3; Hägele et al., 2024).",
            equation=r"L(s) = L_0 + A\,S_1^{-\alpha} - C\,S_2",
            number="In this page's model (the form of Tissue et al., 2024, illustrative constants), a 2,500-step run "
            "read off a 10,000-step cosine is about 0.03 nats too high.",
            trade_off="WSD needs a decay phase for every length you want a model of (extra steps per branch) but no "
            "commitment to one length; cosine needs no extra phase, but only its final checkpoint is annealed "
            "(Hägele et al., 2024).",
        ),
    )
    page.mistakes(
        [
            "Reading the loss of a shorter run off a longer run's schedule (Kaplan's setup, Kaplan et al., 2020; "
            "Hoffmann et al., 2022).",
            "Treating the modelled curves as data: the form is an empirical fit (Tissue et al., 2024), the constants "
            "here are illustrative.",
            "Extending a finished cosine run at its low final learning rate and expecting pretraining-like progress "
            "(seed 002, A1.6).",
            "Confusing mid-training with SFT: mid-training keeps the language-modelling loss on a reweighted mixture "
            "(seed 002, A9.3).",
            "Blaming the Kaplan-Chinchilla gap on the schedule alone: non-embedding parameter counting at small scale "
            "(Pearce and Song, 2024), the last layer's FLOPs, warm-up and optimizer tuning (Porian et al., 2024) "
            "matter too (seed 002, A11.1).",
        ]
    )
    page.download(out.tables, "schedules")
    page.finish()


page.run(_body)
