"""Home page of the LLM lesson explorer: what it is for, the stages of training, and where each page fits."""

import streamlit as st

from pages.frame import existing_pages, home_frame

home_frame()

st.title("The LLM lesson explorer")
st.markdown(
    "**Every figure of the lesson on how large language models are trained, live and editable.** "
    "Drag a control and the numbers follow; every view is a link."
)

c1, c2, c3 = st.columns(3)
c1.markdown(
    "#### :material/search: Browse the concepts\n"
    "Each page recreates one figure of the lesson from the same equations, with presets "
    "for its worked examples, live readouts and the data behind the figure as CSV."
)
c2.markdown(
    "#### :material/handshake: Mock interviews\n"
    "The address bar always reproduces the exact figure you see: share it. "
    "Quick checks and model answers stay hidden until someone reveals them."
)
c3.markdown(
    "#### :material/school: Lectures\n"
    "Turn on **Presenter mode** (the button beside the page finder, or `?present=true` in a link): larger "
    "type, the sidebar folded so that the figure fills the screen, the takeaway, equation and explanations folded "
    "away. Everything runs locally, with no internet connection needed."
)

st.header("Practise")
PRACTISE = ("pages/14_Drills.py", "pages/15_Deck.py", "pages/26_Class.py")
practise = [entry for entry in existing_pages() if entry[0] in PRACTISE]
left, right = st.columns([3, 1])
left.markdown(
    "Interview cards, one at a time: answer aloud against a countdown, reveal the model answer part by part, "
    "grade yourself and let the schedule bring each card back when it is due. An interviewer's view adds "
    "follow-ups, traps and a rubric. **Lecture decks** play the lesson in about 20 views with the keyboard, with a "
    "speaker view in a second tab and an offline HTML handout; add any view to your own deck from its sidebar. "
    "**Join a class** when a teacher runs one: type the code from the projector, follow the slides on your phone "
    "and answer the questions before the answer is shown."
)
with right:
    for path, label, icon in practise:
        st.page_link(path, label=label, icon=icon)

st.header("The stages of training")
st.caption(
    "Pretraining makes the model know; SFT makes it answer in the right form; preference tuning chooses among "
    "good answers; RL with a checker makes it search for correct answers; evaluation decides at every step."
)

# (stage, data, training signal, what it adds, pages that explore it)
STAGES = [
    (
        "Pretraining",
        "10¹²–10¹³ tokens of filtered, deduplicated web text, code and books",
        "next-token cross-entropy",
        "knowledge, language, in-context learning",
        [
            "pages/1_Scaling_laws.py",
            "pages/6_Attention.py",
            "pages/16_Positions.py",
            "pages/17_FlashAttention.py",
            "pages/18_MoE.py",
            "pages/12_Loss_and_units.py",
            "pages/19_Training_lab.py",
            "pages/20_Number_formats.py",
            "pages/21_Optimizers.py",
            "pages/11_Sampling.py",
            "pages/7_Training_memory.py",
        ],
    ),
    (
        "Mid-training",
        "a smaller, higher-quality mix (math, code, long documents) while the learning rate decays",
        "the same loss",
        "quality, skills, long context",
        ["pages/13_Schedules.py", "pages/16_Positions.py", "pages/17_FlashAttention.py"],
    ),
    (
        "SFT",
        "10⁴–10⁶ (prompt, response) demonstrations",
        "cross-entropy on the response tokens only",
        "the format: following instructions, chat template, tool calls",
        ["pages/3_LoRA.py", "pages/12_Loss_and_units.py", "pages/23_Distillation.py"],
    ),
    (
        "Preference tuning",
        "pairs of a chosen and a rejected answer",
        "reward model + PPO, or DPO",
        "which of the possible answers people prefer",
        [
            "pages/10_Reward_model.py",
            "pages/22_Policy_gradient.py",
            "pages/9_PPO.py",
            "pages/2_KL_leash.py",
            "pages/25_Calibration.py",
        ],
    ),
    (
        "RL with verifiable rewards",
        "prompts with a checker (a math answer, unit tests)",
        "reward 1 if correct, else 0",
        "reasoning: longer, self-checking solutions",
        ["pages/22_Policy_gradient.py", "pages/4_GRPO.py", "pages/9_PPO.py", "pages/24_Test_time_compute.py"],
    ),
    (
        "Evaluation",
        "held-out benchmarks, human or model judges",
        "none: it measures",
        "the decision whether a change helped",
        ["pages/5_Evaluation.py", "pages/24_Test_time_compute.py", "pages/25_Calibration.py"],
    ),
    (
        "Serving",
        "live requests: prompts in, tokens out, many users at once",
        "none: it runs the trained model",
        "the product: latency, throughput and cost per token",
        ["pages/8_Serving.py"],
    ),
]

COLUMN_WIDTHS = [1.1, 2.1, 1.5, 1.7, 2.0]
header = st.columns(COLUMN_WIDTHS)
for col, name in zip(header, ["Stage", "Data", "Training signal", "What it adds", "Explore"], strict=True):
    col.markdown(f"**{name}**")
for stage, data, signal, adds, pages in STAGES:
    cols = st.columns(COLUMN_WIDTHS)
    cols[0].markdown(f"**{stage}**")
    cols[1].markdown(data)
    cols[2].markdown(signal)
    cols[3].markdown(adds)
    with cols[4]:
        present = [entry for entry in existing_pages() if entry[0] in pages]
        for path, label, icon in present:
            st.page_link(path, label=label, icon=icon)
        if not present:
            st.caption("no page yet")
    st.divider()
