"""Issue 28, the tokens pages and cards (sampling, loss and units, LoRA, evaluation, attention): the corrected claims
and every number added or changed, each against an independent computation written here (torch autograd, torch's
own scaled_dot_product_attention, fractions, math.comb), at the precision the text prints; never through the core
function that produced the number.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from study.cards import load_cards

ROOT = Path(__file__).resolve().parents[1]
CARDS = {c.id: c for c in load_cards(ROOT / "cards")[0]}


def _page(name: str) -> str:
    """A page's source and its view module's (which holds the page's quick check), with their string pieces joined
    (adjacent literals and line breaks read as one text)."""
    text = (ROOT / "pages" / name).read_text(encoding="utf-8")
    view = re.search(r"^from views import (\w+) as view_of$", text, re.M)
    if view:
        text += "\n" + (ROOT / "views" / f"{view.group(1)}.py").read_text(encoding="utf-8")
    text = re.sub(r'"\s*\n\s*(?:r|f|rf)?"', "", text)  # "... " "..." -> one string
    return re.sub(r"\s*\n\s*", " ", text)


def _prints(x: float, shown: str) -> bool:
    """``x`` rounds to ``shown`` (a plain decimal) at its printed precision: within half a unit of its last digit."""
    digits = len(shown.split(".")[1]) if "." in shown else 0
    return abs(Fraction(x) - Fraction(shown)) <= Fraction(1, 2 * 10**digits)


# ------------------------------------------------------------------------- attention-10: the recipe against torch


def _recipe(x, w_qkv, w_o, heads, *, mask="additive", scale="d_head", split="view_transpose", softmax_dim=-1):
    """Causal multi-head self-attention as card attention-10 writes it; the keyword arguments switch in its traps."""
    B, T, C = x.shape
    d = C // heads
    q, k, v = (x @ w_qkv).split(C, dim=2)  # fused QKV: one (C, 3C) product, split along the last axis

    def heads_first(t):
        if split == "view_transpose":
            return t.view(B, T, heads, d).transpose(1, 2)  # (B, h, T, d)
        return t.reshape(B, heads, T, d)  # the trap: right shape, wrong numbers

    q, k, v = heads_first(q), heads_first(k), heads_first(v)
    s = q @ k.transpose(-2, -1) / math.sqrt(d if scale == "d_head" else C)  # (B, h, T, T)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # True above the diagonal
    if mask == "additive":
        w = torch.softmax(s.masked_fill(future, float("-inf")), dim=softmax_dim)
    else:  # the trap: zero the future after the softmax
        w = torch.softmax(s, dim=softmax_dim).masked_fill(future, 0.0)
    y = (w @ v).transpose(1, 2).contiguous().view(B, T, C)
    return y @ w_o, w


def _library(x, w_qkv, w_o, heads):
    """The same layer through torch's own fused attention."""
    B, T, C = x.shape
    q, k, v = (x @ w_qkv).split(C, dim=2)
    q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return y.transpose(1, 2).reshape(B, T, C) @ w_o


@pytest.fixture(scope="module")
def layer():
    g = torch.Generator().manual_seed(0)
    B, T, C, h = 2, 7, 32, 4
    x = torch.randn(B, T, C, generator=g, dtype=torch.float64)
    w_qkv = torch.randn(C, 3 * C, generator=g, dtype=torch.float64) / math.sqrt(C)
    w_o = torch.randn(C, C, generator=g, dtype=torch.float64) / math.sqrt(C)
    return x, w_qkv, w_o, h


def test_the_cards_recipe_equals_torchs_scaled_dot_product_attention(layer):
    ours, _ = _recipe(*layer)
    torch.testing.assert_close(ours, _library(*layer), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "trap",
    [{"mask": "multiply"}, {"scale": "d_model"}, {"split": "reshape"}, {"softmax_dim": -2}],
    ids=["mask after softmax", "sqrt(d_model)", "reshape without transpose", "softmax over queries"],
)
def test_each_trap_of_the_card_changes_the_output(layer, trap):
    wrong, _ = _recipe(*layer, **trap)
    assert (wrong - _library(*layer)).abs().max() > 1e-3, trap


def test_view_straight_after_transpose_raises_as_the_card_says(layer):
    x, _, _, h = layer
    B, T, C = x.shape
    y = x.view(B, T, h, C // h).transpose(1, 2).contiguous()  # (B, h, T, d), as attention's output w @ v is
    with pytest.raises(RuntimeError):
        y.transpose(1, 2).view(B, T, C)  # back to (B, T, h, d): not contiguous, so view cannot merge h and d
    assert torch.equal(y.transpose(1, 2).contiguous().view(B, T, C), x)
    assert torch.equal(y.transpose(1, 2).reshape(B, T, C), x)  # reshape copies when it must


def test_multiplying_by_zero_after_the_softmax_leaves_every_row_but_the_last_short(layer):
    _, w = _recipe(*layer, mask="multiply")
    sums = w.sum(-1)  # (B, h, T)
    assert torch.all(sums[..., :-1] < 1 - 1e-6)  # rows 0..T-2 lose their future's share
    torch.testing.assert_close(sums[..., -1], torch.ones_like(sums[..., -1]))  # the last row sees every key
    _, right = _recipe(*layer)
    torch.testing.assert_close(right.sum(-1), torch.ones_like(sums))
    text = _page("6_Attention.py")
    assert "every row but the last" in text and "every row sums to less than 1" not in text
    assert "every row but the last" in CARDS["attention-02"].text


def test_attention_10_numbers():
    card = CARDS["attention-10"]
    assert _prints(1 / math.sqrt(512 // 8), "0.125") and "1/sqrt(64) = 0.125" in card.text
    assert _prints(1 / math.sqrt(512), "0.044") and "1/sqrt(512) = 0.044" in card.text
    entries = 8 * 32 * 4096**2  # B h T^2
    assert f"{entries:.1e}".replace("e+0", "e") == "4.3e9" and "4.3e9 scores" in card.text
    assert entries * 2 / 2**30 == 8 and "8 GiB in bf16" in card.text
    params = dict(card.view.params)
    assert card.view.page == "Attention" and params["dm"] == "512" and params["h"] == "8"


def test_attention_texts_name_the_real_preset_rope_base_and_the_scale_at_every_step():
    from views import attention as view

    text = _page("6_Attention.py")
    assert "“Llama-3.1-70B at 128k tokens”" in text and "Llama-3.1-70B at 128k tokens" in view.SPEC.presets
    assert "load the Llama-3-70B preset" not in text
    assert "at every step" in text and "at every step" in CARDS["attention-08"].text
    assert "cannot focus at initialisation" not in CARDS["attention-08"].text
    rope = CARDS["attention-09"]
    assert "10,000 in the original" in rope.text and "500,000 in Llama 3" in rope.text


# -------------------------------------------------------------------------------- evaluation: pass^5 and wording


def test_pass_hat_5_is_zero_because_only_3_of_10_are_correct_and_the_true_value_is_0_0024():
    n, c, k = 10, 3, 5
    assert Fraction(math.comb(c, k), math.comb(n, k)) == 0  # C(3, 5) = 0: no 5-subset of 3 correct is all correct
    assert _prints(float(Fraction(3, 10) ** 5), "0.0024")  # p^5 at p = 0.3: 0.00243
    card = CARDS["evaluation-08"]
    assert "only 3 of the 10 samples are correct" in card.text and "0.3^5 = 0.0024" in card.text
    assert "no 5 samples are all correct" not in card.text


def test_an_interval_that_holds_zero_is_not_significant_not_no_evidence():
    text = _page("5_Evaluation.py")
    assert "no evidence either way" not in text and "1.5 ± 3.9 points, not significant" in text


# -------------------------------------------------------------------------------- LoRA: step 0 and activations


def test_b_zero_silences_as_gradient_for_step_0_only():
    """Autograd on a LoRA layer h = W0 x + s B A x with B = 0, A random: at step 0 only B has a gradient; after one
    SGD step B is non-zero and A's gradient is too (card lora-02: 'from step 1 on both factors move')."""
    g = torch.Generator().manual_seed(1)
    d, k, r, s = 6, 5, 2, 2.0
    W0 = torch.randn(d, k, generator=g, dtype=torch.float64)
    A = (0.1 * torch.randn(r, k, generator=g, dtype=torch.float64)).requires_grad_()
    B = torch.zeros(d, r, dtype=torch.float64, requires_grad=True)
    x = torch.randn(16, k, generator=g, dtype=torch.float64)
    target = torch.randn(16, d, generator=g, dtype=torch.float64)
    grads = []
    for _ in range(2):
        loss = ((x @ (W0 + s * B @ A).T - target) ** 2).mean()
        gA, gB = torch.autograd.grad(loss, (A, B))
        grads.append((gA.abs().max().item(), gB.abs().max().item()))
        with torch.no_grad():
            A -= 0.1 * gA
            B -= 0.1 * gB
    (a0, b0), (a1, b1) = grads
    assert a0 == 0 and b0 > 0 and a1 > 0 and b1 > 0
    card = CARDS["lora-02"].text
    assert "step 0 moves only B" in card and "from step 1 on both factors move" in card
    assert "the first steps only move B" not in card


def _saved_inputs(layer_fn, x):
    """The tensors autograd saves for the backward pass of ``layer_fn(x)`` (torch's saved-tensor hooks)."""
    saved = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer_fn(x).sum()
    return saved


def test_a_frozen_linear_without_adapter_stores_no_input_an_adapted_one_does():
    """'Activation memory changes much less: only frozen linears without an adapter skip storing their inputs':
    autograd keeps x for a trainable or adapted linear, not for a frozen one."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 8, generator=g, requires_grad=True)
    W = torch.randn(8, 8, generator=g)  # frozen
    A = torch.randn(2, 8, generator=g, requires_grad=True)
    B = torch.zeros(8, 2, requires_grad=True)
    frozen = _saved_inputs(lambda t: t @ W.T, x)
    adapted = _saved_inputs(lambda t: t @ W.T + (t @ A.T) @ B.T, x)
    assert not any(s is x for s in frozen)
    assert any(s is x for s in adapted)
    cards = CARDS["lora-03"].text + CARDS["lora-04"].text
    assert "do not shrink at all" not in cards and "none in activations" not in cards
    assert "activation memory changes much less" in CARDS["lora-03"].text
    assert "modest ones in activations" in CARDS["lora-04"].text
    assert "Activation memory changes much less: only frozen linears" in _page("3_LoRA.py")
    assert "Activations are the same either way" not in _page("3_LoRA.py")


def test_lora_cards_call_low_rank_a_bet_and_alpha_over_r_a_rough_fix():
    rank = CARDS["lora-09"]
    assert "LoRA bets" in rank.text and "Biderman et al. 2024" in rank.text
    assert "10-100x the rank of typical LoRA configurations" in rank.text
    assert "empirically close to low rank" not in rank.text
    # review2 M2: Biderman et al. found LoRA learns less in instruction tuning too, far less in continued pretraining
    assert "that holds for instruction and format tuning" not in rank.text
    assert "in instruction tuning and far less in continued pretraining" in rank.answer.sentence
    scale = CARDS["lora-08"]
    assert "Retuning the learning rate every time the rank changes." not in scale.traps
    assert "only roughly does" in scale.text and "alpha / sqrt(r)" in scale.text


# -------------------------------------------------------------------------------- loss and units


def test_the_sft_share_is_a_share_of_loss_terms_with_and_without_the_causal_shift():
    assert f"{float(Fraction(2000, 2050)):.1%}" == "97.6%"
    # with the shift, position t predicts token t + 1: the prompt's first token is never a target
    assert 2000 + 50 - 1 == 2049 and f"{float(Fraction(2000 - 1, 2049)):.1%}" == "97.6%"
    text = _page("12_Loss_and_units.py")
    assert "2,000 / 2,050 = 97.6% of the loss terms" in text
    assert "1,999 of the 2,049 predicted positions, also 97.6%" in text
    assert "97.6% of the loss terms (tokens)" in CARDS["lora-12"].text


def test_the_byte_models_token_probabilities_do_not_sum_to_one_over_a_vocabulary():
    """The blue perplexity is a unit conversion: products of byte probabilities, summed over the BPE vocabulary
    after one context, are not a distribution (the sum is computed here, token by token)."""
    from core import loss_units
    from core.sampling import bundled_text

    model = loss_units.train_byte_model(bundled_text())
    tok = loss_units.get_tokenizer("bpe-800")
    vocab = loss_units._load_bpe(tok._bpe_json).get_vocab()
    context = b"The model "
    total = 0.0
    for symbols in vocab:
        piece = loss_units._symbols_to_bytes(symbols)
        total += math.exp(float(model.log_probs(context + piece)[len(context) :].sum()))
    assert total > 1.05
    text = _page("12_Loss_and_units.py")
    assert "not the perplexity of a token-level model" in text and "do not sum to 1" in text
    assert "Cao and Rimell, 2021" in text
    assert "(seed 001, section 3.1); The Pile" not in text  # the typo


def test_bucketing_is_qualified():
    text = _page("12_Loss_and_units.py")
    assert "sorts all the sequences at once" in text and "mega-batches" in text


def _hf_length_grouped_order(lengths, batch_size, seed):
    """Hugging Face transformers' get_length_grouped_indices (trainer_pt_utils), written out: a random permutation,
    mega-batches of min(n // (4 B), 50) (at least 1) batches, each sorted by length, longest first, and the longest
    sequence of all swapped to the front."""
    import numpy as np

    n = len(lengths)
    mega = max(min(n // (batch_size * 4), 50), 1) * batch_size
    perm = np.random.default_rng(seed).permutation(n)
    megas = [sorted(perm[i : i + mega].tolist(), key=lambda j: -lengths[j]) for i in range(0, n, mega)]
    top = max(range(len(megas)), key=lambda m: lengths[megas[m][0]])
    megas[0][0], megas[top][0] = megas[top][0], megas[0][0]
    return [j for m in megas for j in m]


def test_mega_batch_bucketing_pads_25_percent_of_slots_against_the_full_sorts_6_and_68_unsorted():
    """review3 N3: on the page's lengths (512 log-normal lengths, median 300, sigma 0.9, seed 0, batches of 16),
    padding to each batch's longest wastes 68% of the slots in the given order, 6% after the full sort, and about
    25% with Hugging Face's mega-batch sampler (mean over 200 shuffles; every shuffle between 20% and 30%)."""
    import numpy as np

    rng = np.random.default_rng(0)  # the page's lengths, drawn here, not by core
    lengths = np.clip(np.round(rng.lognormal(math.log(300.0), 0.9, 512)), 1, 2048).astype(int)
    B = 16

    def waste(x):
        slots = sum(int(x[i : i + B].max()) * len(x[i : i + B]) for i in range(0, len(x), B))
        return 1 - int(x.sum()) / slots

    wastes = [waste(lengths[_hf_length_grouped_order(lengths, B, s)]) for s in range(200)]
    assert f"{waste(lengths):.0%}" == "68%" and f"{waste(np.sort(lengths)):.0%}" == "6%"
    assert f"{np.mean(wastes):.0%}" == "25%" and 0.2 < min(wastes) and max(wastes) < 0.3
    text = _page("12_Loss_and_units.py")
    quoted = "on this page's 512 lengths in batches of 16, about 25% of the slots instead of 6%, against 68% unsorted"
    assert quoted in text
    from views import loss_units as view

    assert view.N_LENGTHS == 512 and view.SPEC.defaults().pad_batch == B  # the page's defaults the text quotes
    import core.loss_units

    doc = " ".join(core.loss_units.padding_waste.__doc__.split())
    assert "save a little less" not in doc
    assert "pads about 25% of the slots against the full sort's 6% (68% unsorted)" in doc


# -------------------------------------------------------------------------------- sampling and decoding


def test_sampling_texts_state_the_order_as_a_convention_and_name_p_top():
    text = _page("11_Sampling.py")
    assert "The usual pipeline tempers first" not in text
    assert "llama.cpp's default chain applies the temperature last" in text and "vLLM" in text
    assert r"\sum_{j<i} p_j \ge p_{\text{top}}" in text and r"\sum_{j<i} p_j \ge p," not in text
    card = CARDS["decoding-01"]
    assert "llama.cpp" in card.text and "at least 90% of the mass" in card.text


def test_repetition_loops_need_the_model_and_the_decoder():
    text = _page("11_Sampling.py")
    assert "always taking the argmax causes them" not in text
    assert "their probabilities reinforce repetition" in text and "greedy decoding locks into it" in text
    assert "must cycle eventually whatever the model" in text
    assert "makes loops much rarer, without a guarantee" in text and "breaks the loop" not in text  # review2 M1
    assert "two failures at once" in text  # nucleus sampling: repetitive maximisation and the incoherent tail
    card = CARDS["decoding-03"]
    assert "Both the model and the decoder" not in card.answer.sentence  # review2 M1: self-reinforcement not needed
    assert "must cycle eventually" in card.answer.sentence and "long before that bound" in card.answer.sentence
    assert not any("are both needed" in t for t in card.traps)
    assert any("must cycle eventually, whatever the model" in t for t in card.traps)
    assert "in exact arithmetic" in card.answer.number


@pytest.mark.parametrize("order", [1, 2])
def test_greedy_decoding_over_a_finite_context_cycles_without_any_self_reinforcement(order):
    """review2 M1: argmax over a model that sees only the last n tokens is a function of finitely many contexts
    (V^n), so it must cycle within V^n steps (pigeonhole), even when, as here, its probabilities are a fixed random
    table that does not depend on how often anything was repeated."""
    g = torch.Generator().manual_seed(order)
    V = 12
    table = torch.randn(*([V] * order), V, generator=g)  # logits of the next token given the last `order` tokens
    seq = list(torch.randint(V, (order,), generator=g).tolist())
    first_seen = {}
    for step in range(V**order + 1):
        ctx = tuple(seq[-order:])
        if ctx in first_seen:
            start, period = first_seen[ctx], step - first_seen[ctx]
            break
        first_seen[ctx] = step
        seq.append(int(table[ctx].argmax()))
    else:
        pytest.fail("no repeated context within V^n + 1 steps, against the pigeonhole principle")
    assert start + period <= V**order
    tail = seq[start:]
    assert all(tail[i] == tail[i + period] for i in range(len(tail) - period))  # it repeats from there on


def test_the_order_of_temperature_and_top_k_does_not_matter_that_of_top_p_does():
    """review3 N2: temperature keeps the ranking, so top-k keeps the same k tokens in either order and softmax of the
    kept logits over T is the same distribution; top-p's kept set depends on the order. Written out with torch."""
    g = torch.Generator().manual_seed(6)
    z, T, k, p_top = torch.randn(30, generator=g, dtype=torch.float64), 2.0, 5, 0.9

    def top_k(logits):
        kth = logits.topk(k).values[-1]
        return logits.masked_fill(logits < kth, -math.inf)

    def top_p(logits):
        probs = logits.softmax(-1)
        srt, idx = probs.sort(descending=True)
        drop = srt.cumsum(-1) - srt >= p_top
        return logits.masked_fill(torch.zeros_like(drop).scatter(-1, idx, drop), -math.inf)

    torch.testing.assert_close(top_k(z / T).softmax(-1), (top_k(z) / T).softmax(-1))
    kept_first, kept_last = (top_p(z / T) > -math.inf).sum(), (top_p(z) > -math.inf).sum()
    assert kept_first > kept_last  # a high temperature widens top-p's set only when it comes first
    card = CARDS["decoding-01"].answer.sentence
    assert "top-k alone gives the same distribution in either order" in card and "Yes, for top-p and min-p" in card
    assert "widen the kept set and tempering last" not in card
    text = _page("11_Sampling.py")
    assert "top-k alone keeps the same k tokens and gives the same distribution in either order" in text
    import core.sampling

    doc = " ".join(core.sampling.__doc__.split())
    assert "whenever T != 1" not in doc and "can keep a different set of tokens when T != 1 with top-p or min-p" in doc


def test_decoding_02_states_the_iid_acceptance_assumption_and_its_sum():
    """review3 N4: (1 - a^(k+1))/(1 - a) is the expected count only if each drafted token is accepted independently
    with probability a (Leviathan et al. 2023): the sum over accepted prefixes, sum_{i=0..k} a^i, with k = 4 drafts
    and the target's own token at the end."""
    a, k = Fraction(4, 5), 4
    expected = sum(a**i for i in range(k + 1))
    assert expected == (1 - a ** (k + 1)) / (1 - a) and _prints(float(expected), "3.36")
    number = CARDS["decoding-02"].answer.number
    assert "if each drafted token is accepted independently with probability a (Leviathan et al. 2023): 3.36" in number


def test_the_core_docstring_states_the_order_as_a_convention_and_names_p_top():
    import core.sampling

    doc = " ".join(core.sampling.__doc__.split())
    assert "The usual order" not in doc and "llama.cpp's default chain tempers last" in doc  # review2 N5
    assert "reaches the threshold p_top" in doc and "cum - p_i >= p_top" in doc


def test_sorting_the_whole_data_set_is_the_most_bucketing_can_save():
    """core.loss_units.padding_waste's docstring: among all ways to cut 8 lengths into batches of 2 (every pairing,
    enumerated here), the sorted order pads least; a shuffled order pads more."""
    import itertools

    from core.loss_units import padding_waste

    lengths = [5, 300, 41, 7, 120, 64, 9, 250]

    def slots(pairs):
        return sum(2 * max(a, b) for a, b in pairs)

    def pairings(xs):
        if not xs:
            yield []
            return
        first, rest = xs[0], xs[1:]
        for i in range(len(rest)):
            for more in pairings(rest[:i] + rest[i + 1 :]):
                yield [(first, rest[i]), *more]

    best = min(slots(p) for p in pairings(lengths))
    assert padding_waste(lengths, 2, "bucket").slots == best
    assert padding_waste(lengths, 2, "pad_to_longest").slots > best
    assert sum(1 for _ in itertools.islice(pairings(lengths), 200)) == 105  # 7 * 5 * 3 pairings, all tried


# ------------------------------------------------------------------------ review 2 (strict review of the changes)


class _FusedRMSNorm(torch.autograd.Function):
    """RMSNorm without weight as a fused kernel does it: saves only its input and 1/rms for the backward pass."""

    @staticmethod
    def forward(ctx, x):
        rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
        ctx.save_for_backward(x, rstd)
        return (x.float() * rstd).to(x.dtype)

    @staticmethod
    def backward(ctx, gy):
        x, rstd = ctx.saved_tensors
        n, gyf = x.float() * rstd, gy.float()
        return ((gyf - n * (gyf * n).mean(-1, keepdim=True)) * rstd).to(x.dtype)


def _llama_block_saved_bytes(weights, targets, norm, *, full=False, dropout=0.0, T=8, heads=32, r=8):
    """Bytes autograd saves for one Llama-2-7B-shaped bf16 block (RMSNorm, SDPA, SwiGLU; RoPE left out, it saves
    only its cos/sin tables), counted by torch's saved-tensor hooks, each storage once, weights and adapters not
    counted. ``full``: every weight trains; else W frozen and LoRA adapters (r = 8) on ``targets``."""
    g = torch.Generator().manual_seed(3)
    h = weights["q"].shape[0]
    for w in weights.values():
        w.requires_grad_(full)
    gains = [torch.ones(h, dtype=torch.bfloat16, requires_grad=full) for _ in range(2)]
    adapters = {
        n: (
            (0.01 * torch.randn(r, weights[n].shape[1], generator=g)).to(torch.bfloat16).requires_grad_(),
            torch.zeros(weights[n].shape[0], r, dtype=torch.bfloat16, requires_grad=True),
        )
        for n in targets
    }

    def linear(name, x):
        y = F.linear(x, weights[name])
        if name in adapters:
            A, B = adapters[name]
            y = y + 2.0 * F.linear(F.linear(F.dropout(x, dropout) if dropout else x, A), B)
        return y

    def rms(x, gain):
        if norm == "torch":
            return F.rms_norm(x, (h,), gain)
        if norm == "hf":  # transformers' LlamaRMSNorm (eager): fp32 upcast, the gain times the result cast back
            xf = x.to(torch.float32)
            xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
            return gain * xf.to(x.dtype)
        return _FusedRMSNorm.apply(x) * gain if full else _FusedRMSNorm.apply(x)

    skip = {t.data_ptr() for t in [*weights.values(), *gains, *(t for ab in adapters.values() for t in ab)]}
    saved = {}

    def pack(t):
        if t.data_ptr() not in skip:
            saved[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    x = torch.randn(1, T, h, generator=g).to(torch.bfloat16).requires_grad_()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        a = rms(x, gains[0])
        q, k, v = (linear(n, a).view(1, T, heads, h // heads).transpose(1, 2) for n in "qkv")
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(1, T, h)
        x2 = x + linear("o", o)
        b = rms(x2, gains[1])
        x2 + linear("down", F.silu(linear("gate", b)) * linear("up", b))
    return sum(saved.values())


def test_lora_saves_a_quarter_to_a_third_of_a_blocks_activations_with_qkvo_and_dropout_cancels_it():
    """review2 N2, review3 M1, the LoRA page's interview trade-off: with q, k, v, o adapted, 'about a quarter to a
    third of a Llama-2-7B block's saved activations (bf16, a fused attention kernel; the share depends on the RMSNorm
    implementation), under a fifth with every linear adapted', and LoRA dropout 'roughly cancels the saving' with
    q, k, v, o adapted and makes LoRA store 'more than full fine-tuning' with every linear adapted. Measured here
    with torch's saved-tensor hooks on a block of Llama-2-7B's shape (h = 4096, d_ff = 11008, 32 heads, SDPA), with
    three RMSNorms: torch's F.rms_norm, transformers' LlamaRMSNorm (fp32 upcast) and a fused one; dropout 0.05 and
    0.1 (QLoRA's 0.1 at 7B). Eight tokens: with a fused attention kernel every saved tensor grows linearly in the
    sequence length, so the shares do not depend on it (checked at 16 tokens below; at 32 they agreed to five digits,
    at four times the cost in bf16 matmuls on a CPU: 44 s of the suite)."""
    g = torch.Generator().manual_seed(4)
    shapes = {"q": (4096, 4096), "k": (4096, 4096), "v": (4096, 4096), "o": (4096, 4096)}
    shapes |= {"gate": (11008, 4096), "up": (11008, 4096), "down": (4096, 11008)}
    weights = {n: (0.02 * torch.randn(*s, generator=g)).to(torch.bfloat16) for n, s in shapes.items()}
    qkvo, every = list("qkvo"), list(shapes)
    shares = [1 - _llama_block_saved_bytes(weights, qkvo, "torch", T=T) / _llama_block_saved_bytes(
        weights, [], "torch", full=True, T=T) for T in (8, 16)]  # fmt: skip
    assert shares[0] == pytest.approx(shares[1], abs=1e-12), shares
    for norm in ("torch", "hf", "fused"):
        full = _llama_block_saved_bytes(weights, [], norm, full=True)
        saving = [1 - _llama_block_saved_bytes(weights, t, norm) / full for t in (qkvo, every)]
        assert 0.245 <= saving[0] < 0.335, (norm, saving)  # about a quarter (24.5%) to a third (33.5%)
        assert 0 < saving[1] < 0.2, (norm, saving)  # under a fifth
        for p in (0.05, 0.1):
            dropped = [1 - _llama_block_saved_bytes(weights, t, norm, dropout=p) / full for t in (qkvo, every)]
            assert abs(dropped[0]) < 0.1, (norm, p, dropped)  # roughly cancels the saving
            assert dropped[1] < 0, (norm, p, dropped)  # more than full fine-tuning
    text = _page("3_LoRA.py")
    assert "hardly any activation memory" not in text and "27-31%" not in text and "takes most or all" not in text
    assert "about a quarter to a third of a Llama-2-7B block's saved activations (bf16, a fused attention kernel;" in (
        text
    )
    assert "under a fifth with every linear adapted" in text and "roughly cancels the saving" in text
    assert "LoRA stores more than full fine-tuning" in text


def test_a_frozen_norm_gain_spares_the_normalised_activations_not_the_norms_input():
    """review3 N6: with the gain frozen, an RMSNorm still stores its input (dx needs it); what it no longer stores
    is the normalised activation the gain's own gradient would need. Counted with saved-tensor hooks."""
    x = torch.randn(4, 64, dtype=torch.float64, requires_grad=True)
    for trains_gain in (True, False):
        gain = torch.ones(64, dtype=torch.float64, requires_grad=trains_gain)
        saved = []

        def pack(t, saved=saved):
            saved.append(t)
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            n = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
            _ = n * gain
        assert any(t is x for t in saved)  # the norm's input is stored either way
        assert any(t is n for t in saved) == trains_gain  # the normalised activation only for the gain's gradient
    needle = (
        "only frozen linears without an adapter skip storing their inputs (they need no weight gradient), and a "
        "frozen norm gain skips storing the normalised activations its gradient would need"
    )
    assert needle in _page("3_LoRA.py") and any(needle in t for t in CARDS["lora-04"].traps)
    assert "(and frozen norm weights) can skip storing their inputs" not in CARDS["lora-04"].text


def test_lora_12s_trap_names_loss_terms_not_the_gradient():
    """review3 N5: 97.6% is the share of loss terms (2,000 of 2,050), not of the gradient."""
    assert f"{float(Fraction(2000, 2050)):.1%}" == "97.6%"
    traps = " ".join(CARDS["lora-12"].traps)
    assert "most of the gradient goes to" not in traps and "most of the loss terms (97.6% in the 2,000/50 example)" in (
        traps
    )


def test_the_qlora_headroom_reads_the_48_gb_gpu_as_48_gib():
    """review3 W1: the QLoRA paper's 'single 48GB GPU' (RTX A6000, A40, L40S) has 48 GiB = 51.54e9 bytes. The
    preset (LLaMA-65B in NF4 with double quantisation, r = 64 on every linear, 16 bytes per adapter parameter; the
    plain reference of tests/card_references.py) needs 46.3 GB = 43.1 GiB and leaves 4.9 GiB = 5.2 GB, not 1.7 GB."""
    from tests import card_references as ref
    from views import lora as view

    total = ref.lora_memory("LLaMA-65B", ("q", "k", "v", "o", "gate", "up", "down"), 64, "lora_total_bytes", "nf4")
    gpu = 48 * 2**30
    shown = view.qlora_numbers()
    assert _prints(total / 1e9, "46.3") and _prints(total / 2**30, "43.1")
    assert _prints((gpu - total) / 2**30, "4.9") and _prints((gpu - total) / 1e9, "5.2")
    assert (round(shown["spare_gib"], 1), round(shown["spare_gb"], 1)) == (4.9, 5.2)
    text = _page("3_LoRA.py")
    assert "of a 48 GiB (“48 GB”) GPU for them" in text and 'qlora["spare_gib"]:.1f} GiB' in text
    assert "of a 48 GB GPU for them" not in text
    assert _prints(80 * 2**30 / 1e9, "85.9")  # the GPU field's help: an "80 GB" GPU holds 80 GiB = 85.9 GB
    assert "an “80 GB” GPU holds 80 GiB = 85.9 GB" in (view.SPEC["gpu_gb"].help or "")


def test_the_qlora_headroom_is_at_most_4_9_gib_and_under_2_with_ecc_on():
    """review4 M1: 4.9 GiB is what a 48 GiB card leaves at most. With ECC on, which reserves part of GDDR6 memory, an
    A40 or L40S reports 46,068 MiB (nvidia-smi; e.g. akash-network/provider-configs PR 99 for the L40S), about
    45 GiB, so the same preset leaves under 2 GiB (1.85), before the CUDA context."""
    from tests import card_references as ref

    total = ref.lora_memory("LLaMA-65B", ("q", "k", "v", "o", "gate", "up", "down"), 64, "lora_total_bytes", "nf4")
    ecc = 46068 * 2**20  # bytes an A40 or L40S reports with ECC on
    assert _prints(ecc / 2**30, "45") and 0 < ecc < 48 * 2**30
    assert 1.5 < (ecc - total) / 2**30 < 2 and (45 * 2**30 - total) / 2**30 < 2
    text = _page("3_LoRA.py")
    assert "leaves at most about {" in text and "leaves about {" not in text
    assert "GPU for them, and under 2 GiB on an A40 or L40S, which ship with ECC on" in text
    assert "they report 46,068 MiB, about 45 GiB)" in text and "then report about 45 GiB" not in text
    from views import lora as view

    source = (ROOT / "views" / "lora.py").read_text(encoding="utf-8")
    assert "holds 48 GiB physical" in source and "46,068 MiB, about 45 GiB usable" in source
    assert view.GPU_48GB == 48 * 2**30 / 1e9


def test_the_memory_figure_draws_a_gpus_gb_as_gib_on_its_axis_of_10_to_the_9_bytes():
    """review3 W1: viz.lora's GPU line for a "48 GB" GPU sits at 48 GiB = 51.5 GB on the figure's axis in 10^9
    bytes, and at 85.9 for an "80 GB" one."""
    from core import lora_memory
    from viz.lora import lora_memory_figure

    f = lora_memory.lora_memory(**lora_memory.PRESET_F)
    for gpu, x in ((48, "51.5"), (80, "85.9")):
        assert _prints(gpu * 2**30 / 1e9, x)
        fig = lora_memory_figure({"LoRA": f}, gpu_gb=gpu)
        (line,) = fig.layout.shapes
        assert _prints(line.x0, x) and line.x0 == line.x1
        assert any(f"{gpu} GiB = {x} GB" in (a.text or "") for a in fig.layout.annotations)
        assert "10<sup>9</sup> bytes" in fig.layout.xaxis.title.text


def test_the_logit_is_bilinear_so_q_and_k_must_grow_by_h_to_the_quarter_each():
    """review2 N1: scaling W_Q and W_K by c each scales q^T k by c^2: sqrt(h) each would give h, h^(1/4) each gives
    sqrt(h). With 16 heads: q^T k 4 times larger, each factor 2 times."""
    g = torch.Generator().manual_seed(5)
    h, d = 16, 32
    x = torch.randn(6, 64, generator=g, dtype=torch.float64)
    Wq, Wk = (torch.randn(64, d, generator=g, dtype=torch.float64) for _ in range(2))
    logits = (x @ Wq) @ (x @ Wk).T
    quarter, half = h**0.25, h**0.5
    torch.testing.assert_close((x @ (quarter * Wq)) @ (x @ (quarter * Wk)).T, half * logits)
    torch.testing.assert_close((x @ (half * Wq)) @ (x @ (half * Wk)).T, h * logits)
    assert (half, quarter) == (4.0, 2.0)
    card = CARDS["attention-08"].answer.sentence
    assert "growing W_Q and W_K by sqrt(h)" not in card
    assert "W_Q and W_K by h^(1/4) each" in card and "with 16 heads q^T k 4 times, each factor 2 times" in card
    text = _page("6_Attention.py")
    assert "must grow q·k by √h (q·k is bilinear: W_Q and W_K by h^(1/4) each; raising the gain" in text


def test_the_wrong_scale_is_worse_only_for_hyperparameters_tuned_for_it_mup_uses_one_over_d_head():
    """review3 N1: 'trains slower and worse' was stated as a law. It holds for hyperparameters tuned for 1/sqrt(d_k);
    muP scales the logits by 1/d_head on purpose (Yang et al. 2022), which at d_head = h = 64 (d_model = 4096) is
    exactly the 'buggy' 1/sqrt(d_model)."""
    d_model, h = 4096, 64
    d_head = d_model // h
    assert 1 / d_head == 1 / math.sqrt(d_model)
    card, text = CARDS["attention-08"], _page("6_Attention.py")
    for t in (card.answer.sentence, text):
        assert "trains slower and worse" not in t and "Yang et al. 2022" in t and "1/d_head on purpose" in t
        assert "smaller than intended" in t and "usually trains worse" in t
    assert "tuned for 1/sqrt(d_k)" in card.answer.sentence and "tuned for 1/√d_k" in text
    assert "yes, worse, which" not in " ".join(card.follow_ups)


def test_view_needs_compatible_strides_not_contiguity(layer):
    """review2 N3: a transposed (non-contiguous) tensor can still be viewed to split its last dim; merging the
    heads and d_head dims after transpose(1, 2) is what fails."""
    x, _, _, h = layer
    B, T, C = x.shape
    y = x.view(B, T, h, C // h).transpose(1, 2)  # (B, h, T, d), not contiguous
    assert not y.is_contiguous()
    split = y.view(B, h, T, 2, C // h // 2)  # splitting the last dim: compatible strides, no copy
    assert split.data_ptr() == y.data_ptr()
    out = y.contiguous()  # (B, h, T, d) laid out as attention's output w @ v is
    with pytest.raises(RuntimeError):
        out.transpose(1, 2).view(B, T, C)  # merging h and d: not adjacent in memory once T > 1
    card = CARDS["attention-10"]
    assert "needs contiguous memory" not in card.text
    assert "view never copies and needs strides compatible with the new shape" in card.text
    assert any("one larger GEMM" in f for f in card.follow_ups)


def test_ascending_sort_is_the_least_padding_only_when_the_batch_size_divides_the_count():
    """review2 N4, core.loss_units.padding_waste's docstring: lengths 1, 1, 1, 10, 10 in batches of 2. Every
    ordering is tried here; the ascending sort pads 9 slots ([1, 1], [1, 10], [10]: 2 + 20 + 10 = 32 slots for 23
    tokens), the best ordering none."""
    import itertools

    import core.loss_units
    from core.loss_units import padding_waste

    lengths, B = [1, 1, 1, 10, 10], 2

    def slots(order):
        return sum(B_ * max(order[i : i + B]) for i in range(0, len(order), B) for B_ in [len(order[i : i + B])])

    assert slots(sorted(lengths)) - sum(lengths) == 9
    assert min(slots(o) for o in itertools.permutations(lengths)) - sum(lengths) == 0
    assert padding_waste(lengths, B, "bucket").slots == 32
    doc = " ".join(core.loss_units.padding_waste.__doc__.split())
    assert "When batch_size divides the number of sequences, that is the most bucketing can save" in doc
    assert "the ascending sort pads 9 slots" in doc and "[10, 10], [1, 1], [1] pad none" in doc


# ---------------------------------------------------------------------------------------------------- review 4


def _keep_top_p(p: torch.Tensor, p_top: float) -> torch.Tensor:
    """Plain top-p on sorted-descending probabilities: drop a token when the mass before it already reaches p_top."""
    before = torch.cumsum(p, 0) - p
    kept = torch.where(before >= p_top, torch.zeros_like(p), p)
    return kept / kept.sum()


def _keep_min_p(p: torch.Tensor, min_p: float) -> torch.Tensor:
    kept = torch.where(p >= min_p * p.max(), p, torch.zeros_like(p))
    return kept / kept.sum()


def test_min_p_before_top_p_keeps_a_different_set_and_the_docstring_says_vllm_v1_does_so():
    """review4 N1: vLLM's V1 sampler tempers, then applies min-p, then top-k/top-p; Hugging Face applies min-p after
    top-p. With p = (0.5, 0.3, 0.2), min_p = 0.5 and p_top = 0.6, min-p first keeps 1 token, top-p first keeps 2."""
    p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
    min_p_first = _keep_top_p(_keep_min_p(p, 0.5), 0.6)
    top_p_first = _keep_min_p(_keep_top_p(p, 0.6), 0.5)
    assert int((min_p_first > 0).sum()) == 1 and int((top_p_first > 0).sum()) == 2
    import core.sampling

    doc = " ".join(core.sampling.sample_filter.__doc__.split())
    assert "Hugging Face's and vLLM's order" not in doc
    assert "Hugging Face's order; vLLM also tempers first, but its V1 sampler applies min-p before top-k and top-p" in (
        doc
    )


def test_the_norm_gain_grows_q_k_but_also_scales_v_a_qk_norm_gain_only_q_k():
    """review4 N2: raising the gain of the norm in front of attention by c = h^(1/4) grows q.k by c^2 = sqrt(h) but
    also scales v (and the attention output) by c; the gains of a QK-norm scale only q and k."""
    g = torch.Generator().manual_seed(7)
    h, n, d = 16, 5, 32
    c = h**0.25
    x = torch.randn(n, 64, generator=g, dtype=torch.float64)
    gain = torch.rand(64, generator=g, dtype=torch.float64) + 0.5
    Wq, Wk, Wv = (torch.randn(64, d, generator=g, dtype=torch.float64) for _ in range(3))

    def qkv(gain_in: torch.Tensor, gq: float = 1.0, gk: float = 1.0):
        xn = x / x.pow(2).mean(-1, keepdim=True).sqrt() * gain_in  # RMSNorm with gain
        return gq * (xn @ Wq), gk * (xn @ Wk), xn @ Wv

    q, k, v = qkv(gain)
    q2, k2, v2 = qkv(c * gain)  # the pre-attention norm's gain
    torch.testing.assert_close(q2 @ k2.T, h**0.5 * (q @ k.T))
    torch.testing.assert_close(v2, c * v)
    q3, k3, v3 = qkv(gain, c, c)  # QK-norm-style gains on q and k only
    torch.testing.assert_close(q3 @ k3.T, h**0.5 * (q @ k.T))
    torch.testing.assert_close(v3, v)
    text = _page("6_Attention.py")
    assert "the gain of the norm in front of them: q·k is bilinear" not in text
    assert "raising the gain of the norm in front of attention also scales v by h^(1/4), which W_V or W_O must" in text
    card = CARDS["attention-08"].answer.sentence
    assert "or the gain of the norm in front of them;" not in card
    assert "raising the gain of the norm in front of attention instead also scales v by h^(1/4)" in card
    assert "or its gains by h^(1/4) each, Dehghani et al. 2023)" in card


def test_plain_attention_keeps_the_probabilities_a_second_score_sized_tensor_for_backward():
    """review4 N3: 8 GiB is the score tensor alone (8 * 32 * 4096^2 entries * 2 bytes); the softmax's output is a
    second tensor of that size, and autograd saves it for the backward pass."""
    entries = 8 * 32 * 4096**2
    assert entries * 2 == 8 * 2**30
    B, h, T, d = 2, 3, 5, 4
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(B, h, T, d, generator=g, requires_grad=True) for _ in range(3))
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        (probs @ v).sum().backward()
    assert any(t.shape == (B, h, T, T) and t.data_ptr() == probs.data_ptr() for t in saved)
    assert probs.data_ptr() != scores.data_ptr()  # two score-sized tensors at the softmax
    number = CARDS["attention-10"].answer.number
    assert "8 GiB in bf16 for the score tensor alone" in number and "for one layer" not in number
    assert "the softmax's output is a second tensor of that size, which training keeps for the backward pass" in number


def test_the_sft_strips_colour_is_each_tokens_weight_in_the_loss():
    """review4 N4: the strip's colour is w_t; it is a token's share of the loss only if every token's loss is equal.
    With losses (1, 3) and weights (1/2, 1/2) the weights are 1/2 each but the shares are 1/4 and 3/4."""
    w, loss = [Fraction(1, 2), Fraction(1, 2)], [1, 3]
    total = sum(wi * li for wi, li in zip(w, loss, strict=True))
    assert [wi * li / total for wi, li in zip(w, loss, strict=True)] == [Fraction(1, 4), Fraction(3, 4)]
    text = _page("12_Loss_and_units.py")
    assert "Colour: each token's share of the loss." not in text
    assert "Colour: each token's weight in the loss (its share of the loss if every token's loss is the same)." in text
    from viz.loss_units import sft_mask_figure

    doc = " ".join(sft_mask_figure.__doc__.split())
    assert "colour = the token's weight in the loss (its share of the loss if every token's loss is the same)" in doc


def test_the_qlora_preset_counts_65e9_nf4_parameters_qlora_keeps_embedding_and_head_in_bf16():
    """review5 N1: LLaMA-65B's shape (vocab 32,000, hidden 8,192, 80 layers, MLP 22,016) has 65.29e9 parameters, of
    which 64.76e9 in linear layers. QLoRA's code quantises only those; the input embedding and the output head stay in
    bf16 and the norms in fp32. With r = 64 on every linear (16 bytes per adapter parameter) that needs 0.87 GiB more
    than the preset's 65e9 in NF4, leaving 3.99 GiB of 48 GiB and 0.98 GiB of 46,068 MiB (ECC on). review5 N2: the
    A40 and L40S ship with ECC on; 46,068 of 49,152 MiB is about 15/16."""
    nf4_bits = Fraction(4) + Fraction(8, 64) + Fraction(32, 64 * 256)
    vocab, d, layers, ff = 32000, 8192, 80, 22016
    linear = layers * (4 * d * d + 3 * d * ff)
    embed = vocab * d
    norms = (2 * layers + 1) * d
    adapters = layers * 64 * (4 * (d + d) + 3 * (d + ff))
    assert (linear, linear + 2 * embed + norms) == (64_760_053_760, 65_285_660_672)
    preset = Fraction(65 * 10**9) * nf4_bits / 8 + 16 * adapters
    real = linear * nf4_bits / 8 + 2 * embed * 2 + norms * 4 + 16 * adapters
    gib = 2**30
    assert _prints(float((linear + 2 * embed + norms) / Fraction(10**9)), "65.3")
    assert _prints(float((real - preset) / gib), "0.9")
    assert _prints(float(48 - real / gib), "4.0") and _prints(float(Fraction(46068, 1024) - real / gib), "1.0")
    assert _prints(float(48 - preset / gib), "4.9")
    assert abs(1 - Fraction(46068, 49152) - Fraction(1, 16)) < Fraction(1, 1000)  # "about 1/16"
    text = _page("3_LoRA.py")
    assert "That is the preset's count: 65e9 parameters, all in NF4. LLaMA-65B has 65.3e9" in text
    assert "which takes about 0.9 GiB more: about 4.0 GiB left, 1.0 GiB with ECC on, with" in text
    # the 4.0 / 1.0 keep the page's 16 bytes per adapter parameter; QLoRA's code keeps adapters in bf16 (review-last M1)
    flat = " ".join(text.split())
    assert "each adapter parameter counted as this page counts it, with an fp32 master copy" in flat
    # QLoRA's code keeps the adapters in bf16 without an fp32 master copy: 4 bytes fewer for each of the preset's
    # r = 64 adapters on every linear of LLaMA-65B's 80 layers (q, k, v, o: 8192 + 8192; gate, up: 8192 + 22016; down)
    adapters = 80 * 64 * (4 * (8192 + 8192) + 3 * (8192 + 22016))
    assert adapters == 799_539_200 and f"{4 * adapters / 2**30:.0f}" == "3"
    assert "the same code keeps the adapters in bf16 without one, which leaves about 3 GiB more" in flat
    assert "and under 2 GiB with ECC on, which reserves" not in text


def test_with_a_qk_norm_scaling_w_q_and_w_k_does_nothing_only_its_scale_or_gains_grow_q_k():
    """review5 N3: a QK-norm normalises q and k, so scaling W_Q and W_K (or the pre-attention norm's gain) leaves
    q.k unchanged; Henry et al. 2020's learned scale g multiplies the normalised q.k (grow it by sqrt(h)); a
    LayerNorm-style QK-norm's gains (Dehghani et al. 2023) each by h^(1/4) grow q.k by sqrt(h)."""
    g = torch.Generator().manual_seed(11)
    h, n, d = 16, 5, 32
    x = torch.randn(n, 64, generator=g, dtype=torch.float64)
    Wq, Wk = (torch.randn(64, d, generator=g, dtype=torch.float64) for _ in range(2))
    gq, gk = (torch.rand(d, generator=g, dtype=torch.float64) + 0.5 for _ in range(2))

    def l2(t: torch.Tensor) -> torch.Tensor:
        return t / t.norm(dim=-1, keepdim=True)

    def rms(t: torch.Tensor) -> torch.Tensor:
        return t / t.pow(2).mean(-1, keepdim=True).sqrt()

    def henry(wq, wk, scale=1.0):
        return scale * l2(x @ wq) @ l2(x @ wk).T

    def gains(wq, wk, a=1.0, b=1.0):
        return (a * gq * rms(x @ wq)) @ (b * gk * rms(x @ wk)).T

    c = h**0.25
    torch.testing.assert_close(henry(c * Wq, c * Wk), henry(Wq, Wk))  # W_Q and W_K do nothing
    torch.testing.assert_close(gains(c * Wq, c * Wk), gains(Wq, Wk))
    torch.testing.assert_close(gains(Wq, Wk, c, c), h**0.5 * gains(Wq, Wk))
    torch.testing.assert_close(henry(Wq, Wk, h**0.5), h**0.5 * henry(Wq, Wk))
    text = " ".join(_page("6_Attention.py").split())
    card = CARDS["attention-08"].answer.sentence
    for t, dot, root in ((text, "q·k", "√h"), (card, "q^T k", "sqrt(h)")):
        assert "or the gains of a QK-norm, Dehghani et al. 2023" not in t
        assert (
            f"with a QK-norm, which normalises q and k so that neither route changes {dot}, only its learned scale "
            f"by {root}, Henry et al. 2020, or its gains by h^(1/4) each, Dehghani et al. 2023)"
        ) in t
