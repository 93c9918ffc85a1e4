"""Test-time compute: best-of-n with a verifier or a reward model, majority voting, pass@k per FLOP, and a toy split
of one budget between training and inference."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, carried_params, page_link
from views import catalog
from views import test_time_compute as view_of

page = Page.setup(
    "Test-time compute",
    ":material/hourglass_top:",
    "Sampling more answers is a third way to spend compute, after parameters and data. What it buys depends on "
    "the selector: a verifier turns n samples into pass@n, a majority vote needs the right answer to be the most "
    "frequent one, and a learned reward model pushed too hard picks answers that fool it.",
    r"P_\text{verifier}(n) = 1 - (1-p)^n,\quad \mathrm{KL}_\text{bon} \le \log n - \tfrac{n-1}{n}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
    figure_tabs=True,
)

VIEWS = view_of.VIEWS


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        st.subheader("Best-of-n")
        for name in ("ttc_p", "ttc_n", "ttc_alpha", "ttc_beta"):
            page.control(name)
        st.subheader("Majority vote")
        for name in ("ttc_vote_p", "ttc_m", "ttc_vote_n"):
            page.control(name)
        st.subheader("pass@k per FLOP")
        for name in ("ttc_p_small", "ttc_p_large", "ttc_ratio", "ttc_k"):
            page.control(name)
        st.subheader("Compute split (a toy)")
        for name in ("ttc_budget", "ttc_queries", "ttc_tokens"):
            page.control(name)
        if page.control("predict_ttc"):
            page.control("guess_ttc_peak")

    tabs = page.view_tabs("ttc_view", VIEWS)

    out = page.open_view(view_of.figures, tabs)

    with tabs[view_of.BEST]:
        if view_of.BEST in out.figures:
            page.chart(out.figures[view_of.BEST], "fig-best-of-n", "best-of-n")
            st.caption(
                "Left: every sample is checked exactly (unit tests, a proof checker), so best-of-n succeeds when any "
                "sample is correct. Right: a reward model picks the highest-scoring sample; the KL spent is the "
                "best-of-n formula and the gold score follows Gao et al. 2022's form for best-of-n with illustrative "
                "coefficients. Their gold was a larger reward model standing in for people, not human raters."
            )
    with tabs[view_of.VOTE]:
        if view_of.VOTE in out.figures:
            page.chart(out.figures[view_of.VOTE], "fig-vote", "majority-vote")
            st.caption(
                "A stated model of the errors: each sample is right with probability p, else one of m wrong answers "
                "chosen uniformly; the most frequent answer wins, ties broken at random. The exact multinomial sum, "
                "not a simulation. Real wrong answers are neither equally likely nor independent of each other."
            )
    with tabs[view_of.PASS]:
        if view_of.PASS in out.figures:
            page.chart(out.figures[view_of.PASS], "fig-pass-at-k", "pass-at-k-compute")
            st.caption(
                "pass@k = 1 − (1 − p)^k for one problem with success rate p: it counts a problem solved when any of "
                "k samples is, which only a verifier can pick out. Compute is counted as samples times their cost; "
                "a benchmark mixes problems of many p, so its curve is an average of such curves. How to estimate "
                "pass@k from n samples without bias is on the evaluation page."
            )
            evaluation = catalog.by_url("Evaluation")
            page_link(evaluation.script, label=evaluation.label, icon=evaluation.icon,
                      query_params=carried_params() or None)  # fmt: skip
    with tabs[view_of.SPLIT]:
        if view_of.SPLIT in out.figures:
            page.chart(out.figures[view_of.SPLIT], "fig-split", "compute-split")
            st.caption(
                "A toy with stated assumptions, not a fit: training costs 6ND, each sampled answer 2N FLOPs per "
                "token; the loss is Hoffmann et al. 2022's fit; one sample's success on a problem is a sigmoid of "
                "the loss's distance to that problem's threshold, the thresholds spread over a range; a verifier "
                "picks any correct sample. It shows the direction of the trade-off, not where the optimum lies. At "
                "1,000+ tokens per parameter the Hoffmann fit is used far outside its data, where Sardana et al. 2024 "
                "find such fits overstate the gain from more tokens."
            )

    page.readouts(out.readouts)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
**A verifier.** With a checker that recognises a correct answer, best-of-n succeeds when any of the n samples is
correct: 1 − (1 − p)ⁿ, which is pass@n (Chen et al. 2021). Sampling is cheap to parallelise, so the ceiling is set
by the verifier, not the sampler. Brown et al. 2024 (arXiv 2407.21787) find coverage (the fraction of problems any
sample solves) rising with the number of samples over four orders of magnitude, often log-linearly, across tasks and
models; where answers can be checked automatically (code, formal proofs) coverage is the score.

**A reward model.** Without a checker, a learned reward model picks the sample it scores highest. The chosen
answers drift from the base policy by at most log n − (n − 1)/n (Stiennon et al. 2020; Beirami et al. 2024,
arXiv 2401.01879, show it is an upper bound, exact only when no single output has noticeable probability).
Gao et al. 2022 (arXiv 2210.10760) fit the score of the gold reward model (never optimised against) as d (α − β d) with
d = √KL: it rises, peaks at d = α / 2β and falls while the proxy's own score keeps rising: best-of-n over-optimises
the proxy. Their gold was a 6B reward model whose labels trained the proxies, not human raters; the page's α and β
are illustrative, not their fits.

**A majority vote** (self-consistency, Wang et al. 2023, arXiv 2203.11171) needs no checker: the most frequent
final answer wins. With one wrong answer it is right only when more than half the samples are, so it amplifies
p > 0.5 and ruins p < 0.5. When the wrong answers scatter over many values, a plurality can be right with p well
under one half, provided the right answer is more likely than each single wrong one (with m equally likely wrong
answers, p > 1/(m + 1) as n grows). Brown et al. 2024 report majority voting and reward models plateauing beyond
several hundred samples on GSM8K and MATH, where coverage still rises.

**Per FLOP, not per sample.** A sample of a model with N parameters costs about 2N FLOPs per token (plus attention
over the context), so at equal answer lengths the cost ratio is about the parameter ratio, and at one budget a smaller
model draws proportionally more samples. Snell et al. 2024 (arXiv 2408.03314; PRM-guided search and revisions on
MATH) find that at matched FLOPs test-time compute can beat a 14 times larger model on problems where the small one
has a non-trivial success rate and the inference load is small; on the hardest problems, or when inference tokens far
exceed pretraining tokens, pretraining pays better. The seed's "hard problems favour inference" (002 A7.4) means hard
but within reach (low, non-zero p); beyond the model's reach, no number of samples helps.

**Training against inference.** Training is paid once, inference on every query. The more queries R a model serves,
the more each of its parameters costs at inference, so the better a smaller model trained on more tokens than
Chinchilla's rule (Sardana et al. 2024, arXiv 2401.00448, without test-time sampling): training compute spent to make
every query cheaper. How much to spend at inference depends on the number of queries and on how hard the problems
are. The Compute split tab is a toy. Between 10⁸ and 10¹⁰ queries on 10²³ FLOPs its best model shrinks (2.5B →
1.8B) and is trained longer (about 1,100 → 1,800 tokens per parameter), while its share of the budget on training
falls (42.5% → 35%), because every query still needs a sample; from 10⁷ to 10⁹ queries the model stays at 2.5B. The
seed's "shift compute into training" is about the model (smaller, trained longer: Sardana et al.), not this share.
Neither number is a prediction.

**Evaluation** (A11.3). A score under test-time compute names a system, not the weights: the same model greedy and at
best-of-64 are different products. Report the budget with the score, or a curve of score against samples or FLOPs.
"""
        )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="Parallel test-time compute is limited by the verifier, not the sampler: with a checker "
            "best-of-n reaches pass@n, a reward model over-optimises past a point, and a vote needs the right answer "
            "to be the most frequent; how much to spend at inference depends on the number of queries served.",
            equation=r"1 - (1-p)^n \quad\text{vs}\quad \mathrm{KL} \le \log n - \tfrac{n-1}{n}",
            number="With a verifier and p = 0.1, 22 samples solve a problem 90% of the time.",
            trade_off="Training is paid once, inference on every query.",
        ),
    )
    page.mistakes(
        [
            "Reporting pass@k as accuracy: it counts a problem solved when any of k samples is, which only a "
            "verifier can pick out.",
            "Taking more best-of-n samples against a learned reward model as always better: past a point the "
            "gold score falls while the proxy score keeps rising.",
            "Saying a majority vote needs p > 0.5: that holds with one wrong answer; a plurality needs the right "
            "answer to beat every single wrong answer, and one systematic wrong answer more likely than the right one "
            "defeats it at any n.",
            "Comparing two models' scores without their inference budgets: a score names a system, not the weights.",
            "Reading log n − (n − 1)/n as the exact KL of best-of-n: it is an upper bound; two equally likely "
            "outputs with different rewards never exceed log 2 ≈ 0.69 nats.",
        ]
    )
    page.download(out.tables, "test-time-compute")
    page.finish()


page.run(_body)
