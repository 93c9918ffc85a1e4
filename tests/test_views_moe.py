"""The MoE page's view without Streamlit: its numbers against formulas written here (softmax, top k and the slots
filled token by token counted with a plain loop, the Switch loss summed by hand, Mixtral's and DeepSeek-V3's
parameters from their published configurations), not core.moe."""

from __future__ import annotations

import math

import numpy as np
import pytest

from views import Options
from views import moe as view_of

SPEC = view_of.SPEC
ALL = Options(parts=frozenset({"main", *view_of.VIEWS}))


def _readouts(state, options: Options = ALL) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state, options).readouts}


def _by_hand(T: int, E: int, k: int, skew: float, seed: int, cf: float) -> tuple[int, int, int, float]:
    """(capacity, dropped assignments, tokens that lost one, E Σ f P) with a plain loop over tokens."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((T, E)) + skew * (E - 1 - np.arange(E)) / (E - 1)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    cap = math.ceil(round(cf * T * k / E, 9))
    used = [0] * E
    dropped, lost, counts = 0, 0, [0] * E
    for t in range(T):
        order = sorted(range(E), key=lambda e: (-p[t, e], e))[:k]
        any_lost = False
        for e in order:
            counts[e] += 1
            if used[e] < cap:
                used[e] += 1
            else:
                dropped += 1
                any_lost = True
        lost += any_lost
    aux = E * sum(counts[e] / (T * k) * p[:, e].mean() for e in range(E))
    return cap, dropped, lost, aux


@pytest.mark.parametrize(
    ("E", "k", "skew", "cf"), [(8, 2, 1.5, 1.0), (8, 1, 1.5, 1.25), (16, 2, 2.0, 0.5), (4, 1, 0.0, 3.0)]
)
def test_routing_against_a_loop(E: int, k: int, skew: float, cf: float) -> None:
    state = SPEC.defaults().replace(moe_experts=E, moe_top_k=k, moe_skew=skew, moe_cf=f"{cf:g}")
    cap, dropped, lost, aux = _by_hand(512, E, k, skew, 0, cf)
    r = _readouts(state)
    assert r["Capacity C"] == f"{cap}"
    assert r["Assignments dropped"] == f"{dropped} of {512 * k}"
    assert r["Tokens that lost an expert"] == f"{lost} of 512"
    assert r["Balance loss E·Σ f·P"] == f"{aux:.3f}"


def test_default_numbers() -> None:
    r = _readouts(SPEC.defaults())
    assert r["Capacity C"] == "128"  # ceil(1.0 · 512 · 2 / 8)
    assert r["Assignments dropped"] == "245 of 1024"


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
    # DeepSeek-V3: D 7168, 8 experts per token, FP8 out (1 byte) and BF16 back (2), 64 devices: 8 · 7168 · 3 · 63/64
    state = SPEC.defaults().replace(moe_model="DeepSeek-V3", moe_ep=64)
    assert _readouts(state)["All-to-all per token and MoE layer"] == f"{8 * 7168 * 3 * 63 / 64 / 1024:.1f} KiB"
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
    assert r["Active per token"].startswith(f"about {flops / 1e9:.0f} GFLOPs")
    assert f"{flops / 1e9:.0f}" == "25"


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


def _loads_by_loop(z: np.ndarray, k: int, offset: np.ndarray) -> list[int]:
    E = z.shape[1]
    loads = [0] * E
    for row in z:
        for e in sorted(range(E), key=lambda j: (-(row[j] + offset[j]), j))[:k]:
            loads[e] += 1
    return loads


def test_balancing_against_a_loop_with_autograd() -> None:
    """The three imbalance readouts and the probabilities moved, rebuilt here: the batches from the seed sequence,
    top-k by a loop, the aux loss's offset trained with torch autograd, the bias moved by the sign rule."""
    torch = pytest.importorskip("torch")
    T, E, k, skew, seed, steps, step, gamma = 128, 8, 2, 1.5, 0, 30, 1.0, 0.01
    state = SPEC.defaults().replace(moe_tokens=T, moe_steps=steps, moe_view=view_of.BALANCING)
    r = _readouts(state)
    rng = np.random.default_rng(seed)
    c, b = torch.zeros(E, dtype=torch.float64), np.zeros(E)
    none, aux, bias, shift = [], [], [], []
    for _ in range(steps):
        g = np.random.default_rng(int(rng.integers(2**63 - 1)))
        z = g.standard_normal((T, E)) + skew * (E - 1 - np.arange(E)) / (E - 1)
        imb = lambda loads: max(loads) / (sum(loads) / E)  # noqa: E731
        none.append(imb(_loads_by_loop(z, k, np.zeros(E))))
        loads_b = _loads_by_loop(1 / (1 + np.exp(-z)), k, b)  # top-k of sigmoid(z) + b
        bias.append(imb(loads_b))
        b = b + gamma * np.sign(np.mean(loads_b) - np.array(loads_b))
        ct = c.clone().requires_grad_(True)
        p = torch.softmax(torch.tensor(z) + ct, dim=1)
        loads_a = _loads_by_loop(p.detach().numpy(), k, np.zeros(E))
        aux.append(imb(loads_a))
        p0 = torch.softmax(torch.tensor(z), dim=1)
        shift.append(0.5 * (p.detach() - p0).abs().sum(dim=1).mean().item())
        loss = E * torch.sum(torch.tensor(loads_a, dtype=torch.float64) / (T * k) * p.mean(dim=0))
        loss.backward()
        c = c - step * ct.grad
    tail = steps // 10
    assert r["Max ÷ mean load, no balancing"] == f"{np.mean(none[-tail:]):.2f}"
    assert r["Max ÷ mean load, auxiliary loss"] == f"{np.mean(aux[-tail:]):.2f}"
    assert r["Max ÷ mean load, selection bias"] == f"{np.mean(bias[-tail:]):.2f}"
    assert r["Router probabilities moved by the loss"] == f"{np.mean(shift[-tail:]):.2f}"


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
