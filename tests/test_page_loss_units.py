"""The loss-and-units page in AppTest: presets show the lesson's numbers (ln V, 97.6%, identical bits per byte),
each tab draws its figure, a deep link reproduces the view, and bad link values or texts give a warning."""

import math
from fractions import Fraction

import numpy as np
import pytest

from core.loss_units import example_lengths
from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
)
from views import Options
from views import loss_units as view_of

PAGE = "pages/12_Loss_and_units.py"


def test_default_readouts(default):
    m = metrics(default)
    assert m["Uniform loss ln V"] == f"{math.log(50_000):.2f} nats" == "10.82 nats"
    assert m["Unmasked SFT loss weight on the prompt"] == f"{float(Fraction(2000, 2050)):.1%}" == "97.6%"
    assert m["Bits per byte, one byte model"] == "2.3121"
    assert m["Perplexity, one byte model"] == "4.97 to 142.9"
    units = figures(default)[0]
    bpb_same = decode(units["data"][1]["y"])  # one byte model, bits per byte: identical for every tokenizer
    assert np.ptp(bpb_same) < 1e-9 and bpb_same.size == 5
    tables = " ".join(t.value.to_string() for t in default.dataframe)
    assert "␣t" in tables  # the first merge of the bundled text: " " + "t"


def test_presets_show_their_numbers():
    at = open_page(PAGE)
    choose_preset(at, "Loss_and_units", "Llama 3's vocabulary: V = 128,256").run()
    assert metrics(at)["Uniform loss ln V"] == f"{math.log(128_256):.2f} nats"
    choose_preset(at, "Loss_and_units", "Lesson: 2,000-token prompt, 50-token answer, unmasked").run()
    assert no_exception(at) and at.warning.len == 0
    assert metrics(at)["Unmasked SFT loss weight on the prompt"] == "97.6%"
    sft = figures(at)[1]
    assert sft["layout"]["title"]["text"].startswith("97.6% of the loss on prompt tokens")
    at.toggle(key="sft_batch").set_value(True).run()
    sft = figures(at)[1]
    batch_share = Fraction(2000 + 200, 2050 + 500)  # the second example: a 200 + 300-token chat turn
    assert sft["layout"]["title"]["text"].startswith(f"{float(100 * batch_share):.1f}% of the loss on prompt")
    weights = decode(sft["data"][0]["z"])
    # unmasked, per token: every real token of the batch weighs 1 / (2,050 + 500); padding 0
    assert weights[0, 0] == pytest.approx(1 / 2550) and weights[1, -1] == 0.0
    choose_preset(at, "Loss_and_units", "Padding: 512 chat lengths, batches of 16").run()
    assert no_exception(at)
    lengths = [int(x) for x in example_lengths(512, seed=0)]
    batches = [lengths[i : i + 16] for i in range(0, 512, 16)]
    waste = 1 - sum(lengths) / sum(max(b) * len(b) for b in batches)  # a plain loop, no core
    caption = next(c.value for c in at.caption if "Padding to the longest" in c.value)
    assert f"wastes {waste:.1%}" in caption and "68.5%" in caption


def test_packing_tab_from_a_link():
    at = open_page(PAGE, {"loss_view": "Packing", "doc_lens": "2,3"})
    assert no_exception(at) and at.warning.len == 0
    caption = next(c.value for c in at.caption if "naive packing" in c.value)
    assert "lets 6 query-key pairs" in caption  # the 3 tokens of doc 2 each see the 2 of doc 1
    assert "[0, 1, 0, 1, 2]" in caption


def test_a_control_of_a_closed_tab_opens_its_tab():
    """Walkthrough 1.9: with the SFT mask open, "BPE merges learned" changed nothing on screen. Moving a control that
    only one tab's figure shows opens that tab, and the tab's content follows the new value."""
    assert set(view_of.TAB_OF) <= {f.name for f in view_of.SPEC.fields} and set(view_of.TAB_OF.values()) <= set(
        view_of.VIEWS
    )
    at = open_page(PAGE, {"loss_view": "SFT mask"})
    assert at.session_state["loss_view"] == "SFT mask"
    at.sidebar.slider(key="bpe_merges").set_value(12).run()
    assert no_exception(at) and at.session_state["loss_view"] == "BPE merges"
    assert any("after these 12 merges" in m.value for m in at.markdown)
    at.sidebar.number_input(key="pad_batch").set_value(8).run()
    assert at.session_state["loss_view"] == "Padding"


def test_deep_link_reproduces_the_view():
    query = {
        "vocab_size": "32000",
        "prompt_len": "500",
        "resp_len": "120",
        "loss_view": "SFT mask",
        "sft_mask": "false",
    }
    at = open_page(PAGE, query)
    assert no_exception(at) and at.warning.len == 0
    state, problems = view_of.SPEC.parse(query)
    assert not problems
    view = view_of.figures(state, Options(parts=frozenset({"main", "SFT mask"})))
    assert metrics(at) == {r.label: r.value for r in view.readouts}
    np.testing.assert_allclose(decode(figures(at)[1]["data"][0]["z"]), view.figures["SFT mask"].data[0].z)


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_warn_and_fall_back(default, bad):
    assert_bad_link_falls_back(open_page(PAGE, {"vocab_size": bad, "resp_len": bad}), default, bad, warning="")


@pytest.mark.parametrize(
    ("text", "says"), [("", "is empty"), ("x" * 100_000, "longer than 20,000"), ("lighthouse " * 3, None)]
)
def test_texts(default, text, says):
    at = open_page(PAGE, {"eval_text": text})
    assert no_exception(at)
    warnings = " ".join(w.value for w in at.warning)
    if says:
        assert says in warnings
    else:
        assert not warnings and metrics(at) != metrics(default)


def test_bad_document_lengths_warn():
    at = open_page(PAGE, {"loss_view": "Packing", "doc_lens": "3,x"})
    assert no_exception(at)
    assert any("whole numbers" in w.value for w in at.warning)


def test_home_stage_table_links_the_loss_page_under_pretraining_and_sft():
    at = open_page(None)
    assert no_exception(at)
    labels = [link.proto.label for link in at.get("page_link")]
    assert labels.count("Loss, units and SFT mask") == 3  # the sidebar, Pretraining and SFT
    assert labels.count("Sampling and decoding") == 2 and labels.count("LR schedules and mid-training") == 2


def _merges_view(n: int):
    state = view_of.SPEC.defaults().replace(bpe_merges=n)
    return view_of.figures(state, Options(parts=frozenset({"main", "BPE merges"})))


def test_bpe_merges_drag_steps_are_the_views_at_each_merge_count(default):
    """The BPE tab's figure drags "BPE merges learned" over every count, 1 to 60: step i moves the two markers to
    the view at values[i] and rewrites its readout panel; the curves over every count stay as they are."""
    fig = figures(default)[1]
    assert fig["layout"]["title"]["text"].startswith("One byte model")
    slider = slider_of(fig)
    drag = _merges_view(10).drags["BPE merges"]
    field = view_of.SPEC["bpe_merges"]
    assert drag.field == "bpe_merges" and drag.values == tuple(range(1, 61))
    assert all(field.check(v) is None and isinstance(v, int) for v in drag.values)
    assert drag.values[slider["active"]] == default.slider(key="bpe_merges").value == 10
    assert [s["label"] for s in slider["steps"]] == [str(v) for v in drag.values]
    assert slider["currentvalue"]["prefix"] == "BPE merges learned: "
    for i in (0, 29, 59):
        step = slider["steps"][i]
        updates, layout, traces = step["args"]
        assert traces == [2, 3] and list(layout) == ["annotations[0].text"]
        drawn = _merges_view(drag.values[i]).figures["BPE merges"]
        for k, trace in enumerate(traces):
            assert decode(updates["x"][k]).tolist() == list(drawn.data[trace].x)
            np.testing.assert_array_equal(decode(updates["y"][k]), drawn.data[trace].y)
        assert layout["annotations[0].text"] == drawn.layout.annotations[0].text
    # the curves (traces 0 and 1) are those of the page's figure at every count
    np.testing.assert_array_equal(decode(fig["data"][0]["y"]), _merges_view(60).figures["BPE merges"].data[0].y)


def test_bpe_merges_readout_against_a_bpe_trained_to_that_size(default):
    """Step 44 (the main figure's bpe-300: 256 + 44 tokens) against the tokenizers package trained to 300 entries,
    and the main figure's own bpe-300 bar: the same total loss over the same tokens."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from core.sampling import bundled_text

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[], show_progress=False
    )
    tok.train_from_iterator([bundled_text()], trainer=trainer)
    T = len(tok.encode(view_of.HELDOUT).ids)
    n_bytes = len(view_of.HELDOUT.encode("utf-8"))
    main, fig = figures(default)[:2]
    bpb = float(decode(main["data"][1]["y"])[0])  # the one byte model's bits per byte (every tokenizer's)
    ppl = 2 ** (bpb * n_bytes / T)  # e^(T·L / T) with T·L = bpb · n_bytes · ln 2
    text = slider_of(fig)["steps"][43]["args"][1]["annotations[0].text"]
    assert text.startswith("<b>44 merges</b> (vocabulary 300)")
    assert f"{T:,} tokens, {float(Fraction(n_bytes, T)):.2f} bytes each" in text
    assert f"perplexity per token {ppl:.2f}" in text and f"bits per byte {bpb:.4f}" in text
    assert float(decode(main["data"][0]["y"])[2]) == pytest.approx(ppl, rel=1e-9)  # the bpe-300 bar
    tokens = slider_of(fig)["steps"][43]["args"][0]["y"][0]
    assert decode(tokens).tolist() == [T]


def test_the_tiny_gpt_bits_per_byte_is_its_recomputed_held_out_loss(default):
    """The readout ships the checkpoint's stored held-out loss (the page's first paint does not run the 1 s
    evaluation); recomputed here with val_loss_numpy, it is the same number, and bits per byte = nats / ln 2."""
    from core import tiny_gpt

    params, cfg, meta = tiny_gpt.load_checkpoint()
    nats = tiny_gpt.val_loss_numpy(params, cfg)
    assert meta["val_loss"] == pytest.approx(nats, abs=1e-6)
    assert tiny_gpt.SHIPPED_VAL_LOSS == pytest.approx(nats, abs=1e-4)
    assert metrics(default)["Bits per byte, tiny GPT (its own held-out text)"] == f"{nats / math.log(2):.3f}"
    label = "Bits per byte, tiny GPT (its own held-out text)"
    help_text = next(m.proto.help for m in default.metric if m.label == label)
    assert help_text.startswith(f"{nats:.3f} nats per byte / ln 2")
