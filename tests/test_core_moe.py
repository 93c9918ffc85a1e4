"""core.moe: routing, capacity and drops against plain loops that walk the tokens in order; the Switch and Hugging
Face balance losses against loops and their values at uniform routing; DeepSeek-V3's selection-only bias, its update
and sequence-wise loss against the report's formulas written out here; parameter counts and all-to-all volumes
against hand arithmetic and brute-force enumeration."""

import itertools
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import special

from core import moe
from core.model_spec import DEEPSEEK_V3, param_breakdown

ROOT = Path(__file__).resolve().parents[1]


def _random_probs(rng: np.random.Generator, T: int, E: int) -> np.ndarray:
    return rng.dirichlet(np.ones(E), size=T)  # (T, E)


def _random_selection(rng: np.random.Generator, T: int, E: int, k: int) -> np.ndarray:
    return np.array([rng.choice(E, size=k, replace=False) for _ in range(T)])  # (T, k) distinct per row


def _top_k_loop(row, k: int) -> list[int]:
    """The k largest entries of a row, ties to the lower index (plain Python)."""
    return sorted(range(len(row)), key=lambda e: (-row[e], e))[:k]


# ------------------------------------------------------------------------------------------------- balance losses


@pytest.mark.parametrize("k", [1, 2, 3])
def test_aux_loss_at_uniform_routing_is_one_switch_and_k_hf(k):
    E, T = 6, 12
    probs = np.full((T, E), 1 / E)
    # every expert gets the same number of assignments: token t takes experts t, t+1, ..., t+k-1 (mod E)
    idx = (np.arange(T)[:, None] + np.arange(k)) % E  # (T, k)
    assert moe.switch_aux_loss(probs, idx, E) == pytest.approx(1.0, abs=1e-12)
    assert moe.switch_aux_loss(probs, idx, form="hf_topk") == pytest.approx(float(k), abs=1e-12)


@pytest.mark.parametrize(("T", "E", "k"), [(9, 4, 1), (30, 8, 3)])
def test_aux_loss_against_plain_loops(T, E, k):
    rng = np.random.default_rng(T + E + k)
    probs, idx = _random_probs(rng, T, E), _random_selection(rng, T, E, k)
    P = [sum(probs[t][e] for t in range(T)) / T for e in range(E)]
    count = [sum(1 for t in range(T) for j in range(k) if idx[t][j] == e) for e in range(E)]
    switch = E * sum(count[e] / (T * k) * P[e] for e in range(E))  # Fedus et al. eq. 4-6, f over assignments
    assert moe.switch_aux_loss(probs, idx) == pytest.approx(switch, rel=1e-12)
    # Hugging Face's load_balancing_loss_func written out: mean over tokens of the (T, k, E) one-hot, times the
    # mean probabilities, summed over both remaining axes, times E
    one_hot = np.zeros((T, k, E))
    for t in range(T):
        for j in range(k):
            one_hot[t, j, idx[t][j]] = 1.0
    hf = E * float(np.sum(one_hot.mean(axis=0) * np.asarray(P)[None, :]))
    assert moe.switch_aux_loss(probs, idx, form="hf_topk") == pytest.approx(hf, rel=1e-12)
    assert hf == pytest.approx(k * switch, rel=1e-12)


def test_aux_loss_can_fall_below_one_when_f_is_not_p():
    # 3 tokens, 2 experts: two near-ties sent to expert 0, one clear choice for expert 1
    probs = [[Fraction(51, 100), Fraction(49, 100)]] * 2 + [[Fraction(1, 100), Fraction(99, 100)]]
    f = [Fraction(2, 3), Fraction(1, 3)]
    P = [sum(r[e] for r in probs) / 3 for e in range(2)]
    exact = 2 * (f[0] * P[0] + f[1] * P[1])  # = 8.06 / 9
    assert exact == Fraction(806, 900) and exact < 1
    assert moe.switch_aux_loss(np.array(probs, dtype=float), [0, 0, 1]) == pytest.approx(float(exact), rel=1e-12)


# ------------------------------------------------------------------------------------------------ routing, capacity


def test_expert_capacity_by_hand():
    assert moe.expert_capacity(256, 8, 2, 1.25) == 80  # 1.25 · 256 · 2 / 8 = 80 exactly
    assert moe.expert_capacity(10, 4, 1, 1.25) == 4  # ceil(3.125)
    assert moe.expert_capacity(100, 11, 1, 1.1) == 10  # 1.1 · 100 / 11 = 10 (float gives 10.000000000000002)
    assert moe.expert_capacity(40, 5, 2, 0.8) == 13  # ceil(12.8)
    assert moe.expert_capacity(7, 3, 2, None) == 7  # no limit: T slots


def _route_loop(probs, k: int, cap: int, priority: str):
    """Plain loop: each expert's slots fill in the priority order; an assignment past the capacity is dropped."""
    T = len(probs)
    chosen = [_top_k_loop(probs[t], k) for t in range(T)]
    if priority == "token":
        order = [(t, j) for t in range(T) for j in range(k)]
    else:
        order = [(t, j) for j in range(k) for t in range(T)]
    used: dict[int, int] = {}
    kept = [[False] * k for _ in range(T)]
    for t, j in order:
        e = chosen[t][j]
        kept[t][j] = used.get(e, 0) < cap
        used[e] = used.get(e, 0) + 1
    return chosen, kept


@pytest.mark.parametrize("priority", ["token", "choice"])
@pytest.mark.parametrize(("T", "E", "k", "cf"), [(40, 5, 2, "0.8"), (64, 8, 1, "1.0"), (33, 6, 3, "1.25")])
def test_capacity_and_drops_against_a_loop_in_token_order(priority, T, E, k, cf):
    logits = 1.5 * np.random.default_rng(T * E).standard_normal((T, E)) + np.linspace(1.0, 0.0, E)  # skewed
    r = moe.route_tokens(logits, k, float(cf), priority=priority)
    np.testing.assert_allclose(r.probs, special.softmax(logits, axis=1), rtol=1e-12)
    cap = math.ceil(Fraction(cf) * T * k / E)
    chosen, kept = _route_loop(r.probs.tolist(), k, cap, priority)
    assert r.capacity == cap
    np.testing.assert_array_equal(r.experts, chosen)
    np.testing.assert_array_equal(r.kept, kept)
    assert r.dropped == sum(not x for row in kept for x in row) > 0
    assert r.dropped_tokens == sum(1 for row in kept if not all(row))
    load = [sum(1 for row in chosen for e in row if e == x) for x in range(E)]
    np.testing.assert_array_equal(r.load, load)
    np.testing.assert_array_equal(r.processed, [min(c, cap) for c in load])


def test_the_two_priorities_differ_for_top2():
    logits = 1.5 * np.random.default_rng(200).standard_normal((40, 5)) + np.linspace(1.0, 0.0, 5)
    a = moe.route_tokens(logits, 2, 0.8, priority="token").kept
    b = moe.route_tokens(logits, 2, 0.8, priority="choice").kept
    assert not np.array_equal(a, b)
    # "choice" keeps every first choice that fits before any second choice: it never drops more first choices
    assert (~b[:, 0]).sum() <= (~a[:, 0]).sum()


@pytest.mark.parametrize("k", [1, 2, 4])
def test_gates_raw_and_renormalised(k):
    logits = np.random.default_rng(k).standard_normal((20, 8))
    p = special.softmax(logits, axis=1)
    raw = moe.route_tokens(logits, k, None)
    ren = moe.route_tokens(logits, k, None, renormalize=True)
    for t in range(20):
        sel = _top_k_loop(p[t], k)
        np.testing.assert_allclose(raw.gates[t], [p[t][e] for e in sel], rtol=1e-12)
        np.testing.assert_allclose(ren.gates[t], [p[t][e] / sum(p[t][j] for j in sel) for e in sel], rtol=1e-12)
    np.testing.assert_allclose(ren.gates.sum(axis=1), 1.0, rtol=1e-12)
    # Mixtral: softmax over the top-k logits is the same as renormalising the full softmax
    top_logits = np.take_along_axis(logits, ren.experts, axis=1)
    np.testing.assert_allclose(ren.gates, special.softmax(top_logits, axis=1), rtol=1e-12)
    if k == 1:
        np.testing.assert_allclose(raw.gates[:, 0], p.max(axis=1), rtol=1e-12)  # Switch: the raw probability


def test_kept_gates_are_zero_where_dropped():
    r = moe.route_tokens(moe.toy_router_logits(64, 8, skew=3.0), 2, 1.0, renormalize=True)
    assert r.dropped > 0
    np.testing.assert_array_equal(r.kept_gates[~r.kept], 0.0)
    np.testing.assert_array_equal(r.kept_gates[r.kept], r.gates[r.kept])


# ------------------------------------------------------------------------------------------- DeepSeek-V3 balancing


def test_bias_changes_the_selection_but_gates_come_from_unbiased_affinities():
    s = np.array([[0.9, 0.8, 0.3, 0.2]])
    plain = moe.bias_balanced_routing(s, np.zeros(4), 2, inputs="affinities")
    assert plain.experts.tolist() == [[0, 1]]
    np.testing.assert_allclose(plain.gates, [[0.9 / 1.7, 0.8 / 1.7]], rtol=1e-12)
    # s + b = (0.9, 0.8, 1.0, 0.2): expert 2 now selected, but weighted by its own 0.3, not by 1.0
    biased = moe.bias_balanced_routing(s, [0.0, 0.0, 0.7, 0.0], 2, inputs="affinities")
    assert biased.experts.tolist() == [[2, 0]]
    np.testing.assert_allclose(biased.gates, [[0.3 / 1.2, 0.9 / 1.2]], rtol=1e-12)
    scaled = moe.bias_balanced_routing(s, [0.0, 0.0, 0.7, 0.0], 2, inputs="affinities", route_scale=2.5)
    np.testing.assert_allclose(scaled.gates, [[2.5 * 0.25, 2.5 * 0.75]], rtol=1e-12)


@pytest.mark.parametrize(("E", "k"), [(8, 2), (32, 8)])
def test_bias_routing_against_a_loop(E, k):
    rng = np.random.default_rng(E)
    logits = rng.standard_normal((25, E))
    bias = 0.2 * rng.standard_normal(E)
    r = moe.bias_balanced_routing(logits, bias, k)
    s = special.expit(logits)
    np.testing.assert_allclose(r.affinities, s, rtol=1e-12)
    for t in range(25):
        sel = _top_k_loop([s[t][i] + bias[i] for i in range(E)], k)
        assert r.experts[t].tolist() == sel
        np.testing.assert_allclose(r.gates[t], [s[t][i] / sum(s[t][j] for j in sel) for i in sel], rtol=1e-12)
    np.testing.assert_allclose(r.gates.sum(axis=1), 1.0, rtol=1e-12)


def test_group_limited_routing_against_a_loop():
    E, G, top_g, k = 16, 4, 2, 4
    rng = np.random.default_rng(7)
    logits, bias = rng.standard_normal((30, E)), 0.1 * rng.standard_normal(E)
    r = moe.bias_balanced_routing(logits, bias, k, n_groups=G, top_groups=top_g)
    s = special.expit(logits)
    for t in range(30):
        b = [s[t][i] + bias[i] for i in range(E)]
        score = [sum(sorted(b[g * 4 : g * 4 + 4], reverse=True)[:2]) for g in range(G)]
        groups = _top_k_loop(score, top_g)
        allowed = [i for g in groups for i in range(g * 4, g * 4 + 4)]
        sel = sorted(allowed, key=lambda i: (-b[i], i))[:k]
        assert r.experts[t].tolist() == sel
        assert len({i // 4 for i in sel}) <= top_g


def test_update_bias_by_hand():
    new = moe.update_bias([0.0, 0.1, -0.2, 0.0], [10, 2, 6, 6], gamma=0.001)  # mean load 6
    np.testing.assert_allclose(new, [-0.001, 0.101, -0.2, 0.0], rtol=0, atol=1e-15)
    assert moe.load_imbalance([4, 0, 0, 0]) == 4.0 and moe.load_imbalance([3, 3]) == 1.0


@pytest.mark.parametrize(("E", "k", "skew"), [(16, 2, 2.0), (8, 1, 3.0)])
def test_bias_update_reduces_the_load_imbalance(E, k, skew):
    tr = moe.balance_trajectory(n_steps=80, n_tokens=512, n_experts=E, top_k=k, skew=skew, gamma=0.01, seed=1)
    assert tr.imbalance.shape == (80,) and tr.bias.shape == (81, E)
    start, end = tr.imbalance[:3].mean(), tr.imbalance[-20:].mean()
    assert start > 2 and end < 0.6 * start and end < 1.5
    assert tr.imbalance_without_bias[-20:].mean() > 2  # the router itself never changed
    assert tr.bias[-1][0] < 0 < tr.bias[-1][-1]  # the favoured expert pushed down, the neglected one up
    assert tr.aux_loss[-20:].mean() < tr.aux_loss_without_bias[-20:].mean()
    # the bias update is a check on the loads computed here: max / mean of the recorded selection
    r0 = moe.bias_balanced_routing(moe.toy_router_logits(512, E, skew, seed=3), tr.bias[-1], k)
    loads = [sum(1 for row in r0.experts for e in row if e == x) for x in range(E)]
    assert moe.load_imbalance(r0.load) == pytest.approx(max(loads) / (sum(loads) / E))


@pytest.mark.parametrize(("T", "E", "k", "seed"), [(64, 8, 2, 0), (40, 5, 1, 3)])
def test_aux_loss_gradient_against_autograd(T, E, k, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    z, c = rng.standard_normal((T, E)), 0.3 * rng.standard_normal(E)
    loss, grad = moe.aux_loss_gradient(z, c, k)
    # reference: torch autograd through softmax, with f from the top-k detached (it comes from an argmax)
    ct = torch.tensor(c, dtype=torch.float64, requires_grad=True)
    p = torch.softmax(torch.tensor(z) + ct, dim=1)  # (T, E)
    top = torch.topk(p.detach(), k, dim=1).indices  # (T, k)
    f = torch.zeros(E, dtype=torch.float64).index_add_(0, top.reshape(-1), torch.ones(T * k, dtype=torch.float64))
    ref = E * torch.sum(f / (T * k) * p.mean(dim=0))
    ref.backward()
    assert loss == pytest.approx(ref.item(), rel=1e-12)
    np.testing.assert_allclose(grad, ct.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_aux_loss_trajectory_balances_on_the_bias_runs_batches():
    kw = {"n_steps": 60, "n_tokens": 256, "n_experts": 8, "top_k": 2, "skew": 2.0, "seed": 4}
    ax = moe.aux_loss_trajectory(step_size=1.0, **kw)
    tr = moe.balance_trajectory(gamma=0.01, **kw)
    # step 1 has no offset and no bias: the same batch gives the same loads
    assert ax.imbalance[0] == tr.imbalance_without_bias[0] == tr.imbalance[0]
    assert ax.imbalance[-10:].mean() < 0.7 * tr.imbalance_without_bias[-10:].mean()
    assert ax.offset[-1][0] < 0 < ax.offset[-1][-1]  # the favoured expert's logit pushed down
    # prob_shift of the last step by hand: regenerate its batch from the seed sequence, TV = 1/2 sum |p - p0|
    rng = np.random.default_rng(4)
    seeds = [int(rng.integers(2**63 - 1)) for _ in range(60)]
    z = moe.toy_router_logits(256, 8, 2.0, seed=seeds[-1])
    c = ax.offset[-2]
    total = 0.0
    for row in z:
        e0 = [math.exp(v) for v in row]
        e1 = [math.exp(v + o) for v, o in zip(row, c, strict=True)]
        total += 0.5 * sum(abs(a / sum(e1) - b / sum(e0)) for a, b in zip(e1, e0, strict=True))
    assert ax.prob_shift[-1] == pytest.approx(total / 256, rel=1e-10)
    assert ax.prob_shift[0] == 0.0
    # no step, no change
    assert np.all(moe.aux_loss_trajectory(step_size=0.0, **kw).offset == 0)


def test_sequence_balance_loss_at_uniform_and_against_the_formulas():
    T, E, k = 8, 4, 2
    s = np.full((T, E), 0.3)
    idx = (np.arange(T)[:, None] + np.arange(k)) % E
    assert moe.sequence_balance_loss(s, idx) == pytest.approx(1e-4, rel=1e-12)
    rng = np.random.default_rng(3)
    for B, T, E, k, alpha in [(1, 12, 6, 2, 1e-4), (3, 10, 8, 3, 0.5)]:
        s = special.expit(rng.standard_normal((B, T, E)))
        idx = np.array([_random_selection(rng, T, E, k) for _ in range(B)])
        per_seq = []
        for b in range(B):
            # eq. 18-20: f_i = E/(k T) sum_t 1[i selected]; s' = s / sum_j s_j; P_i = mean_t s'
            f = [E / (k * T) * sum(1 for t in range(T) if i in idx[b][t]) for i in range(E)]
            P = [sum(s[b][t][i] / sum(s[b][t]) for t in range(T)) / T for i in range(E)]
            per_seq.append(alpha * sum(f[i] * P[i] for i in range(E)))  # eq. 17
        got = moe.sequence_balance_loss(s if B > 1 else s[0], idx if B > 1 else idx[0], alpha)
        assert got == pytest.approx(sum(per_seq) / B, rel=1e-12)


# -------------------------------------------------------------------------------------- parameters and all-to-all


def test_deepseek_v3_layer_parameters_by_hand():
    L = moe.DEEPSEEK_V3_LAYER
    p = moe.moe_layer_params(L["d_model"], L["d_expert"], L["n_routed"], L["top_k"], L["n_shared"], router_bias=True)
    assert p.per_expert == 44_040_192  # 3 · 7168 · 2048
    assert p.total == 11_320_164_608  # 257 · 44,040,192 + 7168 · 256 + 256
    assert p.active == 398_196_992  # 9 · 44,040,192 + 7168 · 256 + 256
    # 58 MoE layers (61 minus 3 dense): the MoE part of core.model_spec's count
    b = param_breakdown(DEEPSEEK_V3)
    assert 58 * (p.routed + p.shared) == 656_463_101_952 == b.ffn - 3 * 3 * 7168 * 18432
    assert 58 * p.router == b.router == 106_445_312


def test_mixtral_layer_parameters_by_hand():
    p = moe.moe_layer_params(4096, 14336, 8, 2)  # Mixtral-8x7B: 8 experts, top-2, no shared expert
    assert p.per_expert == 176_160_768 and p.total == 1_409_318_912 and p.active == 352_354_304
    assert p.active_share == pytest.approx(352_354_304 / 1_409_318_912)
    plain = moe.moe_layer_params(4096, 14336, 8, 2, gated=False)
    assert plain.per_expert == 2 * 4096 * 14336


def test_fine_grained_split_keeps_parameters_and_grows_combinations():
    split = moe.fine_grained_split(16, 2, 2048, 4)
    assert (split.n_experts, split.top_k, split.d_expert) == (64, 8, 512)
    assert split.combinations_before == 120 and split.combinations_after == 4_426_165_368  # DeepSeekMoE §3.1
    a, b = moe.moe_layer_params(1024, 2048, 16, 2), moe.moe_layer_params(1024, 512, 64, 8)
    assert (a.total - a.router, a.active - a.router) == (b.total - b.router, b.active - b.router)


def test_all_to_all_simple_model_by_hand():
    assert moe.all_to_all_bytes_per_token(7168, 8) == 229_376  # 2 · 8 · 7168 · 2 bytes (BF16 both ways)
    assert moe.all_to_all_bytes_per_token(7168, 8, 1, combine_bytes_per_value=2) == 172_032  # FP8 out, BF16 back
    assert moe.all_to_all_bytes_per_token(4096, 2, 2, ep_size=8) == pytest.approx(2 * 2 * 4096 * 2 * 7 / 8)


@pytest.mark.parametrize(("E", "P", "k"), [(8, 4, 2), (12, 3, 4)])
def test_all_to_all_expected_remote_copies_by_enumeration(E, P, k):
    # the token lives on device 0; experts e live on device e // (E/P); all C(E, k) selections equally likely
    per = E // P
    remote, devices, n = 0, 0, 0
    for sel in itertools.combinations(range(E), k):
        remote += sum(1 for e in sel if e // per != 0)
        devices += len({e // per for e in sel} - {0})
        n += 1
    D, b = 16, 2
    got = moe.all_to_all_bytes_per_token(D, k, b, ep_size=P)
    assert got == pytest.approx(remote / n * 2 * D * b, rel=1e-12)
    got_dedup = moe.all_to_all_bytes_per_token(D, k, b, ep_size=P, n_experts=E, dedup=True)
    assert got_dedup == pytest.approx(devices / n * 2 * D * b, rel=1e-12)
    assert got_dedup < got


# -------------------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call",
    [
        lambda: moe.route_tokens(np.zeros((4, 4)), top_k=5),
        lambda: moe.route_tokens(np.zeros((4, 4)), 1, 0.0),
        lambda: moe.route_tokens([[0.0, float("nan")]], 1),
        lambda: moe.route_tokens(np.zeros((4, 4)), 1, priority="score"),
        lambda: moe.switch_aux_loss(np.full((2, 2), 0.5), [[0, 0], [1, 0]]),  # expert twice in a row
        lambda: moe.switch_aux_loss(np.full((2, 2), 0.5), [0, 2]),  # out of range
        lambda: moe.switch_aux_loss(np.full((2, 2), 0.5), [0, 1], n_experts=3),
        lambda: moe.switch_aux_loss(np.full((2, 2), 0.5), [0, 1], form="mixtral"),
        lambda: moe.bias_balanced_routing(np.zeros((2, 4)), np.zeros(3), 2),
        lambda: moe.bias_balanced_routing(np.zeros((2, 4)), np.zeros(4), 2, inputs="affinities"),
        lambda: moe.bias_balanced_routing(np.zeros((2, 6)), np.zeros(6), 2, n_groups=4),
        lambda: moe.bias_balanced_routing(np.zeros((2, 8)), np.zeros(8), 4, n_groups=4, top_groups=1),
        lambda: moe.update_bias([0.0, 0.0], [1, 2], gamma=-0.1),
        lambda: moe.update_bias([0.0, 0.0], [1, 2, 3], gamma=0.1),
        lambda: moe.load_imbalance([0, 0]),
        lambda: moe.moe_layer_params(7168, 2048, 256, 9 * 32),
        lambda: moe.all_to_all_bytes_per_token(7168, 8, ep_size=3, n_experts=256, dedup=True),
        lambda: moe.all_to_all_bytes_per_token(7168, 8, dedup=True),
        lambda: moe.expert_capacity(10, 4, 1, float("inf")),
    ],
)
def test_bad_arguments_are_refused(call):
    with pytest.raises(ValueError):
        call()


def test_first_figure_functions_do_not_import_torch():
    code = (
        "import sys; from core import moe; "
        "r = moe.route_tokens(moe.toy_router_logits(64, 8, 3.0), 2, 1.0, renormalize=True); "
        "t = moe.balance_trajectory(n_steps=5); "
        "moe.switch_aux_loss(r.probs, r.experts, form='hf_topk'); moe.moe_layer_params(7168, 2048, 256, 8, 1); "
        "moe.all_to_all_bytes_per_token(7168, 8, ep_size=8); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
