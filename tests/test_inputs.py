"""views/inputs.py: what a user typed or uploaded, read into values core accepts (clamped with a note, or
refused with a readable message), checked against plain expected values and round trips."""

import dataclasses
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import evaluation, kl_leash, kv_cache, tokenizer, toy_attention
from core.kl_leash import LEASH_PRESETS
from views import evaluation as evaluation_view
from views import inputs

EXAMPLE_C = [1, 0, 0, 1, 1, 0, 0, 0]  # the lesson's worked example C: a group of 8 rewards


# evaluation: n, c, k, the simulation and the comparison, clamped with a note -------------------------------------


def test_clamp_pass_at_k_inputs():
    assert evaluation_view.clamp_pass_at_k_inputs(10, 3, 5) == (10, 3, 5, [])
    n, c, k, notes = evaluation_view.clamp_pass_at_k_inputs(10, 12, 0)
    assert (n, c, k) == (10, 10, 1) and len(notes) == 2 and "pass@0" in notes[1]
    n, c, k, notes = evaluation_view.clamp_pass_at_k_inputs(10.4, -2, 20)
    assert (n, c, k) == (10, 0, 10) and len(notes) == 3
    n, c, k, notes = evaluation_view.clamp_pass_at_k_inputs("abc", None, float("nan"))
    assert (n, c, k) == (10, 3, 5) and len(notes) == 3
    n, c, k, notes = evaluation_view.clamp_pass_at_k_inputs(10**7, 5, 5)
    assert n == evaluation.N_MAX and "100,000" in notes[0]


@settings(max_examples=200, deadline=None)
@given(*[st.one_of(st.none(), st.text(max_size=4), st.floats(allow_nan=True), st.integers(-(10**9), 10**9))] * 3)
def test_clamp_never_raises_and_output_is_valid(n, c, k):
    n2, c2, k2, notes = evaluation_view.clamp_pass_at_k_inputs(n, c, k)
    assert 1 <= n2 <= evaluation.N_MAX and 0 <= c2 <= n2 and 1 <= k2 <= n2
    assert all(isinstance(x, int) for x in (n2, c2, k2)) and isinstance(notes, list)
    evaluation.pass_at_k(n2, c2, k2)


def test_clamp_simulation_inputs():
    assert evaluation_view.clamp_simulation_inputs(0.3, 10, 5, 1000) == (0.3, 10, 5, 1000, [])
    p, n, k, m, notes = evaluation_view.clamp_simulation_inputs(2, 10, 50, 5e7)
    assert (p, n, k, m) == (1.0, 10, 10, 1_000_000) and len(notes) == 3


def test_clamp_comparison_inputs():
    assert evaluation_view.clamp_comparison_inputs(0.71, 0.725, 1000) == (0.71, 0.725, 1000, None, None, [])
    a, b, N, oa, ob, notes = evaluation_view.clamp_comparison_inputs(71, 72.5, 1000, 40, 50)
    assert (a, b, N, oa, ob) == (0.71, 0.725, 1000, 40, 55) and len(notes) == 3
    a, b, N, oa, ob, notes = evaluation_view.clamp_comparison_inputs(0.71, 0.725, 1000, 40, None)
    assert oa is None and ob is None and "both counts" in notes[0]
    a, b, N, oa, ob, notes = evaluation_view.clamp_comparison_inputs(0.71, 0.725, 1000, 5000, 5015)
    assert oa == 275 and ob == 290  # only_a <= B's wrong answers (275)


def test_clamp_comparison_inputs_in_percent():
    # the page's inputs are in percent: no "read as %" note, and values above 100 are clamped
    assert evaluation_view.clamp_comparison_inputs(71.0, 72.5, 1000.0, 40.0, 55.0, percent=True) == (
        0.71,
        0.725,
        1000,
        40,
        55,
        [],
    )
    a, b, *_, notes = evaluation_view.clamp_comparison_inputs(0.5, 150, 1000, percent=True)
    assert (a, b) == (0.005, 1.0) and len(notes) == 1 and "0..100%" in notes[0]
    a, b, *_, notes = evaluation_view.clamp_comparison_inputs("abc", float("nan"), 1000, percent=True)
    assert (a, b) == (0.71, 0.725) and len(notes) == 2


def test_clamp_whole_number():
    assert inputs.clamp_whole_number(7.0, "seed", 0, 100, 0) == (7, [])
    assert inputs.clamp_whole_number(2.5, "seed", 0, 100, 0)[0] == 2  # round half to even, with a note
    value, notes = inputs.clamp_whole_number(2.6, "seed", 0, 100, 0)
    assert value == 3 and "rounded" in notes[0]
    value, notes = inputs.clamp_whole_number(-4, "seed", 0, 100, 0)
    assert value == 0 and "between 0 and 100" in notes[0]
    value, notes = inputs.clamp_whole_number(float("inf"), "seed", 0, 100, 0)
    assert value == 0 and notes == ["seed must be a number; using 0."]  # not finite: the default, like None
    value, notes = inputs.clamp_whole_number(None, "seed", 0, 100, 5)
    assert value == 5 and "must be a number" in notes[0]


@settings(max_examples=200, deadline=None)
@given(
    st.floats(-1, 200),
    st.floats(-1, 200),
    st.integers(-5, 5000),
    st.one_of(st.none(), st.integers(-100, 6000)),
    st.one_of(st.none(), st.integers(-100, 6000)),
)
def test_clamped_comparison_inputs_are_accepted(acc_a, acc_b, N, only_a, only_b):
    for percent in (False, True):
        a, b, N2, oa, ob, _ = evaluation_view.clamp_comparison_inputs(acc_a, acc_b, N, only_a, only_b, percent=percent)
        r = evaluation.compare_models(a, b, N2, only_a=oa, only_b=ob)
        assert np.isfinite(r.difference) and r.low <= r.difference <= r.high


# whole numbers (a seed, LoRA's rank) -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected", "note"),
    [
        (8.0, 8, None),
        (7.6, 8, "rounded to 8"),
        (5000.0, 64, "must lie between 0 and 64; using 64"),
        (-3.0, 0, "using 0"),
        (None, 8, "must be a number"),
        (float("nan"), 8, "must be a number"),
        (float("inf"), 8, "must be a number"),
    ],
)
def test_clamp_whole(value, expected, note):
    n, notes = inputs.clamp_whole_number(value, "r", 0, 64, 8)
    assert n == expected and isinstance(n, int)
    assert (notes == []) if note is None else any(note in x for x in notes)
    with pytest.raises(ValueError):
        inputs.clamp_whole_number(1.0, "r", 5, 4, 5)


# GRPO: a group's rewards typed as text ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,0,0,1,1,0,0,0", EXAMPLE_C),
        (" 1, 0; 0  1\n1 0 0 0 ", EXAMPLE_C),
        ("0.7 0.2 -1e-3", [0.7, 0.2, -0.001]),
        ("1, 1", [1, 1]),
    ],
)
def test_parse_rewards(text, expected):
    r = inputs.parse_rewards(text)
    assert r.dtype == np.float64 and r.tolist() == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "type between 2 and 64"),
        ("   ", "type between 2 and 64"),
        ("1", "between 2 and 64 answers; got 1"),
        (",".join(["1"] * 65), "got 65"),
        ("1, abc, 0", "reward 2 \\('abc'\\) is not a number"),
        ("1, nan, 0", "reward 2 .* not NaN"),
        ("inf 0", "reward 1 .* finite"),
        ("1,0,1e999", "reward 3"),
    ],
)
def test_parse_rewards_rejects(text, message):
    with pytest.raises(ValueError, match=message):
        inputs.parse_rewards(text)


def test_parse_rewards_rejects_non_text():
    with pytest.raises(ValueError, match="as text"):
        inputs.parse_rewards(None)  # type: ignore[arg-type]


def test_format_round_trip():
    assert inputs.format_rewards(EXAMPLE_C) == "1,0,0,1,1,0,0,0"
    assert inputs.format_rewards([0.5, 0.501, -2]) == "0.5,0.501,-2"
    for r in ([0.123456, 1.0], EXAMPLE_C):
        np.testing.assert_allclose(inputs.parse_rewards(inputs.format_rewards(r)), r)


def test_flip_in_text():
    assert inputs.flip_in_text("1,0,0,1,1,0,0,0", 7, "1,0") == "1,0,0,1,1,0,0,1"
    assert inputs.flip_in_text("0.25 0.5", 0, "1,0") == "0.75,0.5"
    assert inputs.flip_in_text("garbage", 1, "1,0,0,1") == "1,1,0,1"  # a click on the fallback group
    assert inputs.flip_in_text("1", 0, "1,0,0,1") == "0,0,0,1"  # G = 1 is refused too
    with pytest.raises(ValueError, match="answer index"):
        inputs.flip_in_text("1,0", 5, "1,0")


# KL leash: the answers' fields -----------------------------------------------------------------------------------


def test_read_answers_accepts_the_usual_ways_of_typing():
    a, problems = inputs.read_answers(3, "1/3; 1/3; 1/3", " 1 0 -2 ", "", "", None)
    assert problems == []
    assert a.pi_ref == pytest.approx((1 / 3,) * 3) and a.r == (1.0, 0.0, -2.0) and a.r_true == a.r
    assert a.names == ("y1", "y2", "y3") and not a.proxy_gap
    b, problems = inputs.read_answers(2, "0.5, 0.5", "1, 0", "1, -1", "good, bad", None)
    assert problems == [] and b.proxy_gap and b.names == ("good", "bad")


@pytest.mark.parametrize(
    ("bad", "text", "match"),
    [
        ("pi_ref", "0.5, abc", "'abc' is not a number"),
        ("pi_ref", "0.5, nan", "NaN and infinity"),
        ("pi_ref", "0.5, -0.5", "cannot be negative"),
        ("pi_ref", "0, 0", "all values are zero"),
        ("pi_ref", "", "empty"),
        ("pi_ref", "0.5, 0.5, 0", "3 values for K = 2"),
        ("pi_ref", "1e308, 1e308", "too large"),
        ("r", "1, inf", "NaN and infinity"),
        ("r", "1, 1e9", "within"),
        ("r", "1, 1" + "0" * 400 + "/3", "NaN and infinity"),
        ("r", "1", "1 values for K = 2"),
        ("r_true", "x, y", "'x' is not a number"),
        ("r_true", "1/0, 2", "'1/0' is not a number"),
        ("names", "one", "need 2 names"),
    ],
)
def test_read_answers_reports_each_bad_field_and_keeps_the_last_valid_value(bad, text, match):
    last = kl_leash.Answers((0.2, 0.8), (3.0, 4.0), (5.0, 6.0), ("x", "y"))
    fields = {"pi_ref": "0.5, 0.5", "r": "1, 0", "r_true": "1, -1", "names": "good, poor"} | {bad: text}
    a, problems = inputs.read_answers(2, **fields, fallback=last)
    assert len(problems) == 1 and match in problems[0]
    good = kl_leash.Answers((0.5, 0.5), (1.0, 0.0), (1.0, -1.0), ("good", "poor"))
    replaced = {"names": ("y1", "y2")}.get(bad, getattr(last, bad))
    assert a == dataclasses.replace(good, **{bad: replaced})


def test_read_answers_falls_back_to_neutral_values_when_the_last_input_has_another_k():
    last = kl_leash.Answers((0.5, 0.5), (1.0, 0.0), (1.0, 0.0), ("a", "b"))
    a, problems = inputs.read_answers(4, "abc", "1, 2, 3, 4", "", "", last)
    assert a.pi_ref == (0.25,) * 4 and len(problems) == 1 and "0.25, 0.25, 0.25, 0.25" in problems[0]
    with pytest.raises(ValueError, match="K must be between"):
        inputs.read_answers(11, "", "", "", "", None)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=10))
@settings(max_examples=60, deadline=None)
def test_property_rewards_survive_the_text_field(r):
    back = inputs.parse_values(inputs.format_values(r))
    np.testing.assert_allclose(back, r, rtol=1e-5, atol=1e-300)  # the field shows 6 significant digits


def test_resize_texts_keeps_fields_that_already_fit_and_pads_the_others():
    last = kl_leash.Answers.from_preset(LEASH_PRESETS["toy"])
    texts = {"pi_ref": "0.5, 0.5", "r": "1, 2, 3", "r_true": "", "names": "better, worse"}
    out = inputs.resize_texts(texts, 3, last)
    assert out == {"pi_ref": "0.5, 0.5, 0.5", "r": "1, 2, 3", "r_true": "", "names": "better, worse, y3"}
    assert inputs.read_answers(3, **out)[1] == []
    hack = kl_leash.Answers.from_preset(LEASH_PRESETS["reward_hack"])
    out = inputs.resize_texts(inputs.answer_texts(hack), 5, hack)
    assert out["r_true"] == "1, 0.5, 0, -1, 0" and out["pi_ref"].endswith(", 0.25")


def test_answers_round_trip_through_their_texts():
    for p in LEASH_PRESETS.values():
        a = kl_leash.Answers.from_preset(p)
        t = inputs.answer_texts(a)
        assert inputs.read_answers(a.K, t["pi_ref"], t["r"], t["r_true"], t["names"]) == (a, [])
    toy = kl_leash.Answers.from_preset(LEASH_PRESETS["toy"])
    assert inputs.answer_texts(toy) == {"pi_ref": "0.5, 0.5", "r": "1, 0", "r_true": "", "names": "better, worse"}


# LoRA: an uploaded ΔW --------------------------------------------------------------------------------------------


def _npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def test_upload_npy_and_csv_round_trip():
    a = np.random.default_rng(0).standard_normal((7, 5))
    np.testing.assert_array_equal(inputs.load_matrix(_npy_bytes(a), "m.NPY"), a)
    np.testing.assert_array_equal(inputs.load_matrix(_npy_bytes(a.astype(np.float32)), "m.npy"), a.astype(np.float32))
    np.testing.assert_array_equal(
        inputs.load_matrix(_npy_bytes(np.arange(6).reshape(2, 3)), "i.npy"), [[0, 1, 2], [3, 4, 5]]
    )
    text = "\n".join(",".join(repr(float(v)) for v in row) for row in a)
    np.testing.assert_array_equal(inputs.load_matrix(text, "m.csv"), a)
    np.testing.assert_array_equal(inputs.load_matrix(("# comment\n" + text).encode("utf-8-sig"), "m.csv"), a)
    np.testing.assert_array_equal(inputs.load_matrix("1 2\n3 4\n", "m.txt"), [[1, 2], [3, 4]])


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        ("a,b\n1,2\n3,4", "m.csv", "not a rectangular table of numbers"),
        ("1,2\n3,x", "m.csv", "not a rectangular table of numbers"),
        ("1,2,3\n4,5", "m.csv", "not a rectangular table of numbers"),
        ("1,nan\n3,4", "m.csv", "non-finite"),
        ("1,2\ninf,4", "m.csv", "non-finite"),
        ("1,2,3", "m.csv", "at least 2 x 2"),
        ("1\n2\n3", "m.csv", "at least 2 x 2"),
        ("", "m.csv", "empty"),
        ("0,0\n0,0", "m.csv", "all zeros"),
        (b"\xff\xfe\x00", "m.csv", "UTF-8"),
        (_npy_bytes(np.arange(5.0)), "v.npy", "2-D"),
        (_npy_bytes(np.zeros((2, 2, 2))), "t.npy", "2-D"),
        (_npy_bytes(np.ones((2, 2), dtype=complex)), "c.npy", "complex"),
        (_npy_bytes(np.array([["a", "b"], ["c", "d"]])), "s.npy", "numbers only"),
        (_npy_bytes(np.ones((4097, 2))), "big.npy", "at most 4096 x 4096"),
        (b"not an npy file at all", "x.npy", "npy"),
        ("1,2\n3,4", "x.npy", "binary"),
        (b"1,2", "m.xlsx", "unsupported file type"),
    ],
)
def test_bad_uploads_give_clear_messages(data, name, message):
    with pytest.raises(ValueError, match=message):
        inputs.load_matrix(data, name)


def test_pickled_object_array_is_refused():
    buf = io.BytesIO()
    np.save(buf, np.array([[{"a": 1}, 2], [3, 4]], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="npy"):
        inputs.load_matrix(buf.getvalue(), "o.npy")


def test_oversized_csv_is_refused_before_parsing():
    text = "1,2\n" * 4097
    with pytest.raises(ValueError, match="at most 4096"):
        inputs.load_matrix(text, "m.csv")


# attention: typed text -------------------------------------------------------------------------------------------


def test_empty_typed_text_uses_the_fallback():
    empty = inputs.typed_tokens("   \n\t ", fallback=tokenizer.DEFAULT_TEXT)
    assert empty.tokens == tuple(tokenizer.DEFAULT_TEXT.split()) and "example" in empty.note


def test_toy_settings_never_raise_and_explain():
    s, notes = inputs.toy_settings(100, 3)
    assert (s.d_model, s.heads, s.d_k) == (100, 3, 33) and "not a multiple" in notes[0]
    s, notes = inputs.toy_settings(64, 8, kv_heads=3)
    assert s.n_kv_heads in (2, 4) and "do not divide" in notes[0]
    s, notes = inputs.toy_settings(64, 4, d_k=32)
    assert s.d_k == 32 and "differs from d_model" in notes[0]
    s, notes = inputs.toy_settings(0, 0)
    assert (s.d_model, s.heads, s.d_k) == (1, 1, 1) and notes
    s, notes = inputs.toy_settings(10**6, 10**3, kv_heads=1)
    assert s.d_model == toy_attention.MAX_D_MODEL and s.heads == toy_attention.MAX_HEADS and s.n_kv_heads == 1
    s, notes = inputs.toy_settings(64, 4, kv_heads=4)
    assert s.kv_heads is None and notes == ()


# attention: the KV-cache calculator ------------------------------------------------------------------------------


def test_kv_calculator_inputs_pass_valid_shapes_unchanged():
    counts, b, notes = inputs.kv_calculator_inputs(80, 64, 8, 128, 2, 131072)
    assert counts == {"layers": 80, "query_heads": 64, "kv_heads": 8, "head_dim": 128, "tokens": 131072, "batch": 1}
    assert b == 2 and notes == ()


def test_kv_calculator_inputs_note_every_change_and_never_raise():
    counts, _, notes = inputs.kv_calculator_inputs(80, 64, 6, 128)
    assert counts["kv_heads"] == 6 and any("do not split 64 query heads" in n for n in notes)
    counts, _, notes = inputs.kv_calculator_inputs(80, 8, 64, 128)
    assert counts["kv_heads"] == 8 and any("at most one KV head per query head" in n for n in notes)
    for bad in (float("nan"), float("inf"), -5.0, 0.0, 1e400):
        counts, b, notes = inputs.kv_calculator_inputs(bad, bad, bad, bad, 2, bad, bad)
        assert notes and all(v == 1 for v in counts.values())
        kv_cache.kv_cache_comparison(**counts, bytes_per_value=b)  # core accepts what comes out
    counts, _, notes = inputs.kv_calculator_inputs(1e9, 64, 8, 128, 2, 1e12)
    assert counts["layers"] == inputs.KV_LIMITS["layers"] and counts["tokens"] == inputs.KV_LIMITS["tokens"]
    assert notes == (
        "layers: using 1,000 (whole numbers from 1 to 1,000).",
        "tokens: using 100,000,000 (whole numbers from 1 to 100,000,000).",
    )
    assert inputs.kv_calculator_inputs(80, 64, 8, 128, 0)[1] == 2  # a bad byte count falls back to bf16


def test_kv_limits_are_the_attention_pages_field_ranges():
    from views import attention as attention_view

    fields = {"layers": "L", "query_heads": "Hq", "kv_heads": "Hkv", "head_dim": "hd", "tokens": "ctx", "batch": "B"}
    assert {k: attention_view.SPEC[f].hi for k, f in fields.items()} == inputs.KV_LIMITS


def test_clamps_take_their_defaults_and_ranges_from_the_pages_fields():
    from views import evaluation as eval_view
    from views import lora as lora_view

    spec = eval_view.SPEC
    n, c, k, _ = evaluation_view.clamp_pass_at_k_inputs("abc", None, "x")
    assert (n, c, k) == (spec["n"].default, spec["c"].default, spec["k"].default) == (10, 3, 5)
    p, _, _, m, _ = evaluation_view.clamp_simulation_inputs(None, 10, 5, "many")
    assert (p, m) == (spec["p"].default, spec["problems"].default) == (0.3, 100_000)
    assert evaluation_view.clamp_simulation_inputs(0.3, 10, 5, 1e9)[3] == spec["problems"].hi == 1_000_000
    a, b, N, *_ = evaluation_view.clamp_comparison_inputs(None, None, None, percent=True)
    assert (a, b, N) == (spec["accA"].default / 100, spec["accB"].default / 100, spec["questions"].default)
    assert evaluation_view.clamp_comparison_inputs(0.5, 0.5, 1e12)[2] == spec["questions"].hi == 10**9
    rank = lora_view.SPEC["rank"]
    assert inputs.clamp_field(5000, rank, lo=1) == (4096, ["rank = 5000 must lie between 1 and 4096; using 4096."])
    assert inputs.clamp_field(0, rank, lo=1, name="r")[0] == 1  # the cost tab needs r >= 1: a cross-field limit
    assert inputs.clamp_field("x", rank, hi=6)[0] == 6  # the default (8) moved into the narrower range
    assert inputs.clamp_field(2e9, lora_view.SPEC["seed"]) == (
        10**9,
        ["seed = 2000000000 must lie between 0 and 1000000000; using 1000000000."],
    )


# ppo: the GAE tab's typed rewards and critic values -------------------------------------------------------------


def test_read_numbers_round_trips_the_written_lists_and_names_the_bad_entry():
    values = (0.0, -1.5, 2e-7, 123456.0)  # the written lists keep 6 significant digits
    assert inputs.read_numbers(inputs.format_values(values), "Rewards") == (list(values), None)
    assert inputs.read_numbers(" 1;2  3,4 ", "r") == ([1.0, 2.0, 3.0, 4.0], None)
    assert inputs.read_numbers("", "r") == ([], None)  # the page asks for at least one reward itself
    assert inputs.read_numbers("1, two, 3", "Rewards") == (None, "Rewards: `two` is not a number.")
    assert inputs.read_numbers("1, inf", "Critic values") == (
        None,
        "Critic values: every entry must be a finite number.",
    )
