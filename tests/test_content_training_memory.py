"""The training-memory page's numbers and texts against plain arithmetic from the model shapes and the seeds:
parameters by component (002 A10-01/02), the recipe's bytes itemised (002 A10-09), A10-03's activation element
count, a custom shape carried by a link, and every interview-facing sentence with its source."""

import re

import pytest

from core.model_spec import CATALOGUE, ModelSpec
from tests.apptest import metrics, no_exception, open_page
from views import training_memory as view_of

PAGE = "pages/7_Training_memory.py"


def _readouts(**changes):
    view = view_of.figures(view_of.SPEC.defaults().replace(**changes))
    return {r.label: r for r in view.readouts}, view


def test_llama3_70b_parameters_by_component():
    V, D, L, N, K, H, F = 128256, 8192, 80, 64, 8, 128, 28672  # Meta-Llama-3-70B config
    emb = 2 * V * D  # untied: input and output
    attn = L * (2 * D * N * H + 2 * D * K * H)
    ffn = L * 3 * D * F
    norms = L * 2 * D + D
    assert emb + attn + ffn + norms == 70_553_706_496  # 70.554B (002 A10-02)
    r, _ = _readouts(mem_model="Llama-3-70B")
    assert r["Parameters: embeddings"].value == "2.101B" and f"{V * D:,}" in r["Parameters: embeddings"].help
    assert r["Parameters: attention"].value == "12.08B" and f"{attn:,}" in r["Parameters: attention"].help
    assert r["Parameters: FFN"].value == "56.37B" and f"{ffn:,}" in r["Parameters: FFN"].help
    assert r["Parameters: norms"].value == "1.319M" and f"{norms:,}" in r["Parameters: norms"].help
    assert r["Parameters: total"].value == "70.55B" and "70,553,706,496" in r["Parameters: total"].help


def test_mixtral_total_vs_active():
    V, D, L, N, K, H, F, E, k = 32000, 4096, 32, 32, 8, 128, 14336, 8, 2  # Mixtral-8x7B config
    rest = 2 * V * D + L * (2 * D * N * H + 2 * D * K * H) + L * D * E + L * 2 * D + D  # emb, attn, router, norms
    total = rest + L * E * 3 * D * F
    active = rest + L * k * 3 * D * F
    assert (total, active) == (46_702_792_704, 12_879_925_248)  # 46.70B / 12.88B (Jiang et al. 2024)
    r, _ = _readouts(mem_model="Mixtral-8x7B")
    assert r["Parameters: total / active"].value == "46.70B / 12.88B"
    assert (
        f"{total:,}" in r["Parameters: total / active"].help and f"{active:,}" in r["Parameters: total / active"].help
    )
    assert r["Parameters: FFN"].value == f"{L * E * 3 * D * F / 1e9:.2f}B" == "45.10B"
    assert r["Parameters: norms and router"].value == "1.315M"  # 32 x 4096 x 8 router + 266,240 gains


@pytest.mark.parametrize(
    ("recipe", "value", "text"),
    [
        ("standard", "2+2+4+4+4 = 16", "weights 2 + gradients 2 + master weights 4 + Adam m 4 + Adam v 4 = 16"),
        ("adam8bit", "2+2+4+1+1 = 10", "weights 2 + gradients 2 + master weights 4 + Adam m 1 + Adam v 1 = 10"),
        ("pure_bf16", "2+2+0+2+2 = 8", "weights 2 + gradients 2 + master weights 0 + Adam m 2 + Adam v 2 = 8"),
    ],
)
def test_recipe_bytes_itemised(recipe, value, text):
    r, _ = _readouts(recipe=recipe)  # 002 A10-09: 16 standard, 10 with 8-bit Adam, 8 in pure bf16
    assert r["Bytes/param (recipe)"].value == value
    assert r["Bytes/param (recipe)"].help.startswith(text + " bytes/param")


def test_activation_elements_beside_the_bytes():
    # 002 A10-03 for Llama-3-70B at S = 4096, B = 1: 80 (14 x 4096 x 8192 + 64 x 4096^2), flash: S^2 -> S
    plain = 80 * (14 * 1 * 4096 * 8192 + 1 * 64 * 4096**2)
    flash = 80 * (14 * 1 * 4096 * 8192 + 1 * 64 * 4096)
    assert (plain, flash) == (123_480_309_760, 37_601_935_360)
    r, _ = _readouts(mem_model="Llama-3-70B", seq=4096, mbs=1)
    labels = list(r)
    assert labels.index("Activation elements (002 A10-03)") == labels.index("Activations per GPU") + 1
    assert r["Activation elements (002 A10-03)"].value == "1.235×10¹¹"
    assert "3.760×10¹⁰ with it" in r["Activation elements (002 A10-03)"].help
    assert "S > 14D/N = 1,792" in r["Activation elements (002 A10-03)"].help  # 14 x 8192 / 64
    r, _ = _readouts(mem_model="Llama-3-70B", seq=4096, mbs=1, flash=True)
    assert r["Activation elements (002 A10-03)"].value == "3.760×10¹⁰"


def test_custom_shape_fields_round_trip_through_a_link():
    shape = {"mem_layers": "40", "mem_d": "5120", "mem_heads": "40", "mem_kv": "4", "mem_ff": "13824"}
    query = {"mem_model": "custom", **shape, "mem_vocab": "32000", "mem_gpu": "H200"}
    state, problems = view_of.SPEC.parse(query)
    assert problems == [] and view_of.SPEC.query(state) == query
    ref = ModelSpec("ref", layers=40, d_model=5120, n_heads=40, n_kv_heads=4, d_ff=13824, vocab=32000)
    n = 32000 * 5120 + 40 * (2 * 5120 * 40 * 128 + 2 * 5120 * 4 * 128 + 3 * 5120 * 13824 + 2 * 5120) + 5120
    at = open_page(PAGE, query)
    assert no_exception(at) and at.warning.len == 0
    assert metrics(at)["Parameters: total"] == f"{n / 1e9:.2f}B" == "10.96B"  # tied (the custom default): V D once
    assert view_of.figures(state).facts["n_total"] == n and ref.d_model // ref.n_heads == 128
    assert at.number_input(key="mem_layers").value == 40  # the shape's fields are drawn for "custom"


def test_custom_shape_fields_hidden_for_a_catalogued_model(default):
    assert not [w for w in default.number_input if w.key == "mem_layers"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"mem_heads": "3"}, "d_model = 2048 is not a multiple of the 3 query heads"),
        ({"mem_kv": "5"}, "5 KV heads do not divide the 32 query heads"),
    ],
)
def test_a_bad_custom_shape_falls_back_to_the_starting_shape(query, message):
    state, _ = view_of.SPEC.parse({"mem_model": "custom", **query})
    view = view_of.figures(state)
    assert any(message in text and "Showing the starting shape" in text for _, text in view.notices)
    assert view.facts["n_total"] == 1_235_814_400  # Llama-3.2-1B's shape, tied (Meta 2024: 1.24B)
    # a value outside a field's range is refused by the spec: a message and the default
    state, problems = view_of.SPEC.parse({"mem_model": "custom", "mem_layers": "-5"})
    assert state.mem_layers == CATALOGUE["custom"].layers and "mem_layers" in problems[0]


_CITE = re.compile(r"\((?:[^()]*(?:0\d\d [A§]|et al\. \d{4}))[^()]*\)")


def test_interview_answer_and_mistakes_cite_their_sources():
    at = open_page(PAGE)
    assert no_exception(at)
    texts = [m.value for m in at.markdown]
    answer = [t for t in texts if t.startswith(("**In one sentence.**", "**One number.**", "**One trade-off.**"))]
    assert len(answer) == 3 and all(_CITE.search(t) for t in answer), answer
    mistakes = next(t for t in texts if t.startswith("- Counting only the weights"))
    items = mistakes.split("\n- ")
    assert len(items) == 4 and all(_CITE.search(i) for i in items), items
    joined = " ".join(" ".join(texts).split())
    assert "112 GB of states for 7B (001 §3.2)" in joined and "38.5 GB (002 A10-10; Rajbhandari et al. 2020)" in joined
    assert 16 * 7e9 == 112e9 and (4 + 12 / 8) * 7e9 == 38.5e9
