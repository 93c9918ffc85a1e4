"""The training-memory page in AppTest: the default view, every preset shows its answers, a link reproduces a
view, bad link values and bad inputs give a message and never an exception, the traps show the wrong number."""

import json

import numpy as np
import pytest

from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    assert_presets_show_their_answers,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
    trace,
)
from views import Options
from views import training_memory as view_of

PAGE = "pages/7_Training_memory.py"
GIB = 2**30
N_LLAMA3_8B = 8_030_261_248  # Llama-3-8B's parameters (Meta's model card: 8.03B)

# One answer per preset, written out from its source (lesson 001, seed 002's A10), as the page shows it.
ANSWERS = {
    "001-3.2": ("states 7B GB", "112 GB"),
    "001-A": ("states GB", "24 GB"),
    "A10-01": ("gqa saving per layer", "117.4M"),
    "A10-02": ("total", "70.55B"),
    "A10-03": ("crossover 002", "1,792"),
    "A10-04": ("gqa attention constant", "4.5"),
    "A10-05": ("C 7B 2T", "8.400×10²²"),
    "A10-06": ("bubble p8 m8", "46.7%"),
    "A10-09": ("states 70B GB", "1,120 GB"),
    "A10-10": ("microbatches for 10pct", "63"),
    "A10-12": ("days", "90.77"),
}

# The page's own readouts for the same problems: 8 H100s for 24 h (lesson 001 A); 2,048 H100s for 91 days and
# $8.9M (002 A10-12); ZeRO-1 over 8 x 8 x 8 GPUs: 8 GiB per card and m = 63 for a 10% bubble (002 A10-10).
ALSO = {
    "001-A": {"Training time": "24.0 h", "Per GPU (ZeRO-0)": "22.4 GiB"},
    "A10-12": {"Training time": "90.8 days", "Cost": "$8,923,155", "GPUs = TP × PP × DP": "2,048"},
    "A10-10": {"Per GPU (ZeRO-1)": "8.00 GiB", "Pipeline bubble": "10.0%"},
    "A10-09": {"Per GPU (ZeRO-3)": f"{70e9 * 16 / 16 / 2**30:,.1f} GiB"},
}


def test_default_view(default):
    assert default.warning.len == 0
    m = metrics(default)
    # ZeRO-1 over 8: 2 + 2 + 12/8 = 5.5 bytes per parameter, plus 17 GiB of activations (selective recompute:
    # 34 s h bytes per layer x 32 layers = 34 x 4096 x 4096 x 32 B)
    states = N_LLAMA3_8B * 5.5
    acts = 34 * 4096 * 4096 * 32
    assert m["Per GPU (ZeRO-1)"] == f"{(states + acts) / GIB:,.1f} GiB" == "58.1 GiB"
    assert m["Bytes/param on this GPU"] == "5.50"
    assert m["Activations per GPU"] == "17.0 GiB"
    assert m["All training states"] == "128 GB"  # 16 B x 8.03B
    fig = figures(default)[0]
    opt = trace(fig, "optimizer states")
    assert [round(v * GIB / N_LLAMA3_8B, 6) for v in decode(opt["y"])] == [12, 1.5, 1.5, 1.5]


def test_every_preset_shows_its_answer():
    assert_presets_show_their_answers(PAGE, view_of.SPEC, ANSWERS, ALSO)


def test_lesson_7b_preset_bars():
    at = open_page(PAGE)
    choose_preset(at, "Training_memory", "001-3.2: A 7B model's training states").run()
    fig = figures(at)[0]
    total0 = sum(decode(trace(fig, part)["y"])[0] for part in ("weights", "gradients", "optimizer states"))
    assert total0 * GIB == pytest.approx(112e9)  # 16 B x 7e9 without ZeRO: over the 80 GiB line
    assert metrics(at)["Per GPU (ZeRO-1)"] == f"{7e9 * 5.5 / GIB:,.1f} GiB"


def test_link_reproduces_a_preset():
    name = "A10-10: Sharding a 100B training run"
    clicked = open_page(PAGE)
    choose_preset(clicked, "Training_memory", name).run()
    linked = open_page(PAGE, view_of.SPEC.query(view_of.SPEC.state(view_of.SPEC.presets[name])))
    assert no_exception(linked) and linked.warning.len == 0
    assert metrics(linked) == metrics(clicked)
    assert metrics(linked)["Per GPU (ZeRO-1)"] == "8.00 GiB"  # 100B / 64 x 5.5 B (002 A10-10), 3 figures
    assert metrics(linked)["Pipeline bubble"] == "10.0%"  # p = 8, m = 63


def test_model_link_is_carried():
    at = open_page(PAGE, {"mem_model": "Mixtral-8x7B", "dp": "64", "zero": "3"})
    assert no_exception(at) and at.warning.len == 0
    assert "46.7B parameters" in next(x.proto.help for x in at.metric if x.label == "All training states")


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values(default, bad):
    assert_bad_link_falls_back(
        open_page(PAGE, {"dp": bad, "D": bad, "seq": bad, "params": bad}), default, bad, warning=""
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"tp": "3"}, "does not divide the 32 attention heads"),
        ({"mem_model": "Llama-3.1-405B", "dp": "1"}, "Does not fit"),
        ({"dp": "0"}, "dp=0"),
    ],
)
def test_bad_inputs_give_their_message(query, message):
    at = open_page(PAGE, query)
    assert no_exception(at)
    assert any(message in w.value for w in at.warning), [w.value for w in at.warning]


def test_traps_show_the_wrong_number_beside_the_right_one():
    at = open_page(PAGE, {"mem_traps": ["GB instead of GiB", "sparse peak", "forgot the MFU"]})  # one parameter each
    assert no_exception(at) and at.warning.len == 0
    m = metrics(at)
    assert m["✗ Headroom if the label were GB"] == f"{(80e9 - (N_LLAMA3_8B * 5.5 + 34 * 4096**2 * 32)) / GIB:+,.1f} GiB"
    helps = {x.label: x.proto.help for x in at.metric}
    assert "×0.50" in helps["✗ Training time, sparse peak"]  # 989 / 1979 TFLOP/s
    assert "×0.40" in helps["✗ Training time, forgot the MFU"]
    shapes = [s for s in figures(at)[0]["layout"]["shapes"] if s["type"] == "line"]
    assert shapes[1]["y0"] == pytest.approx(80e9 / GIB)


def _view_readouts(name: str) -> dict[str, tuple[str, str]]:
    """label -> (value, help) of the view behind a preset (no AppTest: the same readouts the page shows)."""
    view = view_of.figures(view_of.SPEC.state(view_of.SPEC.presets[name]), Options(parts=frozenset()))
    return {r.label: (r.value, r.help) for r in view.readouts}


def test_a10_06_mfu_preset_shows_the_seeds_numbers():
    r = _view_readouts("A10-06: MFU from measured throughput")
    # seed 002 A10-06: the cluster peak 1.01 x 10^18 (three figures); its MFU line was lost: 6 x 7.06e10 x 12,000 /
    # 1.01e18 = 0.50% to two figures, which the page's value also rounds to
    assert r["Cluster peak (FLOP/s)"][0] == "1.013×10¹⁸"
    value, help_text = r["Model FLOPs utilisation"]
    assert f"{float(value.rstrip('%')) / 100:.2%}" == f"{6 * 7.06e10 * 12_000 / 1.01e18:.2%}" == "0.50%"
    assert "lost in extraction" in help_text and "0.503%" in help_text
    # "about 950,000 tokens/s": the page shows core's unrounded 956,314 and says why it is not 953,730
    value, help_text = r["Tokens per second for 40% utilisation"]
    assert value == f"{0.40 * 1024 * 989e12 / (6 * 7.06e10):,.0f}" == "956,314"
    assert (
        "the source states 9.5×10⁵ (about 950,000)" in help_text and "1.01e18" in help_text and "953,730" in help_text
    )


def test_a10_12_preset_shows_the_seeds_numbers():
    r = _view_readouts("A10-12: Training time and cost")
    days = 6 * 7.06e10 * 15e12 / (2048 * 989e12 * 0.40) / 86_400
    assert r["Training time (days)"][0] == f"{days:.2f}" == "90.77" and round(days) == 91  # seed 002: "91 days"
    assert r["Training time"][0] == "90.8 days"
    # the cost line was lost; the seed's 2,048 x 91 days x 24 h x $2 = $8.95M and the page's $8.92M are $8.9M
    value, help_text = r["Cost of the GPU time"]
    assert value == "$8.92M" and f"{2048 * 91 * 24 * 2 / 1e6:.1f}" == f"{float(value[1:-1]):.1f}" == "8.9"
    assert "lost in extraction" in help_text and "$8.95M" in help_text and "90.77" in help_text
    assert r["GPUs for a one-month run"][0] == "6,197"  # "roughly 6000 cards" for a month
    assert r["Speed-up a one-month run needs"][0] == "3.026"  # "3x the compute"


def _fig(state) -> dict:
    return json.loads(view_of.figures(state, Options()).figures["main"].to_json())


def test_the_sequence_length_drag_reaches_the_browser_and_each_step_is_the_page_at_that_length(default):
    """The live chart gets the memory figure with the sweep of the view's declared lengths (the powers of two up to
    2^20, the page's 4,096 among them and active); step i restyles the activations and rewrites the totals, the y
    range and the readout to the figure the page draws at seq = values[i] (first, middle and last step)."""
    fig = figures(default)[0]
    assert "sliders" not in fig["layout"] and fig["sweep"]["label"] == "Sequence length"
    slider = slider_of(fig)
    state = view_of.SPEC.defaults()
    view = view_of.figures(state, Options())
    values = view.drags["main"].values
    assert values == tuple(2**k for k in range(21)) and set(view.drags) == {"main"}
    assert all(view_of.SPEC["seq"].check(v) is None and isinstance(v, int) for v in values)
    assert values[slider["active"]] == default.session_state["seq"] == 4096
    assert [s["label"] for s in slider["steps"]] == [f"{v:,}" for v in values]
    assert slider["currentvalue"]["prefix"] == "sequence length = "
    for i in (0, 10, 20):
        restyle, relayout, traces = slider["steps"][i]["args"]
        there = _fig(state.replace(seq=values[i]))
        bars = {tr["name"]: tr for tr in there["data"]}
        assert traces == [3] and there["data"][3]["name"] == "activations"  # the activations alone move
        np.testing.assert_array_equal(restyle["y"][0], decode(bars["activations"]["y"]))
        np.testing.assert_array_equal(restyle["customdata"][0], decode(bars["activations"]["customdata"]))
        assert relayout["title.text"] == there["layout"]["title"]["text"]
        assert relayout["yaxis.range"] == there["layout"]["yaxis"]["range"]
        notes = there["layout"]["annotations"]
        for k in range(1, 5):  # the card's label, then the four totals
            assert relayout[f"annotations[{k}].text"] == notes[k]["text"]
            assert relayout[f"annotations[{k}].y"] == notes[k]["y"]
            assert relayout[f"annotations[{k}].font.color"] == notes[k]["font"]["color"]
    # the figure as drawn is its active step
    active = slider["steps"][slider["active"]]["args"][1]
    assert active["title.text"] == fig["layout"]["title"]["text"]


def test_the_sequence_length_steps_match_korthikantis_count_by_hand(default):
    """Llama-3-8B with selective recomputation keeps 34·s·b·h bytes per layer (Korthikanti et al. 2022): at
    s = 2^20, b = 1, h = 4,096 and 32 layers that is 4,352 GiB = 4.25 TiB per GPU, far over the card; at s = 1 it is
    4.25 MiB, under 0.1 GiB. Three significant figures, in TiB past 1,000 GiB."""
    steps = slider_of(figures(default)[0])["steps"]
    last = steps[-1]["args"]
    acts = 34 * 2**20 * 1 * 4096 * 32
    assert acts / GIB == 4352.0 and list(last[0]["y"][0]) == [4352.0] * 4
    zero1 = N_LLAMA3_8B * 5.5 + acts  # 2 + 2 + 12/8 bytes per parameter over DP 8, plus the activations
    assert f"{zero1 / 2**40:.3g}" == "4.29" and f"{(zero1 - 80 * GIB) / 2**40:.3g}" == "4.21"
    assert last[1]["annotations[2].text"] == "<b>4.29 TiB</b> ✗"
    assert last[1]["title.text"] == (
        "seq 1,048,576: activations 4.25 TiB per GPU<br>ZeRO-1 total 4.29 TiB per GPU, headroom −4.21 TiB of 80 GiB"
    )
    first = steps[0]["args"]  # s = 1: 34 · 4,096 · 32 bytes = 4.25 MiB
    assert first[0]["y"][0][1] == pytest.approx(34 * 4096 * 32 / GIB)
    small = N_LLAMA3_8B * 5.5 + 34 * 4096 * 32
    assert f"{small / GIB:.3g}" == "41.1" and f"{(80 * GIB - small) / GIB:.3g}" == "38.9"
    assert first[1]["title.text"] == (
        "seq 1: activations <0.1 GiB per GPU<br>ZeRO-1 total 41.1 GiB per GPU, headroom +38.9 GiB of 80 GiB"
    )
    assert first[1]["annotations[2].text"] == "<b>41.1 GiB</b>"


def test_a_million_tokens_without_recomputation_print_in_pib_with_three_figures():
    """Without recomputation Korthikanti et al.'s count keeps s·b·h·(34 + 5·a·s/h) bytes per layer: at s = 2^20,
    h = 4,096, a = 32 and 32 layers, 5,247,232 GiB = 5.00 PiB. The readout line, the bars and the page's readouts
    print it in PiB (not '5,247,232.0 GiB'); the GB-as-GiB trap's headroom too."""
    s, h, a, layers = 2**20, 4096, 32, 32
    acts = s * h * (34 + 5 * a * s / h) * layers
    assert acts / GIB == 5_247_232 and f"{acts / 2**50:.2f}" == "5.00"  # 5.004 PiB to three figures
    state = view_of.SPEC.defaults().replace(seq=2**20, recompute="none", mem_traps=("GB instead of GiB",))
    view = view_of.figures(state, Options())
    fig = view.figures["main"].to_dict()
    assert fig["layout"]["title"]["text"] == (
        "seq 1,048,576: activations 5.00 PiB per GPU<br>ZeRO-1 total 5.00 PiB per GPU, headroom −5.00 PiB of 80 GiB"
    )
    # annotation 0: the card's label, 1: the trap's, then one total per bar
    assert [n["text"] for n in fig["layout"]["annotations"][2:6]] == ["<b>5.00 PiB</b> ✗"] * 4
    r = {x.label: x.value for x in view.readouts}
    assert r["Activations per GPU"] == r["Per GPU (ZeRO-1)"] == "5.00 PiB"
    assert r["Headroom on the card"] == r["✗ Headroom if the label were GB"] == "−5.00 PiB"
    assert any("needs 5.00 PiB per GPU" in text for _, text in view.notices)


@pytest.mark.parametrize(
    "query", [{"params": "7e9"}, {"tp": "3"}], ids=["bare parameter count: no activations", "a layout that fails"]
)
def test_no_drag_where_the_figure_shows_no_activations(query):
    state, problems = view_of.SPEC.parse(query)
    assert problems == []
    view = view_of.figures(state, Options())
    assert view.drags == {}
    assert "main" not in view.figures or not view.figures["main"].layout.sliders
