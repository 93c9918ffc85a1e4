"""The MoE page's view without Streamlit: its numbers against formulas written here (softmax, top k and the slots
filled token by token counted with a plain loop, the Switch loss summed by hand, Mixtral's and DeepSeek-V3's
parameters from their published configurations), not core.moe."""

from __future__ import annotations

import math

import pytest

from tests.moe_reference import balancing_by_hand, routing_by_hand
from views import Options
from views import moe as view_of

SPEC = view_of.SPEC
ALL = Options(parts=frozenset({"main", *view_of.VIEWS}))


def _readouts(state, options: Options = ALL) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state, options).readouts}


@pytest.mark.parametrize(
    ("E", "k", "skew", "cf"), [(8, 2, 1.5, 1.0), (8, 1, 1.5, 1.25), (16, 2, 2.0, 0.5), (4, 1, 0.0, 3.0)]
)
def test_routing_against_a_loop(E: int, k: int, skew: float, cf: float) -> None:
    state = SPEC.defaults().replace(moe_experts=E, moe_top_k=k, moe_skew=skew, moe_cf=f"{cf:g}")
    cap, dropped, lost, aux = routing_by_hand(512, E, k, skew, 0, cf)
    r = _readouts(state)
    assert r["Capacity C"] == f"{cap}"
    assert r["Assignments dropped"] == f"{dropped:,} of {512 * k:,}"
    assert r["Tokens that lost an expert"] == f"{lost} of 512"
    assert r["Balance loss E·Σ f·P"] == f"{aux:.3f}"


def test_default_numbers() -> None:
    r = _readouts(SPEC.defaults())
    assert r["Capacity C"] == "128"  # ceil(1.0 · 512 · 2 / 8)
    assert r["Assignments dropped"] == "245 of 1,024"


def test_the_drag_covers_every_capacity_factor() -> None:
    view = view_of.figures(SPEC.defaults(), Options(parts=frozenset({"main"})))
    drag = view.drags["main"]
    assert drag.field == "moe_cf" and drag.values == view_of.CF_CHOICES
    steps = view.figures["main"].layout.sliders[0].steps
    assert len(steps) == len(view_of.FACTORS)
    assert view.figures["main"].layout.sliders[0].active == view_of.FACTORS.index(1.0)


def test_more_capacity_never_drops_more() -> None:
    dropped = [
        view_of.figures(SPEC.defaults().replace(moe_cf=f"{f:g}"), Options(parts=frozenset({"main"}))).facts["dropped"]
        for f in view_of.FACTORS
    ]
    assert dropped == sorted(dropped, reverse=True)
    assert dropped[-1] == 0  # factor 3 · T k / E = 384 slots, more than any expert receives here


def test_bias_balancing_evens_the_loads() -> None:
    facts = view_of.figures(SPEC.defaults(), ALL).facts
    assert facts["imbalance_end"] < facts["imbalance_none"]
    assert facts["imbalance_end"] < 1.5


@pytest.mark.parametrize(
    ("model", "total_b", "active_b"),
    [("Mixtral-8x7B", 46.7, 12.9), ("DeepSeek-V3", 671.0, 37.6)],  # the published 46.7B/12.9B and 671B/37B
)
def test_total_and_active_parameters(model: str, total_b: float, active_b: float) -> None:
    r = _readouts(SPEC.defaults().replace(moe_model=model))
    assert r[f"{model}: total"] == f"{total_b:.1f}B"
    assert r["Active per token"] == f"{active_b:.1f}B"


def test_mixtral_by_its_config() -> None:
    # Mixtral 8x7B: D 4096, 32 layers, 32 query and 8 KV heads of 128, FFN 14336 in 8 experts (top 2), vocab 32000
    D, L, F, V = 4096, 32, 14_336, 32_000
    attn = 2 * D * 32 * 128 + 2 * D * 8 * 128
    per_layer = attn + 2 * D + D * 8
    total = 2 * V * D + L * (per_layer + 8 * 3 * D * F) + D
    active = 2 * V * D + L * (per_layer + 2 * 3 * D * F) + D
    facts = view_of.figures(SPEC.defaults().replace(moe_model="Mixtral-8x7B"), ALL).facts
    assert (facts["total"], facts["active"]) == (total, active)


def test_all_to_all_per_token() -> None:
    # DeepSeek-V3: D 7168, 8 of 256 experts per token, FP8 out (1 byte) and BF16 back (2), 64 devices of 4 experts.
    # Once per remote device: (P - 1)(1 - C(252, 8) / C(256, 8)) devices; once per remote expert: 8 · 63/64
    state = SPEC.defaults().replace(moe_model="DeepSeek-V3", moe_ep=64)
    view = view_of.figures(state, ALL)
    devices = 63 * (1 - math.comb(252, 8) / math.comb(256, 8))
    r = {x.label: (x.value, x.help) for x in view.readouts}
    assert r["All-to-all per token and MoE layer"][0] == f"{devices * 7168 * 3 / 1024:.1f} KiB" == "158.7 KiB"
    assert (
        f"once per remote expert: {8 * 7168 * 3 * 63 / 64 / 1024:.1f} KiB" in r["All-to-all per token and MoE layer"][1]
    )
    # Mixtral: D 4096, top 2, BF16 both ways, 8 devices: 2 · 4096 · 4 · 7/8 bytes = 28 KiB
    state = SPEC.defaults().replace(moe_model="Mixtral-8x7B", moe_ep=8)
    assert _readouts(state)["All-to-all per token and MoE layer"] == "28.0 KiB"


def test_forward_flops_per_token() -> None:
    # Mixtral: 2 FLOPs per active weight, the input embedding (32000 · 4096) a lookup
    D, L, F, V = 4096, 32, 14_336, 32_000
    # the output head, then per layer attention, the router and 2 experts
    matmul = V * D + L * (2 * D * 32 * 128 + 2 * D * 8 * 128 + D * 8 + 2 * 3 * D * F)
    flops = 2 * (matmul + L * 2 * D + D)  # + the norm gains, 1 multiply each counted as the rest are
    facts = view_of.figures(SPEC.defaults().replace(moe_model="Mixtral-8x7B"), ALL).facts
    assert facts["flops"] == flops
    r = {x.label: x.help for x in view_of.figures(SPEC.defaults().replace(moe_model="Mixtral-8x7B"), ALL).readouts}
    assert r["Active per token"].startswith(f"about {flops / 1e9:.1f} GFLOPs")
    assert f"{flops / 1e9:.1f}" == "25.5"


@pytest.mark.parametrize(("E", "k", "m"), [(16, 2, 4), (8, 2, 2), (8, 1, 8)])
def test_fine_grained_combinations(E: int, k: int, m: int) -> None:
    state = SPEC.defaults().replace(moe_experts=E, moe_top_k=k, moe_split=str(m))
    value = _readouts(state)[f"Split the toy's experts m = {m}"]
    # C(n, r) = n! / (r! (n - r)!)
    comb = lambda n, r: math.factorial(n) // (math.factorial(r) * math.factorial(n - r))  # noqa: E731
    assert value == f"{comb(E, k):,} → {comb(m * E, m * k):,}"
    if (E, k, m) == (16, 2, 4):
        assert value == "120 → 4,426,165,368"  # DeepSeekMoE's example (Dai et al. 2024, §3.1)


def test_experts_per_layer() -> None:
    r = _readouts(SPEC.defaults().replace(moe_model="DeepSeek-V3"))
    assert r["Experts per MoE layer"] == "1 shared (every token) + 8 of 256 routed"
    r = _readouts(SPEC.defaults().replace(moe_model="Mixtral-8x7B"))
    assert r["Experts per MoE layer"] == "2 of 8, no shared expert"


def test_balancing_against_a_loop_with_autograd() -> None:
    """The three imbalance readouts and the probabilities moved, rebuilt by tests/moe_reference.py: the batches from
    the seed sequence, top-k by a loop, the aux loss's offset trained with torch autograd, the bias moved by the sign
    rule."""
    state = SPEC.defaults().replace(moe_tokens=128, moe_steps=30, moe_view=view_of.BALANCING)
    none, aux, bias, shift, off_aux, off_bias = balancing_by_hand(dict(state.items()))
    r = _readouts(state)
    assert r["Max ÷ mean load, no balancing"] == f"{none:.2f}"
    assert r["Max ÷ mean load, auxiliary loss"] == f"{aux:.2f}"
    assert r["Max ÷ mean load, selection bias"] == f"{bias:.2f}"
    assert r["Router probabilities moved by the loss"] == f"{shift:.2f}"
    assert r["Assignments off the router's own top k"] == f"{100 * off_aux:.0f}% / {100 * off_bias:.0f}%"
    assert aux < none and bias < none and shift > 0.05 and off_aux > 0.05 and off_bias > 0.05


def test_predict_first_hides_then_reveals() -> None:
    hidden = view_of.figures(SPEC.defaults().replace(predict_moe=True), ALL)
    assert hidden.facts["predict"] == "hidden"
    assert "Assignments dropped" not in {r.label: r.value for r in hidden.readouts} or all(
        "245" not in r.value for r in hidden.readouts if r.label == "Assignments dropped"
    )


def test_k_above_e_gives_a_note() -> None:
    view = view_of.figures(SPEC.defaults().replace(moe_experts=2, moe_top_k=4), ALL)
    assert any("more than the 2 experts" in text for _, text in view.notices)


@pytest.mark.parametrize("name", list(SPEC.presets))
def test_presets_build(name: str) -> None:
    view = view_of.figures(SPEC.defaults().replace(**SPEC.presets[name]), Options(parts=frozenset({"main"})))
    assert "main" in view.figures
