"""The tables of tests/test_view_numbers.py for the mixture-of-experts page: per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts and figure texts
show.

The references are written here, never from core/moe.py or core/model_spec.py:
- the toy router: its seeded logits (Gaussian noise plus a linear skew, redrawn with numpy's generator), softmax,
  each token's top k by a sort in plain Python, the slots C = ceil(cf·T·k/E) filled token by token, and the Switch
  loss E·Σ f·P summed by hand (``routing_by_hand``);
- the balancing runs: the same batches from the same seed sequence, loads counted by a loop, the bias moved by the
  sign rule (Wang et al. 2024), the auxiliary loss's per-expert logit offset trained with torch autograd
  (``balancing_by_hand``);
- the parameters: Mixtral 8x7B's and DeepSeek-V3's published configurations written out term by term; the
  all-to-all as k·D values out and back, scaled by (1 − 1/P); combinations C(n, r) from factorials.
"""

from __future__ import annotations

import math

from tests.moe_reference import balancing_by_hand, routing_by_hand
from tests.page_numbers import Ref
from tests.test_page_numbers import CITE, FORMULA, GIVEN, NAME, _preset
from views import moe as v_moe

MO = v_moe.SPEC
COUNT = "a count of the readout: the toy's T·k assignments or T tokens"
TAIL = "the last tenth of the run's steps (the readouts average them)"
UNIFORM = "the loss's value at uniform routing (Switch: f and P both 1/E)"
SECTION = "a section of DeepSeek-AI 2024 (the technical report)"


def comb(n: int, r: int) -> int:
    """C(n, r) = n! / (r! (n − r)!)."""
    return math.factorial(n) // (math.factorial(r) * math.factorial(n - r))


# The published configurations, written out: (D, layers, heads, kv heads, head dim, vocab, experts, top k, shared,
# expert width, dense layers, dense FFN width)
MIXTRAL = {"D": 4096, "L": 32, "V": 32_000, "E": 8, "k": 2, "F": 14_336}


def mixtral_params() -> tuple[int, int, int]:
    """(total, active, input embedding) of Mixtral 8x7B from its config: attention 2·D·32·128 + 2·D·8·128, two norms,
    a router D·8, experts 3·D·F each, untied embedding and head, a final norm."""
    D, L, V, E, k, F = (MIXTRAL[x] for x in ("D", "L", "V", "E", "k", "F"))
    per_layer = 2 * D * 32 * 128 + 2 * D * 8 * 128 + 2 * D + D * E
    total = 2 * V * D + L * (per_layer + E * 3 * D * F) + D
    active = 2 * V * D + L * (per_layer + k * 3 * D * F) + D
    return total, active, V * D


def deepseek_params() -> tuple[int, int, int]:
    """(total, active, input embedding) of DeepSeek-V3 from config_671B.json, MTP module left out: 61 layers (3 dense
    of FFN width 18,432, 58 MoE of 256 routed + 1 shared experts of width 2,048, 8 routed per token, a router with a
    bias), MLA attention (q rank 1,536, kv rank 512, 128 heads of 128 + 64 rope, v 128), vocab 129,280 untied."""
    D, L, V, dense, H = 7168, 61, 129_280, 3, 128
    rq, rkv, nope, rope, dv = 1536, 512, 128, 64, 128
    attn = D * rq + rq * H * (nope + rope) + D * (rkv + rope) + rkv * H * (nope + dv) + H * dv * D
    norms = 2 * D + rq + rkv
    expert = 3 * D * 2048
    router = D * 256 + 256
    dense_layer = attn + norms + 3 * D * 18_432
    moe_total = attn + norms + 257 * expert + router
    moe_active = attn + norms + 9 * expert + router
    total = 2 * V * D + dense * dense_layer + (L - dense) * moe_total + D
    active = 2 * V * D + dense * dense_layer + (L - dense) * moe_active + D
    return total, active, V * D


MODELS = {"Mixtral-8x7B": mixtral_params, "DeepSeek-V3": deepseek_params}
V3_ACTIVE, V3_EMBEDDING = deepseek_params()[1], deepseek_params()[2]  # the caption quotes them for every model


def routing(p: dict, panel: bool = True) -> list[Ref]:
    T, E, k, skew, seed, cf = (p["moe_tokens"], p["moe_experts"], min(p["moe_top_k"], p["moe_experts"]),
                               p["moe_skew"], p["moe_seed"], float(p["moe_cf"]))  # fmt: skip
    cap, dropped, lost, aux = routing_by_hand(T, E, k, skew, seed, cf)
    refs = [
        Ref(f"Capacity C: {cap}", cap),
        Ref(f"Capacity C help: ⌈{cf:g} · {T} · {k} / {E}⌉ slots per expert", GIVEN, GIVEN, GIVEN, GIVEN),
        Ref(f"Assignments dropped: {dropped:,} of {T * k:,}", dropped, T * k),
        Ref(f"Tokens that lost an expert: {lost:,} of {T:,}", lost, COUNT),
        Ref(f"Balance loss E·Σ f·P: {aux:.3f}", aux),
        Ref("f normalised to sum to 1: 1 at uniform routing", FORMULA, UNIFORM),
    ]  # fmt: skip
    text = (f"capacity factor {cf:g} C = {cap} slots per expert dropped: {dropped:,} of {T * k:,} assignments "
            f"tokens that lost an expert: {lost}")  # fmt: skip
    return refs + ([Ref(text, GIVEN, cap, dropped, T * k, lost)] if panel else [])


def balancing(p: dict) -> list[Ref]:
    none, aux, bias, shift, off_aux, off_bias = balancing_by_hand(p)
    tail = max(1, p["moe_steps"] // 10)
    return [
        Ref(f"Max ÷ mean load, no balancing: {none:.2f}", none),
        Ref(f"Max ÷ mean load, no balancing help: mean of the last {tail} steps", TAIL),
        Ref(f"Max ÷ mean load, auxiliary loss: {aux:.2f}", aux),
        Ref(f"Max ÷ mean load, auxiliary loss help: mean of the last {tail} steps, α·η = {p['moe_aux_step']:g}", TAIL,
            GIVEN),
        Ref(f"Max ÷ mean load, selection bias: {bias:.2f}", bias),
        Ref(f"Max ÷ mean load, selection bias help: mean of the last {tail} steps, γ = {p['moe_gamma']:g}", TAIL,
            GIVEN),
        Ref(f"Router probabilities moved by the loss: {shift:.2f}", shift),
        Ref(f"Router probabilities moved by the loss help: mean of the last {tail} steps", TAIL),
        Ref(f"Assignments off the router's own top k: {100 * off_aux:.0f}% / {100 * off_bias:.0f}%", 100 * off_aux,
            100 * off_bias),
        Ref(f"auxiliary loss / selection bias, mean of the last {tail} steps", TAIL),
    ]  # fmt: skip


def parameters(p: dict) -> list[Ref]:
    name, ep, m = p["moe_model"], p["moe_ep"], int(p["moe_split"])
    total, active, embedding = MODELS[name]()
    E, k = p["moe_experts"], min(p["moe_top_k"], p["moe_experts"])
    if name == "DeepSeek-V3":
        D, topk, out, shared = 7168, 8, 1, "1 shared (every token) + 8 of 256 routed"
        layer = [Ref(f"Experts per MoE layer: {shared}", "DeepSeek-V3's config_671B.json", NAME, NAME),
                 Ref("experts of width 2,048 (SwiGLU)", "moe_inter_dim in config_671B.json")]  # fmt: skip
    else:
        D, topk, out = 4096, 2, 2
        layer = [Ref("Experts per MoE layer: 2 of 8, no shared expert", "Mixtral's config.json", NAME),
                 Ref("experts of width 14,336 (SwiGLU)", "intermediate_size in Mixtral's config.json")]  # fmt: skip
    n_exp = 256 if name == "DeepSeek-V3" else 8
    if n_exp % ep:
        ep = max(d for d in range(1, min(ep, n_exp) + 1) if n_exp % d == 0)
    a2a_each = topk * D * (out + 2) * (1 - 1 / ep)
    # a token sent once to each remote device holding one of its experts: (P − 1)(1 − C(E − E/P, k)/C(E, k)) devices
    a2a = (ep - 1) * (1 - comb(n_exp - n_exp // ep, topk) / comb(n_exp, topk)) * D * (out + 2)
    flops = 2 * (active - embedding)
    mixtral = [NAME] if name.startswith("Mixtral") else []
    precision = (
        "FP8 out, BF16 back (DeepSeek-V3 §3.3.3; DeepEP)" if name == "DeepSeek-V3" else "BF16 both ways (assumed)"
    )
    return [
        Ref("Mistral AI's announcement gives Mixtral 46.7B / 12.9B (its paper, Jiang", CITE, CITE),
        Ref("rounds to 47B / 13B); DeepSeek-AI 2024 gives 671B / 37B", CITE, CITE, CITE, CITE),
        Ref("where the count here gives 37.6B with the 0.9B embedding table included", V3_ACTIVE, V3_EMBEDDING),
        Ref(f"{name}: total: {total / 1e9:.1f}B", *mixtral, total),
        Ref(f"{name}: total help: {total * 2 / 1e9:,.0f} GB of weights in bf16, {total / 1e9:,.0f} GB in FP8",
            *mixtral, total * 2 / 1e9, total / 1e9),
        Ref(f"Active per token: {active / 1e9:.1f}B", active),
        Ref(f"Active per token help: about {flops / 1e9:.0f} GFLOPs per token forward: 2 per active weight", flops,
            "a multiply and an add per weight"),
        *layer,
        Ref(f"All-to-all per token and MoE layer: {a2a / 1024:.1f} KiB", a2a / 1024),
        Ref(f"forward, dispatch and combine, {precision}, {ep} devices", *([SECTION] if out == 1 else []), GIVEN),
        Ref(f"once per remote expert: {a2a_each / 1024:.1f} KiB", a2a_each / 1024),
        Ref(f"Split the toy's experts m = {m}: {comb(E, k):,} → {comb(m * E, m * k):,}", GIVEN, comb(E, k),
            comb(m * E, m * k)),
        Ref(f"Split the toy's experts m = {m} help: expert combinations per token, C({E}, {k}) → C({m * E}, {m * k})",
            GIVEN, GIVEN, GIVEN, m * E, m * k),
        *([Ref(f"the router grows from D·{E} to D·{m * E} weights", GIVEN, m * E)] if m > 1 else []),
    ]  # fmt: skip


P0 = MO.defaults()
_SWITCH = _preset(MO, "Switch: top-1, capacity factor 1.25")
_BIAS = _preset(MO, "A3.3: DeepSeek-V3's bias balancing")
_SPLIT = _preset(MO, "A3.3: DeepSeekMoE's fine-grained split, 16 experts top-2 cut in 4")
_MIXTRAL = _preset(MO, "A3.5: Mixtral 8x7B, total against active")
_V3 = _preset(MO, "A3.3: DeepSeek-V3, 671B resident, 37B active")


def _new(refs: list[Ref], shown: list[Ref]) -> list[Ref]:
    """The refs whose passage the defaults do not already show (a preset's view lists only new texts)."""
    return [r for r in refs if r.snippet not in {t.snippet for t in shown}]


_ROUTING0 = routing(P0)
MOE: dict[str, list[Ref]] = {
    "defaults": _ROUTING0,
    "tab Balancing": balancing(P0),
    "tab Parameters": parameters(P0),
    "preset Switch: top-1, capacity factor 1.25": _new(routing(_SWITCH), _ROUTING0),
    "preset A3.3: DeepSeek-V3's bias balancing": [*_new(routing(_BIAS, panel=False), _ROUTING0), *balancing(_BIAS)],
    "preset A3.3: DeepSeekMoE's fine-grained split, 16 experts top-2 cut in 4": [
        *_new(routing(_SPLIT, panel=False), _ROUTING0),
        *parameters(_SPLIT),
    ],
    "preset A3.5: Mixtral 8x7B, total against active": parameters(_MIXTRAL),
    "preset A3.3: DeepSeek-V3, 671B resident, 37B active": parameters(_V3),
}

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/18_MoE.py": MOE}
