"""The serving page's numbers and texts against plain arithmetic and the seeds: the overhead reserve of the KV budget
(002 A10-08), the batch-1 decode bound on one GPU and on the preset's four (002 A8.1/A10-11), the sampled
acceptance rule (Leviathan et al. 2023, checked with scipy), a custom shape, and the interview texts' sources."""

import re

import numpy as np
from scipy import stats

from tests.apptest import choose_preset, metrics, no_exception, open_page
from views import Options
from views import serving as view_of

PAGE = "pages/8_Serving.py"
GIB = 2**30
W_LLAMA3_8B = 8_030_261_248 * 2  # bf16 weights, bytes
SEQS = "Sequences of 8,192 tokens that fit"


def _view(parts=("main",), **changes):
    return view_of.figures(view_of.SPEC.defaults().replace(**changes), Options(parts=frozenset(parts)))


def _readouts(view):
    return {r.label: r for r in view.readouts}


def test_the_reserve_lowers_the_sequences_that_fit_by_the_right_amount():
    per_seq = 8192 * 2 * 32 * 8 * 128 * 2  # Llama-3-8B: 128 KiB per token x 8,192 tokens = 1 GiB
    assert per_seq == GIB
    for reserve in (0.0, 2.5, 10.0, 40.0):
        expect = (80 * GIB - W_LLAMA3_8B - reserve * GIB) // per_seq
        r = _readouts(_view(srv_reserve=reserve))
        assert r[SEQS].value == f"{expect:.0f}", reserve
        assert f"reserve {reserve:,.1f} GiB" in r[SEQS].help
    assert [int(_readouts(_view(srv_reserve=x))[SEQS].value) for x in (0.0, 2.5, 10.0)] == [65, 62, 55]
    # the control is carried by a link and feeds the page
    at = open_page(PAGE, {"srv_reserve": "10"})
    assert no_exception(at) and at.warning.len == 0 and metrics(at)[SEQS] == "55"
    # a reserve that leaves no room for the weights is a message, not a traceback
    bad = _view(srv_reserve=70.0)
    assert any("plus the reserve (70.0 GiB) do not fit" in t for _, t in bad.notices)


def test_a10_11_shows_one_gpu_and_the_presets_four():
    one = 70_553_706_496 * 2 / 3.35e12  # Llama-3-70B bf16 bytes / one H100's bandwidth (002 A8.1, A10-11)
    assert round(1e3 * one, 1) == 42.1 and round(1e3 * one / 4, 1) == 10.5
    at = open_page(PAGE)
    choose_preset(at, "Serving", "A10-11: Arithmetic intensity of prefill vs decode").run()
    assert no_exception(at) and at.warning.len == 0
    m = metrics(at)
    assert m["Floor on decode time per token, batch 1 (weights read once)"] == "42.1 ms"
    assert m["Decode, batch 1, one GPU's bandwidth"] == f"{1e3 * one:,.1f} ms/token" == "42.1 ms/token"
    assert m["Decode, batch 1"] == f"{1e3 * one / 4:,.1f} ms/token" == "10.5 ms/token"
    helps = {x.label: x.proto.help for x in at.metric}
    assert (
        "serving preset spreads them over 4 GPUs"
        in helps["Floor on decode time per token, batch 1 (weights read once)"]
    )
    # one GPU: no second readout, the first is the 42 ms itself
    r = _readouts(_view(srv_model="Llama-3-70B", srv_gpus=1))
    assert r["Decode, batch 1"].value == "42.1 ms/token" and "Decode, batch 1, one GPU's bandwidth" not in r


def test_sampled_acceptance_rule_follows_the_target():
    p, q = view_of.toy_distributions()
    view = _view(parts=("main", "Speculative decoding"))
    r = _readouts(view)
    table = view.tables["Acceptance rule"]()
    assert np.allclose(table["target_p"], p) and np.allclose(table["draft_q"], q)
    n = view_of.SAMPLES
    counts = np.round(table["sampled"].to_numpy() * n)
    assert counts.sum() == n
    assert stats.chisquare(counts, n * p).pvalue > 1e-3  # the kept tokens follow p
    assert stats.chisquare(n * q, n * p).pvalue < 1e-10  # the draft alone does not
    rate = sum(min(a, b) for a, b in zip(p, q, strict=True))  # the acceptance rate, sum_x min(p(x), q(x))
    assert abs(view.facts["acceptance_rate"] - rate) < 0.01
    assert r["Accepted drafts (sampled)"].value == f"{100 * view.facts['acceptance_rate']:.1f}%"
    assert f"Σ min(p, q) = {100 * rate:.1f}%" in r["Accepted drafts (sampled)"].help
    gap = np.abs(table["sampled"].to_numpy() - p).max()
    assert r["Sampled vs target: largest gap"].value == f"{100 * gap:.2f} pts" and gap < 0.01
    # seeded: the same numbers every time; absent while the tab is closed
    assert _view(parts=("main", "Speculative decoding")).facts["chi2"] == view.facts["chi2"]
    assert "acceptance_rate" not in _view().facts


def test_custom_shape_on_the_serving_page():
    # 24 layers of the custom shape: 2 x 24 layers x 8 KV heads x (2048 / 32) dims x 2 bytes = 48 KiB per token
    r = _readouts(_view(srv_model="custom", srv_layers=24))
    assert r["KV cache per token"].value == f"{2 * 24 * 8 * 64 * 2 / 1024:,.1f} KiB" == "48.0 KiB"
    bad = _view(srv_model="custom", srv_kv=3)
    assert any("3 KV heads do not divide the 32 query heads" in t for _, t in bad.notices)
    assert _readouts(bad)["KV cache per token"].value == "32.0 KiB"  # the starting shape: 16 layers


_CITE = re.compile(r"\((?:[^()]*(?:0\d\d [A§]|et al\. \d{4}|AI \d{4}))[^()]*\)")


def test_interview_answer_and_mistakes_cite_their_sources():
    at = open_page(PAGE)
    assert no_exception(at)
    texts = [m.value for m in at.markdown]
    answer = [t for t in texts if t.startswith(("**In one sentence.**", "**One number.**", "**One trade-off.**"))]
    assert len(answer) == 3 and all(_CITE.search(t) for t in answer), answer
    mistakes = next(t for t in texts if t.startswith("- Sizing the KV cache"))
    items = mistakes.split("\n- ")
    assert len(items) == 4 and all(_CITE.search(i) for i in items), items
    number = next(t for t in answer if t.startswith("**One number.**"))
    assert "42 ms" in number
    assert "a floor of about 10.5 ms (002 A8.1; A10-11's trap that adding cards does not raise batch-1 speed holds" in (
        number
    )
