"""GRPO: one group's advantages (click a bar to flip its reward), the zero-signal groups, and prompt difficulty."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, cached_view, draw_tabs
from views import Options, inputs
from views import grpo as view_of

DEFAULT = view_of.DEFAULT_REWARDS

page = Page.setup(
    "GRPO: advantages relative to the group",
    ":material/groups:",
    "GRPO grades each answer against all the answers to the same prompt, itself included: the group's mean "
    "reward is the baseline, so better-than-average answers are pushed up and worse ones down. A group whose "
    "answers all get the same reward teaches nothing.",
    r"A_i = \frac{r_i - \operatorname{mean}(r_1,\dots,r_G)}{\operatorname{std}(r_1,\dots,r_G) + \varepsilon},"
    r"\qquad P(\text{group has signal}) = 1 - p^G - (1-p)^G",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)


def _on_click(i: int) -> None:
    """A click on a bar: flip that answer's reward in the (URL-bound) text box (the point index is the answer index
    on both bar traces)."""
    try:
        st.session_state["rewards"] = inputs.flip_in_text(st.session_state.get("rewards", DEFAULT), i, DEFAULT)
    except (IndexError, TypeError, ValueError):
        pass  # an index outside the group: nothing to flip


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        page.control("rewards")
        page.control("std")
        page.control("eps")
        if page.control("predict_grpo"):
            page.control("guess_adv")

    with page.views():
        summary_slot = st.container()  # above the tabs; filled once the view is built
        tabs = draw_tabs(view_of.SPEC["grpo_view"])

    open_tabs = [name for name, tab in zip(view_of.VIEWS, tabs, strict=True) if tab.open]
    state = page.state().replace(grpo_view=open_tabs[0] if open_tabs else view_of.VIEWS[0])
    out = figures(state, Options(theme=page.theme, presenter=page.presenter, parts=frozenset({"main", *open_tabs})))
    page.show_notices(out)
    page.predict_first(out.facts["predict"] == "hidden")  # Predict first: the interview answer quotes the answer

    page.figure(out.figures["main"], key="grpo-bars", filename="grpo-advantages", on_click=_on_click)
    page.readouts(out.readouts, per_row=3)

    with summary_slot:
        if not out.facts["has_signal"]:
            st.info(
                "**No learning signal.** All answers got the same reward, so every rᵢ − mean is 0 and every "
                "advantage is exactly 0, in every mode and with any ε. This prompt moves the policy only through "
                "the KL term to π_ref. Vanilla GRPO keeps such groups: they still count in the loss's normaliser "
                "(diluting the other groups' updates) and still feel the KL term. DAPO's dynamic sampling (Yu et al. "
                "2025) drops them and samples further prompts until the batch is filled with groups whose rewards "
                "differ."
            )
        else:
            st.caption(out.facts["summary"])
    with tabs[0]:
        if view_of.DIFFICULTY in out.figures:
            page.chart(out.figures[view_of.DIFFICULTY], "grpo-difficulty", "grpo-difficulty")
            st.caption(
                "Curves for 0/1 rewards; the marker is this group's success rate (for 0/1 rewards). Prompts the model "
                "always solves or always fails give groups without signal; prompts of medium difficulty teach the most."
            )
    with tabs[1]:
        if view_of.PPO in out.figures:
            st.table(out.facts["ppo_table"])
            page.chart(out.figures[view_of.PPO], "grpo-ppo", "ppo-vs-grpo")
    with tabs[2]:
        if view_of.BATCH in out.figures:
            page.chart(out.figures[view_of.BATCH], "grpo-batch", "grpo-batch-vs-group")
            st.caption(
                "This group next to an easy prompt (all answers correct) and a hard one (all wrong). Within each group "
                "the easy and hard prompts get zero advantages: comparing identical answers says nothing. Normalised "
                "across the batch, every answer to the easy prompt is pushed up and every answer to the hard one down."
            )
            st.caption(
                "How much each answer weighs in the loss, for four answers of 100 to 1,600 tokens and a generation "
                "budget L_max of 2,048 tokens (its per-token weight times its length). GRPO gives every answer 1/G, "
                "so a long answer's tokens count less; DAPO and Dr. GRPO weigh answers by their length."
            )
            st.table(out.facts["length_weights"])

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
Each bar is one of G answers to a single prompt, and its height is the advantage that every token of that
answer receives in the policy update: blue answers beat the group's average and become more likely, orange
ones fall below it and become less likely. **Click a bar** to flip that answer's reward between 1 and 0; the
reward list in the sidebar and the link in the address bar follow.

The group mean is the baseline and does the job of PPO's learned value model: an answer is judged only against
its group (itself included), so the advantages of a group always add up to zero. The std is not part of the
baseline; it is a rescaling per prompt. Dividing by the sample std (G − 1, as several RL libraries do) instead
of the population std multiplies every advantage of every group of size G by the same √((G−1)/G) (while ε is
small against the std; with ε the factor depends on each group's std): across a batch
only the scale of the policy-gradient term J changes, by c = √((G−1)/G) = 0.935 at G = 8. Without a KL term in
the loss (as in DAPO, Yu et al. 2025) that is a constant factor on the whole loss, which Adam nearly ignores:
the step hardly changes. With the KL term in the loss, c·J − β·KL = c·(J − (β/c)·KL): the whole loss scaled by c
and β raised by 1/c = √(G/(G−1)), 1.07 at G = 8. Adam nearly ignores the first part; the 7% larger β remains and
holds the policy a little closer to π_ref. Dropping the std (Dr. GRPO) is different: each group was divided by
its *own* std, so removing it rescales each group by a different factor and changes the direction of the batch's
update. With the std, prompts whose rewards barely differ (for 0/1 rewards, the nearly always solved and nearly
never solved ones) get extra weight: the question-difficulty bias that Liu et al. (2025) remove. The lesson's
"only the scale changes" is true within one group, not across a batch.

**Length.** The advantage is one number per answer, but the loss is a sum over tokens. The original objective
averages each answer's token terms (1/|o_i|) and then the G answers (Shao et al. 2024), so every answer weighs
1/G in total whatever its length and a long answer is pushed less per token: a long wrong answer is punished
less than a short one, which lets wrong answers grow longer (Liu et al. 2025). Dr. GRPO drops 1/|o_i| and divides
by a constant instead (such as G times the generation budget). DAPO (Yu et al. 2025) takes the mean over all
tokens of the batch, 1/Σ|o_j|, so every token counts the same; it also raises the upper clip bound
(clip-higher: ε_high = 0.28 against ε_low = 0.2) so that unlikely tokens can still gain probability, drops the KL
term, and filters groups without signal (dynamic sampling). The tab *Within group vs batch* tabulates the
weights.

ε matters when rewards barely differ: with the preset *Nearly equal scores* the std is about 3×10⁻⁴, so
differences of 0.001 become advantages of order 1, a blow-up of about 3,000 times. ε caps the scale at 1/ε,
but here ε = 10⁻⁴ still leaves a scale of about 2,300 (the odd answer gets +2.03); it takes ε of order 10⁻²
(a scale of about 97, an advantage of +0.085) to keep such a group from counting like a real 0/1 split.

The tab *Which prompts teach?* shows, for a prompt the model solves with probability p, how often a group of
G answers contains both right and wrong ones (1 − pᴳ − (1 − p)ᴳ) and how large its advantages are on average.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="GRPO samples G answers to each prompt and uses their mean reward as the baseline (then divides "
            "by their std, a per-prompt rescaling), so the critic, a second trainable full-size model with its own "
            "optimiser state, disappears.",
            equation=r"A_i = \frac{r_i - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}",
            number="Worked example C: 3 of 8 answers correct gives mean 0.375 and std 0.484, so each correct answer "
            "gets +1.29 and each wrong one −0.77.",
            trade_off="Memory is traded for sampling: G generations per prompt instead of one, and groups where all "
            "answers agree are wasted compute. The advantage is one number per answer, copied to all its tokens (no "
            "per-token credit). It works with any scalar reward: DeepSeekMath trained it with a learned reward model, "
            "with outcome and process supervision (Shao et al. 2024); with a checker program it is RL with verifiable "
            "rewards, as in DeepSeek-R1.",
        ),
    )
    page.mistakes(
        [
            "Centring on the whole batch's mean instead of each group's: an easy prompt's all-correct answers "
            "then get positive advantages and a hard prompt's all-wrong answers negative ones, though nothing was "
            "compared (tab *Within group vs batch*). Dividing by the batch's std after subtracting each group's "
            "mean is a different, deliberate choice (REINFORCE++ with a baseline, Hu et al. 2025).",
            "Dividing by the std without ε or a guard: a group of equal rewards gives 0/0 = NaN, and in float32 a "
            "rounding residue over a std of about 3×10⁻⁸ can hand every answer an advantage of ±1 out of nothing.",
            "Believing every std convention is a mere rescaling: the sample std's factor √((G−1)/G) is the same for "
            "every group (while ε is small against the std), so it only rescales the policy term (like a larger β "
            "when the KL is in the loss), but dropping the std rescales each group by its own std, which re-weights "
            "prompts and changes the direction of the batch update (Dr. GRPO's difficulty bias, Liu et al. 2025).",
            "Forgetting the length normalisation: averaging over each answer's tokens (1/|o_i|) gives a long wrong "
            "answer a smaller penalty per token than a short one (Liu et al. 2025); Dr. GRPO divides by a constant, "
            "DAPO averages over all tokens of the batch (Yu et al. 2025).",
            "Saying GRPO needs a checker: it needs one scalar reward per answer. DeepSeekMath used a learned reward "
            "model (Shao et al. 2024); checkers are the setting of RL with verifiable rewards.",
            "Calling GRPO “PPO without a critic” and stopping there: the KL term also moved from the reward into the "
            "loss as a per-token estimate, and the advantage is one scalar per answer, not per token.",
        ]
    )

    page.download(out.tables, "grpo")
    page.finish()


page.run(_body)
