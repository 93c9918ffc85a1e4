"""The sampling page in AppTest: presets show the lesson's numbers (checked against a plain numpy sampler), a deep
link reproduces the view, the temperature slider's steps match the values the drag writes back, and bad link
values give a warning, never an exception."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.sampling import VOCAB_PRESETS
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
from views import sampling as view_of
from views.state import check_unique

PAGE = "pages/11_Sampling.py"
ROOT = Path(__file__).resolve().parents[1]
Z = np.array(VOCAB_PRESETS["keeper"].logits)


def reference(z, T, top_p=1.0, filters_first=False):
    """A plain numpy sampler: softmax, then the nucleus by a loop over the sorted tokens (the crossing one kept)."""

    def softmax(x):
        e = np.exp(x - x.max())
        return e / e.sum()

    p = softmax(z if filters_first else z / T)
    keep, mass = np.zeros(z.size, bool), 0.0
    for i in np.argsort(-p, kind="stable"):
        if mass >= top_p:
            break
        keep[i], mass = True, mass + p[i]
    kept_z = np.where(keep, z / T, -np.inf)
    return softmax(kept_z)


def entropy(p):
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


def test_default_readouts_match_a_plain_softmax(default):
    m = metrics(default)
    p = reference(Z, 1.0)
    assert m["Kept tokens"] == "30 of 30"
    assert m["Entropy H"] == f"{entropy(p):.3f} nats"
    assert m["Effective choices exp(H)"] == "7.30"  # the draft text's number
    assert m["Top token"] == f"lens: {p.max():.3f}"


def test_temperature_slider_steps_are_the_drag_values(default):
    fig = figures(default)[0]
    slider = slider_of(fig)
    temps = view_of.figures(view_of.SPEC.defaults()).facts["temps"]
    assert [s["label"] for s in slider["steps"]] == [f"{t:g}" for t in temps]
    assert temps[slider["active"]] == 1.0
    sampled = decode(fig["data"][1]["y"])
    np.testing.assert_allclose(sampled, reference(Z, 1.0), atol=1e-5)
    greedy = slider["steps"][0]["args"][0]["y"][1]
    assert list(decode(greedy)) == [1.0] + [0.0] * 29  # T = 0: the argmax alone


def test_presets_show_their_numbers():
    at = open_page(PAGE)
    expected = {
        "Order matters: T = 2, top-p 0.9": {
            "Kept tokens": f"{int((reference(Z, 2.0, 0.9) > 0).sum())} of 30",
            "Kept with filters first": str(int((reference(Z, 2.0, 0.9, filters_first=True) > 0).sum())),
        },
        "Greedy: T = 0": {"Kept tokens": "1 of 30", "Effective choices exp(H)": "1.00", "Top token": "lens: 1.000"},
        "Sharp: T = 0.5": {"Effective choices exp(H)": f"{math.exp(entropy(reference(Z, 0.5))):.2f}"},
        "Flat: T = 2": {"Effective choices exp(H)": f"{math.exp(entropy(reference(Z, 2.0))):.2f}"},
        "top-k 5": {"Kept tokens": "5 of 30", "Least likely kept token": "light"},
        "Quick check: 0.5, 0.3, 0.2 at top-p 0.6": {
            "Kept tokens": "2 of 3",
            "Top token": "A: 0.625",
            "Least likely kept token": "B",
        },
        "Bigram model after “the”": {},
    }
    assert set(expected) <= set(view_of.SPEC.presets)
    for preset, numbers in expected.items():
        choose_preset(at, "Sampling", preset).run()
        assert no_exception(at) and at.warning.len == 0, preset
        m = metrics(at)
        for label, value in numbers.items():
            assert m[label] == value, (preset, label)
    # the lesson's numbers, as the draft text quotes them
    assert math.exp(entropy(reference(Z, 0.5))) == pytest.approx(2.95, abs=0.005)
    assert math.exp(entropy(reference(Z, 2.0))) == pytest.approx(18.7, abs=0.05)
    assert (reference(Z, 2.0, 0.9) > 0).sum() == 20 and (reference(Z, 2.0, 0.9, True) > 0).sum() == 8


def test_deep_link_reproduces_the_view():
    query = {
        "T": "1.35",
        "top_p": "0.8",
        "min_p": "0.05",
        "order": "filters first",
        "samp_view": "Greedy loops",
        "present": "true",
    }
    at = open_page(PAGE, query)
    assert no_exception(at) and at.warning.len == 0
    state, problems = view_of.SPEC.parse(query)
    assert not problems
    view = view_of.figures(state, Options(parts=frozenset({"main", "loops"})))
    assert metrics(at) == {r.label: r.value for r in view.readouts}
    charts = figures(at)
    np.testing.assert_allclose(decode(charts[0]["data"][1]["y"]), decode(view.figures["main"].data[1].y))
    assert len(charts) == 2  # the loops tab is open and drawn
    greedy = view.facts["generations"]["greedy (T = 0)"]
    assert greedy.loop_period == 6 and greedy.loop_start == 0  # the draft's "6-token loop from the first step"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_warn_and_fall_back(default, bad):
    assert_bad_link_falls_back(open_page(PAGE, {"top_p": bad, "top_k": bad}), default, bad, warning="")


def test_bad_logits_temperature_and_choice_give_warnings():
    at = open_page(PAGE, {"T": "-1", "logits": "lens=abc", "order": "backwards"})
    assert no_exception(at)
    text = " ".join(w.value for w in at.warning)
    assert "T=-1" in text and "could not be read" in text and "order=backwards" in text


def test_view_catches_core_errors_outside_the_spec():
    for bad in ({"T": -1.0}, {"top_p": 0.0}, {"top_p": 1.5}, {"top_k": 0}):
        view = view_of.figures(view_of.SPEC.defaults().replace(**bad))
        assert view.notices and view.notices[0][0] == "warning"
        assert "main" in view.figures


def test_field_names_are_unique_across_the_app():
    import importlib
    import pkgutil

    import views

    modules = [importlib.import_module(f"views.{m.name}") for m in pkgutil.iter_modules(views.__path__)]
    specs = [m.SPEC for m in modules if hasattr(m, "SPEC")]  # views.state holds the contract, not a page
    assert {"Sampling", "Loss_and_units", "Schedules"} <= {s.page for s in specs}
    assert check_unique(specs) == []


def test_the_presets_logits_as_text_round_trip():
    preset = VOCAB_PRESETS["keeper"]
    tokens, logits = view_of.parse_logits(view_of.logits_text(preset.tokens, preset.logits))
    assert tokens == list(preset.tokens) and logits == list(preset.logits)
    assert view_of.preset_logits_text("keeper") == view_of.logits_text(preset.tokens, preset.logits)
    with pytest.raises(ValueError, match="at most"):
        view_of.parse_logits(",".join(["1"] * (view_of.MAX_LOGITS + 1)))


# In a fresh interpreter: import the view, draw what the page draws at its defaults (the bars with their temperature
# slider, and the open "Order of the steps" tab), then every preset and a deep link the same way, recording whether
# torch has been imported; then the Greedy loops tab, whose seeded Markov chain is torch's (so the probe sees torch).
_NO_TORCH_PROBE = """
import json, sys
from views import Options, catalog
from views import sampling as v
rows = [["import", "torch" in sys.modules]]
state = v.SPEC.defaults()
view = v.figures(state, Options(parts=catalog.parts_for("Sampling", state)))
rows.append(["defaults " + ",".join(sorted(view.figures)), "torch" in sys.modules])
for name, preset in v.SPEC.presets.items():
    v.figures(state.replace(**preset), Options(parts=frozenset({"main", "order"})))
    rows.append([name, "torch" in sys.modules])
link, problems = v.SPEC.parse({"T": "1.35", "top_p": "0.8", "min_p": "0.05", "top_k": "9", "order": "filters first"})
v.figures(link, Options(parts=frozenset({"main", "order"})))
rows.append(["deep link", "torch" in sys.modules and not problems])
v.figures(state, Options(parts=frozenset({"main", "loops"})))
rows.append(["loops", "torch" in sys.modules])
print(json.dumps(rows))
"""


def test_the_first_figures_do_not_import_torch():
    out = subprocess.run([sys.executable, "-c", _NO_TORCH_PROBE], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    assert rows[1][0] == "defaults main,order"  # the bars and the tab the defaults open
    assert [name for name, loaded in rows[:-1] if loaded] == []
    assert len(rows) == 4 + len(view_of.SPEC.presets) and rows[-1] == ["loops", True]


# ------------------------------------------------------------------------------------------------ the tiny GPT source
def _gpt_reference(prompt: bytes) -> tuple[list[int], np.ndarray, float]:
    """The tiny GPT's 30 likeliest next bytes after ``prompt`` (its last 128 bytes), their probabilities renormalised
    among themselves (a plain softmax of logits_numpy's last row, computed here) and the share they hold of all 256."""
    from core import tiny_gpt

    params, cfg, _ = tiny_gpt.load_checkpoint()
    z = tiny_gpt.logits_numpy(params, cfg, np.frombuffer(prompt[-cfg.ctx :], dtype=np.uint8))[-1].astype(float)
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    top = sorted(range(256), key=lambda b: -p[b])[:30]
    return top, p[top] / p[top].sum(), float(p[top].sum())


def _label(b: int) -> str:
    return "␣" if b == 32 else chr(b) if 33 <= b <= 126 else {10: "\\n", 9: "\\t", 13: "\\r"}.get(b, f"\\x{b:02x}")


def test_the_tiny_gpt_bars_are_a_softmax_of_its_logits():
    at = open_page(PAGE, {"vocab": "tiny GPT"})
    assert no_exception(at) and at.warning.len == 0
    top, p, mass = _gpt_reference(view_of.GPT_PROMPT.encode())
    bars = figures(at)[0]
    assert list(bars["data"][1]["x"]) == [_label(b) for b in top]
    np.testing.assert_allclose(decode(bars["data"][1]["y"]), p, atol=1e-5)  # T = 1, no filters: all 30 sampled
    m = metrics(at)
    assert m["Top token"] == f"{_label(top[0])}: {p[0]:.3f}" and m["Kept tokens"] == "30 of 30"
    assert m["Entropy H"] == f"{entropy(p):.3f} nats"
    info = " ".join(i.value for i in at.info)
    assert f"At T = 1 they hold {100 * mass:.1f}% of its probability." in info  # no other T at the defaults
    assert "so the kept counts are counts among these 30" in info
    assert "Context: the tiny GPT after “…model is only trustworthy near the answers it was trained on”" in " ".join(
        c.value for c in at.caption
    )


def test_the_tiny_gpt_prompt_is_a_phrase_of_its_held_out_text():
    from core import tiny_gpt

    _, val = tiny_gpt.split_bytes(tiny_gpt.corpus_bytes())
    assert view_of.GPT_PROMPT.encode() in bytes(val)


def test_the_tiny_gpt_preset_shows_its_numbers():
    at = open_page(PAGE)
    choose_preset(at, "Sampling", "Tiny GPT: its next byte, top-p 0.9").run()
    assert no_exception(at) and at.warning.len == 0
    top, p, _ = _gpt_reference(view_of.GPT_PROMPT.encode())
    keep = np.concatenate([[0.0], np.cumsum(p)[:-1]]) < 0.9  # the crossing byte stays (p is sorted)
    final = np.where(keep, p, 0.0) / p[keep].sum()
    m = metrics(at)
    assert m["Kept tokens"] == f"{int(keep.sum())} of 30"
    assert m["Top token"] == f"{_label(top[0])}: {final[0]:.3f}"
    assert m["Least likely kept token"] == _label(top[int(keep.sum()) - 1])


def test_bad_prompts_get_a_message_and_a_sane_default():
    empty = view_of.figures(view_of.SPEC.defaults().replace(vocab="tiny GPT", gpt_prompt=""))
    assert empty.notices[0] == ("warning", f"The prompt is empty; using the default phrase “{view_of.GPT_PROMPT}”.")
    assert empty.facts["tokens"] == [_label(b) for b in _gpt_reference(view_of.GPT_PROMPT.encode())[0]]
    long = "x" * 50 + "the attention weights of a causal model sum to one over the keys up to the query, and then " * 2
    view = view_of.figures(view_of.SPEC.defaults().replace(vocab="tiny GPT", gpt_prompt=long))
    assert ("info", f"Your prompt is {len(long)} bytes; the tiny GPT reads at most 128 (its context), so it sees "
            "the last 128.") in view.notices  # fmt: skip
    top, p, _ = _gpt_reference(long.encode())
    assert view.facts["tokens"] == [_label(b) for b in top]
    np.testing.assert_allclose(view.facts["final"], p, atol=1e-6)
    accents = "Le modèle prédit l’octet suivant"
    view = view_of.figures(view_of.SPEC.defaults().replace(vocab="tiny GPT", gpt_prompt=accents))
    n = len(accents.encode("utf-8"))
    assert ("info", f"Your prompt has characters outside ASCII: the model reads their UTF-8 bytes, {n} bytes for "
            f"{len(accents)} characters.") in view.notices  # fmt: skip
    np.testing.assert_allclose(view.facts["final"], _gpt_reference(accents.encode("utf-8"))[1], atol=1e-6)
    assert view.facts["context"] == f"the tiny GPT after “{accents}”"


def test_byte_labels_are_readable():
    assert [view_of.byte_label(b) for b in (32, 65, 10, 9, 13, 7, 0xE2, 127)] == [
        "␣", "A", "\\n", "\\t", "\\r", "\\x07", "\\xe2", "\\x7f",
    ]  # fmt: skip
    assert view_of.readable(b"a\nb c\xe2\x80") == "a\\nb c\\xe2\\x80"
