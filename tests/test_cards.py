"""The interview cards: every shipped card loads and is complete, its links name real page parameters with values
the pages accept, its numbers match core, and bad card files give clear messages while the other cards load."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import itertools
import pkgutil
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

import views
from core import (
    attention,
    calibration,
    distillation,
    dpo,
    evaluation,
    flash_attention,
    grpo,
    hardware,
    kl_leash,
    kv_cache,
    lora,
    lora_layer,
    lora_memory,
    loss_units,
    moe,
    number_formats,
    optimizers,
    policy_gradient,
    reward_model,
    rope,
    scaling,
    schedules,
    serving,
    test_time_compute,
    tiny_gpt,
    training_memory,
)
from core.model_spec import forward_flops_per_token, get_spec, kv_cache_bytes_per_token, param_breakdown, param_count
from core.number_formats_data import PERCENTILES as FMT_PERCENTILES
from core.number_formats_data import shipped as fmt_shipped
from core.optimizers_data import shipped as optimizers_shipped
from study.cards import ANSWER_PARTS, PAGES, load_cards
from tests.card_references import parse_shown, unit_of
from views import drills

ROOT = Path(__file__).resolve().parents[1]
CARDS, PROBLEMS = load_cards(ROOT / "cards")
IDS = [c.id for c in CARDS]


def _days(C, n_gpus, peak_flops, mfu):
    return float(scaling.training_seconds(C, n_gpus, peak_flops, mfu)) / 86400


def _excess_pct(C, factor, fit="hoffmann2022"):
    N_opt, _ = scaling.chinchilla_optimum(C, fit)
    return 100 * (float(scaling.isoflop_loss(C, factor * N_opt, fit)) / float(scaling.isoflop_loss(C, N_opt, fit)) - 1)


def _compute_share(N, D, fit="hoffmann2022"):
    """Fraction of 6ND at which a compute-optimal model reaches the loss of (N, D) (root-found with scipy)."""
    target = float(scaling.chinchilla_loss(N, D, fit))

    def gap(log_c):
        n_opt, _ = scaling.chinchilla_optimum(10**log_c, fit)
        return float(scaling.isoflop_loss(10**log_c, n_opt, fit)) - target

    return 10 ** brentq(gap, 15, 30) / float(scaling.training_flops(N, D))


def _model(name):
    return lora_memory.MODEL_PRESETS[name]


@functools.cache
def _lora_fit(init, r, alpha, steps):
    config = lora_layer.TrainConfig(r=r, alpha=alpha, steps=steps)
    return lora_layer.train_all_inits(config, inits=(init,))[init]  # as the page runs it (few torch threads)


def _lora_init_run(init, field, r=8, alpha=16.0, steps=200):
    """A number of the LoRA page's initialisation fit: the output change at step 0, a gradient's norm at step 0, or
    the largest ||A||_F or ||B||_F over every step (``max_norm_A``, ``max_norm_B``)."""
    run = _lora_fit(init, r, alpha, steps)
    if field.startswith("max_norm_"):
        return float(np.max(getattr(run, field.removeprefix("max_"))))
    return float(getattr(run, field))


def _length_bias(beta, field, length_coef=reward_model.LENGTH_TOY.length_coef):
    """The KL-leash optimum over the length toy's answers at one beta: mean length, true or proxy reward, KL."""
    toy = dataclasses.replace(reward_model.LENGTH_TOY, length_coef=length_coef)
    return float(getattr(reward_model.length_bias_sweep(toy, betas=np.array([float(beta)])), field)[0])


def _length_best(field, length_coef=reward_model.LENGTH_TOY.length_coef):
    """Over the KL page's beta steps: the beta with the best true quality (``best_beta``) or that quality."""
    toy = dataclasses.replace(reward_model.LENGTH_TOY, length_coef=length_coef)
    sweep = reward_model.length_bias_sweep(toy, betas=np.array(kl_leash.beta_choices()))
    return sweep.best_beta if field == "best_beta" else float(sweep.true_reward.max())


def _schedule_end_loss(kind, steps, warmup, final_lr_frac, decay_steps=None, decay_shape="linear"):
    lr = schedules.lr_schedule(
        kind, steps, warmup=warmup, final_lr_frac=final_lr_frac, decay_steps=decay_steps, decay_shape=decay_shape
    )
    return float(schedules.DEFAULT_LOSS_MODEL.loss(lr)[-1])


def _kaplan(long_steps, n, which, warmup, final_lr_frac=0.1):
    gap = schedules.kaplan_gap(long_steps, [n], final_lr_frac=final_lr_frac, warmup=warmup)
    return float({"read": gap.read_from_long, "own": gap.own_schedule, "gap": gap.gap}[which][0])


def _lora_field(model, targets, r, field, base="bf16"):
    m = lora_memory.lora_memory(_model(model), targets, r, base_format=base)
    return 100 * m.share if field == "share_pct" else float(getattr(m, field))


# what -> the core computation it names (explicit: card files never hold code)
QUANTITIES = {
    "training_flops": lambda N, D: float(scaling.training_flops(N, D)),
    "chinchilla_loss": lambda N, D, fit="hoffmann2022": float(scaling.chinchilla_loss(N, D, fit)),
    "isoflop_loss": lambda C, N, fit="hoffmann2022": float(scaling.isoflop_loss(C, N, fit)),
    "min_loss": lambda C, fit="hoffmann2022": float(
        scaling.isoflop_loss(C, scaling.chinchilla_optimum(C, fit)[0], fit)
    ),
    "n_opt": lambda C, fit="hoffmann2022": float(scaling.chinchilla_optimum(C, fit)[0]),
    "tokens_per_param_opt": lambda C, fit="hoffmann2022": float(np.divide(*scaling.chinchilla_optimum(C, fit)[::-1])),
    "rule_n": lambda C: float(scaling.rule_of_thumb(C)[0]),
    "rule_d": lambda C: float(scaling.rule_of_thumb(C)[1]),
    "hardware_flops": lambda n_gpus, hours, peak_flops, mfu: float(
        scaling.hardware_flops(n_gpus, hours, peak_flops, mfu)
    ),
    "gpu_days": lambda C, peak_flops, mfu: _days(C, 1, peak_flops, mfu),
    "train_days": _days,
    "loss_excess_pct": _excess_pct,
    "compute_share_same_loss": _compute_share,
    "training_memory_bytes": lambda N: float(scaling.plan(1e21, N).memory_bytes),
    "training_memory_gib": lambda N: float(scaling.plan(1e21, N).memory_bytes) / 2**30,
    # % of the budget C a compute-optimal model saves at the loss of a model `factor` times N_opt (budget-free)
    "compute_waste_pct": lambda C, factor, fit="hoffmann2022": (
        100 * (1 - float(scaling.compute_efficiency(C, factor * scaling.chinchilla_optimum(C, fit)[0], fit)))
    ),
    # 6ND over the compute a compute-optimal model needs for the same loss
    "compute_multiple_same_loss": lambda N, D, fit="hoffmann2022": (
        1 / float(scaling.compute_efficiency(scaling.training_flops(N, D), N, fit))
    ),
    # % by which the loss on the budget C rises from a model of N_from parameters to one of N_to (unrounded)
    "loss_rise_pct": lambda C, N_from, N_to, fit="hoffmann2022": (
        100 * (float(scaling.isoflop_loss(C, N_to, fit)) / float(scaling.isoflop_loss(C, N_from, fit)) - 1)
    ),
    "kl_policy": lambda pi_ref, r, beta, index: float(kl_leash.kl_regularized_policy(pi_ref, r, beta)[index]),
    "kl_divergence": lambda p, q: float(kl_leash.kl_divergence(p, q)),
    "kl_max_objective": lambda pi_ref, r, beta: float(
        kl_leash.objective(kl_leash.kl_regularized_policy(pi_ref, r, beta), pi_ref, r, beta)
    ),
    "dpo": lambda field, logp_w, logp_l, ref_w, ref_l, beta: float(
        getattr(dpo.dpo_loss(logp_w, logp_l, ref_w, ref_l, beta), field)
    ),
    "grpo_advantage": lambda rewards, index, std="population": float(grpo.grpo_advantages(rewards, std)[index]),
    "grpo_std": lambda rewards: grpo.group_stats(rewards).std_population,
    "grpo_sample_factor": lambda rewards: float(grpo.mode_factor(rewards, "sample")),
    "grpo_signal_probability": lambda p, G: float(grpo.group_signal_probability(p, G)),
    "pass_at_k": lambda n, c, k: float(evaluation.pass_at_k(n, c, k)),
    "pass_at_k_plugin": lambda n, c, k: float(evaluation.pass_at_k_plugin(n, c, k)),
    "pass_hat_k": lambda n, c, k: float(evaluation.pass_hat_k(n, c, k)),
    "pass_hat_k_plugin": lambda n, c, k: float(evaluation.pass_hat_k_plugin(n, c, k)),
    "standard_error": lambda p, n: float(evaluation.standard_error(p, n)),
    "compare_se": lambda acc_a, acc_b, N, **kw: evaluation.compare_models(acc_a, acc_b, N, **kw).se,
    "compare_half_width": lambda acc_a, acc_b, N, **kw: (lambda m: m.z_crit * m.se)(
        evaluation.compare_models(acc_a, acc_b, N, **kw)
    ),
    "lora_params": lambda d, k, r: float(lora.lora_param_count(d, k, r)),
    "lora_share_pct": lambda d, k, r: 100 * lora.lora_param_count(d, k, r) / (d * k),
    "lora_share": lambda d, k, r: lora.lora_param_count(d, k, r) / (d * k),
    "lora_memory": _lora_field,
    "lora_scale": lambda alpha, r: float(lora_layer.lora_scale(alpha, r)),
    "lora_init_run": _lora_init_run,
    "base_bits_per_param": lambda base: 8 * lora_memory.BASE_BYTES[base],
    "nf4_block_overhead_bits": lambda: 8 * lora_memory.BASE_BYTES["nf4"] - 4,
    "base_bytes_ratio": lambda base, to: lora_memory.BASE_BYTES[base] / lora_memory.BASE_BYTES[to],
    "length_bias": _length_bias,
    "length_bias_best": _length_best,
    "schedule_end_loss": _schedule_end_loss,
    "kaplan_read_off": _kaplan,
    "kv_kib_per_token": lambda layers, kv_heads, head_dim, bytes: (
        kv_cache.kv_cache_bytes(layers, kv_heads, head_dim, bytes) / 1024
    ),
    "kv_gib": lambda layers, kv_heads, head_dim, bytes, tokens: (
        kv_cache.kv_cache_bytes(layers, kv_heads, head_dim, bytes, tokens) / 2**30
    ),
    "logit_variance": lambda d_k, choice, d_model=None: float(attention.expected_logit_variance(d_k, choice, d_model)),
    "attention_scale": lambda choice, d_k, d_model=None: float(attention.resolve_scale(choice, d_k, d_model)),
    "score_tensor_entries": lambda batch, heads, tokens: float(
        batch * heads * attention.causal_mask(tokens, device="cpu").numel()
    ),
    "score_tensor_gib": lambda batch, heads, tokens, bytes: (
        batch * heads * attention.causal_mask(tokens, device="cpu").numel() * bytes / 2**30
    ),
    "uniform_row_entropy": lambda t: float(attention.row_entropy(np.full((1, t), 1.0 / t))[0]),
    "uniform_loss": lambda V: loss_units.uniform_loss(V),
    "sft_prompt_share_pct": lambda prompt_len, resp_len, mask_prompt: (
        100 * loss_units.sft_loss_weights(prompt_len, resp_len, mask_prompt=mask_prompt).prompt_share
    ),
    "perplexity": lambda nll_nats: float(loss_units.perplexity(nll_nats)),
    "pipeline_bubble_pct": lambda p, m: 100 * float(training_memory.pipeline_bubble(p, m)),
    "ridge_point": lambda gpu: hardware.get_gpu(gpu).ridge_point,
    "contiguous_waste_pct": lambda lengths, max_len: (
        100 * serving.allocation_waste(np.array(lengths), max_len).contiguous
    ),
    "serving_gflop_per_token": lambda C, N: scaling.plan(C, N).serving_flops_per_token / 1e9,
    "kv_sequences_that_fit": lambda model, context, n_gpus, kv_budget_gib: float(
        serving.kv_sequences_that_fit(
            get_spec(model), context, n_gpus=n_gpus, kv_budget_bytes=kv_budget_gib * 2**30
        ).sequences
    ),
    "speculative_expected_tokens": lambda alpha, k: float(serving.expected_tokens_per_forward(alpha, k)),
    # systems (topic owner: systems): weights, batch-1 decode floors, formats, parameter counts
    "weight_bytes": lambda model, fmt: serving.weight_bytes(get_spec(model), fmt),
    "decode_floor_ms": lambda model, fmt, gpu, tp=1: (
        1e3 * serving.decode_time_bound(get_spec(model), gpu, weight_format=fmt, tp=tp)
    ),
    "decode_tokens_per_s": lambda model, fmt, gpu, tp=1: (
        1 / serving.decode_time_bound(get_spec(model), gpu, weight_format=fmt, tp=tp)
    ),
    "bits_per_param": lambda fmt: serving.BITS_PER_PARAM[fmt],
    "param_count": lambda model: float(serving.param_breakdown(get_spec(model)).total),
    "param_count_mha": lambda model: float(
        serving.param_breakdown(get_spec(model).replace(n_kv_heads=get_spec(model).n_heads)).total
    ),
    "gqa_saving_params": lambda model: float(
        serving.param_breakdown(get_spec(model).replace(n_kv_heads=get_spec(model).n_heads)).total
        - serving.param_breakdown(get_spec(model)).total
    ),
    "decode_attention_flop_per_kv_byte": lambda model, bytes: float(
        (forward_flops_per_token(get_spec(model), 1001) - forward_flops_per_token(get_spec(model), 1000))
        / kv_cache_bytes_per_token(get_spec(model), bytes)
    ),
    "ffn_share": lambda model: serving.param_breakdown(get_spec(model)).shares()["ffn"],
    "unembedding_params": lambda model: float(serving.param_breakdown(get_spec(model)).unembedding),
}


def _llama31_pair_count(d, base, L, which, low_freq_factor=1.0, high_freq_factor=4.0):
    """Llama 3.1's scaling from core (factor 8): pairs whose frequency core divides by 8, keeps, or blends."""
    plain = rope.rope_inv_freq(d, base)[0]
    scaled = rope.rope_inv_freq(
        d,
        base,
        {
            "type": "llama3",
            "factor": 8.0,
            "original_max_position_embeddings": L,
            "low_freq_factor": low_freq_factor,
            "high_freq_factor": high_freq_factor,
        },
    )[0]
    slowed, kept = np.isclose(scaled, plain / 8.0, rtol=1e-12), np.isclose(scaled, plain, rtol=1e-12)
    return float({"slowed": slowed, "kept": kept, "blended": ~(slowed | kept)}[which].sum())


QUANTITIES |= {
    # positions (topic owner: positions): RoPE and long context against core/rope.py
    "orderings": lambda n: float(len(list(itertools.permutations(range(n))))),
    "rope_pair_score": lambda theta, m, n, q=(1.0, 0.0), k=(1.0, 0.0): float(
        rope.rope_scores(np.array([q]), np.array([k]), [theta], [m], [n])[0, 0]
    ),
    "rope_wavelength": lambda d, base, i: float(rope.rope_wavelengths(rope.rope_inv_freq(d, base)[0])[i]),
    "rope_pairs_longer_than": lambda d, base, context: float(
        rope.wavelengths_beyond_context(rope.rope_inv_freq(d, base)[0], context).sum()
    ),
    "alibi_slope": lambda n_heads, head: 2.0 ** (-8 * head / n_heads),
    "alibi_penalty": lambda n_heads, head, distance: 2.0 ** (-8 * head / n_heads) * distance,
    "context_ratio": lambda new, old: new / old,
    "pi_frequency": lambda d, base, s, i: float(rope.rope_inv_freq(d, base, {"type": "linear", "factor": s})[0][i]),
    # base' from core's NTK frequencies: theta_1 = base'^(-2/d)
    "ntk_base": lambda base, s, d: float(rope.rope_inv_freq(d, base, {"type": "ntk", "factor": s})[0][1] ** (-d / 2)),
    "ntk_slowdown": lambda d, base, s, i: float(
        rope.rope_inv_freq(d, base)[0][i] / rope.rope_inv_freq(d, base, {"type": "ntk", "factor": s})[0][i]
    ),
    "yarn_attention_factor": lambda s: rope.rope_inv_freq(
        128, 10_000.0, {"type": "yarn", "factor": s, "original_max_position_embeddings": 4096}
    )[1],
    "yarn_logit_multiplier": lambda s: (
        rope.rope_inv_freq(128, 10_000.0, {"type": "yarn", "factor": s, "original_max_position_embeddings": 4096})[1]
        ** 2
    ),
    "llama31_pair_count": _llama31_pair_count,
    "roformer_relative_bound": lambda d, base, distance: float(rope.relative_upper_bound([distance], d, base)[0]),
    "rope_mean_score": lambda d, base, distance, correlation=1.0: float(
        rope.expected_rotated_score([distance], d, base, correlation)[0]
    ),
}


def _flash_trace(n, bq, bk, causal=False):
    """core's tiled forward on zero inputs of width 1 (the tiles it computes do not depend on the values or on d)."""
    zeros = np.zeros((n, 1), dtype=np.float32)
    return flash_attention.flash_attention_forward(zeros, zeros, zeros, bq, bk, causal=causal).trace


@functools.cache
def _flash_forward_flops(n, d):
    """2 FLOPs per multiply-add over core's computed tiles: S_ij (B_r x d)(d x B_c) and P~ V_j (B_r x B_c)(B_c x d)."""
    return float(
        sum(2 * (s.rows[1] - s.rows[0]) * (s.cols[1] - s.cols[0]) * (d + d) for s in _flash_trace(n, 1024, 1024))
    )


def _attention_autograd_flops(n, d):
    """Matmul FLOPs of plain attention by torch's FLOP counter: the forward's QK^T alone, the whole forward, and the
    backward autograd runs (which reads P back instead of recomputing it)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    q, k, v = (torch.randn(n, d, dtype=torch.float64, requires_grad=True) for _ in range(3))
    with FlopCounterMode(display=False) as scores:
        q @ k.T
    with FlopCounterMode(display=False) as forward:
        out = torch.softmax(q @ k.T / d**0.5, dim=-1) @ v
    with FlopCounterMode(display=False) as backward:
        out.sum().backward()
    return scores.get_total_flops(), forward.get_total_flops(), backward.get_total_flops()


def _flash_backward_over_forward(n, d):
    s, fwd, bwd = _attention_autograd_flops(n, d)
    return (bwd + s) / fwd  # FlashAttention's backward: the plain one plus S = Q K^T recomputed


def _recompute_extra_pct(n, d):
    s, fwd, bwd = _attention_autograd_flops(n, d)
    return 100 * s / (fwd + bwd)


def _hbm_elements(n, d, method, sram_bytes=None, bytes=2):
    if method == "standard":
        return float(flash_attention.attention_hbm_traffic(n, d, "standard").total)
    return float(flash_attention.attention_hbm_traffic(n, d, "flash", sram_elements=sram_bytes // bytes).total)


def _flash_saved(n, d, heads, bytes, stats_bytes, stats_per_row=1):
    return flash_attention.attention_activation_bytes(
        n, d, heads, "flash", bytes, stats_per_row=stats_per_row, stats_bytes_per_element=stats_bytes
    )


def _probabilities(n, heads, bytes):
    return flash_attention.attention_activation_bytes(n, 1, heads, "standard", bytes)


QUANTITIES |= {
    # flash_attention (topic owner: flash_attention): HBM traffic, block sizes, the online softmax, what the backward
    # keeps, FLOPs, against core/flash_attention.py (the FLOP ratios of the backward by torch's FLOP counter)
    "hbm_elements": _hbm_elements,
    # the four N^2 terms: S written and read, P written and read (P's size from core's activation count)
    "hbm_score_share_pct": lambda n, d: 100 * 4 * _probabilities(n, 1, 1) / _hbm_elements(n, d, "standard"),
    "standard_hbm_mib": lambda n, d, bytes: flash_attention.attention_hbm_bytes(n, d, 1, "standard", bytes) / 2**20,
    "qkvo_mib": lambda n, d, bytes: (
        (flash_attention.attention_hbm_bytes(n, d, 1, "standard", bytes) - 4 * _probabilities(n, 1, bytes)) / 2**20
    ),
    "sram_elements": lambda sram_bytes, bytes: float(sram_bytes // bytes),
    "flash_block_size": lambda d, sram_bytes, bytes, which: float(
        flash_attention.flash_block_sizes(d, sram_bytes // bytes)[1 if which == "cols" else 0]
    ),
    "flash_key_blocks": lambda n, d, sram_bytes, bytes: float(
        len({s.k_block for s in _flash_trace(n, *flash_attention.flash_block_sizes(d, sram_bytes // bytes))})
    ),
    "hbm_ratio": lambda n, d, sram_bytes, bytes: (
        _hbm_elements(n, d, "standard") / _hbm_elements(n, d, "flash", sram_bytes, bytes)
    ),
    # the ratio's limit, read at n = 2^26 (within 1e-5 of it; larger n overflows int64 at d = 128)
    "hbm_ratio_limit": lambda d, sram_bytes, bytes: (
        _hbm_elements(2**26, d, "standard") / _hbm_elements(2**26, d, "flash", sram_bytes, bytes)
    ),
    # a row of logits as keys against one query of 1 (scale 1): core's final l, its sum of e^(s - max)
    "online_softmax_sum": lambda logits, block: float(
        flash_attention.flash_attention_forward(
            np.ones((1, 1)), np.array(logits, dtype=float)[:, None], np.zeros((len(logits), 1)), 1, block, scale=1.0
        ).l[0]
    ),
    # two keys in blocks of one: the second step's rescale of the first, e^(m_old - m_new) (m_old < m_new)
    "online_rescale": lambda m_old, m_new: float(
        flash_attention.flash_attention_forward(
            np.ones((1, 1)), np.array([[m_old], [m_new]]), np.zeros((2, 1)), 1, 1, scale=1.0
        )
        .trace[1]
        .rescale[0]
    ),
    "exp_overflow_x": lambda dtype: float(np.log(np.finfo(dtype).max)),
    "probabilities_gib": lambda n, heads, bytes: _probabilities(n, heads, bytes) / 2**30,
    "flash_saved_mib": lambda n, d, heads, bytes, stats_bytes: _flash_saved(n, d, heads, bytes, stats_bytes) / 2**20,
    # one statistic per row: two per row less one per row
    "logsumexp_kib": lambda n, heads, stats_bytes: (
        (_flash_saved(n, 1, heads, 2, stats_bytes, 2) - _flash_saved(n, 1, heads, 2, stats_bytes, 1)) / 2**10
    ),
    "saved_ratio": lambda n, d, heads, bytes, stats_bytes: (
        _probabilities(n, heads, bytes) / _flash_saved(n, d, heads, bytes, stats_bytes)
    ),
    "attention_forward_flops": _flash_forward_flops,
    "attention_forward_flops_ratio": lambda n_from, n_to, d: (
        _flash_forward_flops(n_to, d) / _flash_forward_flops(n_from, d)
    ),
    "flash_backward_forward_flops": _flash_backward_over_forward,
    "recompute_extra_flops_pct": _recompute_extra_pct,
    "causal_blocks_skipped": lambda t, bq, bk: float(sum(s.skipped for s in _flash_trace(t, bq, bk, causal=True))),
    # a decode step, one head: core's KV cache of n tokens (one layer, one KV head, 1 byte a value) in elements,
    # against the one row of n scores
    "decode_kv_elements": lambda n, d: float(kv_cache.kv_cache_bytes(1, 1, d, 1, n)),
    "decode_kv_over_scores": lambda n, d: kv_cache.kv_cache_bytes(1, 1, d, 1, n) / n,
}


def _moe_gates(logits, k):
    return moe.route_tokens(np.array([logits], dtype=float), k, None, renormalize=True).gates[0]


def _moe_gate_grad(logits, k, rank, wrt, h=1e-6):
    """d g / d z_wrt of core's renormalised gate by a central difference (the selection does not change within h)."""
    up, down = np.array(logits, dtype=float), np.array(logits, dtype=float)
    up[wrt] += h
    down[wrt] -= h
    return float((_moe_gates(up, k)[rank] - _moe_gates(down, k)[rank]) / (2 * h))


def _moe_dropped(choices, n_experts, cf):
    """Top-1 routing of one-hot logits (each token prefers its listed expert) under core's capacity."""
    logits = 5.0 * np.eye(n_experts)[np.array(choices)]
    return float(moe.route_tokens(logits, 1, cf).dropped)


def _moe_aux_loss(probs, n_experts, top_k=1, form="switch"):
    p = np.array(probs, dtype=float).reshape(-1, n_experts)  # (T, E) from the rows written one after another
    return moe.switch_aux_loss(p, np.argsort(-p, axis=1, kind="stable")[:, :top_k], form=form)


def _moe_bias_routing(affinities, bias, k):
    return moe.bias_balanced_routing(np.array([affinities]), np.array(bias, dtype=float), k, inputs="affinities")


def _moe_bias_steps(shift, gamma):
    """Steps of core's bias update, an expert always underloaded, until its bias has risen by ``shift``."""
    bias, steps = np.zeros(2), 0
    while bias[0] < shift - 1e-12:
        bias = moe.update_bias(bias, [0.0, 1.0], gamma)
        steps += 1
    return float(steps)


def _moe_combinations(experts, top_k, m=1):
    split = moe.fine_grained_split(experts, top_k, 2048, m)
    return float(split.combinations_after if m > 1 else split.combinations_before)


def _moe_a2a(d_model, top_k, dispatch_bytes=2, combine_bytes=2, ep=None, layers=1):
    return layers * moe.all_to_all_bytes_per_token(
        d_model, top_k, dispatch_bytes, combine_bytes_per_value=combine_bytes, ep_size=ep
    )


QUANTITIES |= {
    # moe (topic owner: moe): routing, capacity, balance losses, parameters and the all-to-all against core/moe.py
    # and core/model_spec.py
    "moe_router_prob": lambda logits, index: float(moe.softmax_router_probs(np.array([logits], dtype=float))[0, index]),
    "moe_topk_gate": lambda logits, k, rank: float(_moe_gates(logits, k)[rank]),
    "moe_gate_grad": _moe_gate_grad,
    "moe_capacity": lambda tokens, experts, top_k, cf: float(moe.expert_capacity(tokens, experts, top_k, cf)),
    "moe_dropped": _moe_dropped,
    "moe_aux_loss": _moe_aux_loss,
    "moe_bias_gate": lambda affinities, bias, k, rank: float(_moe_bias_routing(affinities, bias, k).gates[0, rank]),
    "moe_bias_expert": lambda affinities, bias, k, rank: float(_moe_bias_routing(affinities, bias, k).experts[0, rank]),
    "moe_bias_steps": _moe_bias_steps,
    "moe_combinations": _moe_combinations,
    "moe_expert_params": lambda d_model, d_expert, experts=1: float(
        moe.moe_layer_params(d_model, d_expert, experts, 1).routed
    ),
    "mixtral_params": lambda active=False: float(param_count(get_spec("Mixtral-8x7B"), active=active)),
    "mixtral_weight_bytes": lambda bytes: float(param_count(get_spec("Mixtral-8x7B")) * bytes),
    "mixtral_active_flops": lambda: float(
        2 * (param_count(get_spec("Mixtral-8x7B"), active=True) - param_breakdown(get_spec("Mixtral-8x7B")).embedding)
    ),
    "deepseek_v3_total_over_active": lambda: (
        get_spec("DeepSeek-V3").published_params / get_spec("DeepSeek-V3").published_active
    ),
    "moe_a2a_bytes": _moe_a2a,
    "moe_a2a_device_bytes": lambda d_model, top_k, experts, ep, dispatch_bytes=2, combine_bytes=2: (
        moe.all_to_all_bytes_per_token(
            d_model,
            top_k,
            dispatch_bytes,
            combine_bytes_per_value=combine_bytes,
            ep_size=ep,
            n_experts=experts,
            dedup=True,
        )
    ),
}


# -- training_lab (topic owner: training_lab): the tiny GPT's corpus, schedule and loss units through core
# (core/tiny_gpt.py, core/loss_units.py); Adam, AdamW and clipping through torch's own optimizer and clip_grad_norm_,
# the ones core.tiny_gpt.train uses; the uncorrected Adam step by running the moment recurrences from zero.


@functools.cache
def _tiny_split(split):
    train, val = tiny_gpt.split_bytes(tiny_gpt.corpus_bytes())
    return {"train": train, "val": val}[split]


def _tiny_unigram_nats(split="train"):
    counts = np.bincount(_tiny_split(split), minlength=256).astype(float)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def _tiny_lr_curve(steps=600, warmup=30, peak=3e-3):
    return tiny_gpt.lr_curve(tiny_gpt.TrainConfig(steps=steps, warmup=warmup, lr=peak, schedule="cosine"))


def _adam_uncorrected(beta1, beta2, t):
    m = v = 0.0
    for _ in range(t):  # a steady gradient of 1: the moments' recurrences from m_0 = v_0 = 0, no correction
        m, v = beta1 * m + (1 - beta1), beta2 * v + (1 - beta2)
    return m / v**0.5


def _adam_spike(field, spike, beta1=0.9, beta2=0.95):
    """torch's AdamW (no decay, eps 0) fed a gradient of 1 for 3,000 steps at lr 0, then one of ``spike`` at lr 1."""
    import torch

    w = torch.zeros(1, requires_grad=True)
    opt = torch.optim.AdamW([w], lr=0.0, betas=(beta1, beta2), eps=0.0, weight_decay=0.0)
    for _ in range(3000):
        w.grad = torch.ones(1)
        opt.step()
    w.grad = torch.full((1,), float(spike))
    opt.param_groups[0]["lr"] = 1.0
    before = w.detach().clone()
    opt.step()
    return {"step": float((before - w.detach())[0]), "v": float(opt.state[w]["exp_avg_sq"][0])}[field]


def _torch_clip(grads, max_norm):
    import torch

    params = [torch.zeros(1, requires_grad=True) for _ in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = torch.tensor([float(g)])
    norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
    return norm, [float(p.grad[0]) for p in params]


def _residual_init_std(std, layers):
    """The pooled standard deviation of the tiny GPT's initial W_o and W_2 (d_model 256, seed 0); std is core's 0.02."""
    assert std == 0.02
    params = tiny_gpt.init_params(tiny_gpt.GPTConfig(n_layer=layers, d_model=256, n_head=4), seed=0)
    pooled = np.concatenate([params[f"h{i}.{n}"].ravel() for i in range(layers) for n in ("wo", "w2")])
    return float(pooled.astype(np.float64).std())


def _init_std():
    """The pooled standard deviation of the tiny GPT's initial W_q, W_k, W_v (d_model 256, 4 layers, seed 0)."""
    params = tiny_gpt.init_params(tiny_gpt.GPTConfig(n_layer=4, d_model=256, n_head=4), seed=0)
    pooled = np.concatenate([params[f"h{i}.{n}"].ravel() for i in range(4) for n in ("wq", "wk", "wv")])
    return float(pooled.astype(np.float64).std())


def _decay_per_step(lr, wd):
    """One torch AdamW step with a zero gradient on a weight of 1: what the decoupled decay removes."""
    import torch

    w = torch.ones(1, requires_grad=True)
    opt = torch.optim.AdamW([w], lr=lr, weight_decay=wd)
    w.grad = torch.zeros(1)
    opt.step()
    return float(1 - w.detach()[0])


QUANTITIES |= {
    "nats_to_bits": lambda nats: float(loss_units.bits_per_byte(nats, 1)),
    # p = 1/V: the loss of a model that puts p on the right byte is the uniform loss over V outcomes
    "prob_to_nats": lambda p: loss_units.uniform_loss(round(1 / p)),
    "tiny_corpus_bytes": lambda split: float(len(_tiny_split(split))),
    "tiny_unigram_nats": _tiny_unigram_nats,
    "tiny_passes": lambda steps, batch, ctx: steps * batch * ctx / len(_tiny_split("train")),
    "tiny_lr": lambda step, steps=600, warmup=30, peak=3e-3: float(_tiny_lr_curve(steps, warmup, peak)[step - 1]),
    "weight_decay_shrink": lambda wd, steps=600, warmup=30, peak=3e-3: float(
        np.prod(1 - wd * _tiny_lr_curve(steps, warmup, peak))
    ),
    "ema_window": lambda beta: float(np.sum(beta ** np.arange(200_000, dtype=float))),
    "adam_uncorrected_factor": _adam_uncorrected,
    "adam_spike": _adam_spike,
    "clip_scale": lambda norm, max_norm: _torch_clip([norm], max_norm)[1][0] / norm,
    "clipped_component": lambda grads, max_norm, index: _torch_clip(grads, max_norm)[1][index],
    "global_norm": lambda norms: _torch_clip(norms, float("inf"))[0],
    "norm_share_pct": lambda norms, index: 100 * norms[index] ** 2 / _torch_clip(norms, float("inf"))[0] ** 2,
    "linear_scaling_lr": lambda base_lr, batch, base_batch: base_lr * (batch // base_batch),
    "residual_init_std": _residual_init_std,
    "bits_per_byte_from_tokens": lambda nats_per_token, bytes_per_token: float(
        loss_units.bits_per_byte(nats_per_token * 1000, round(bytes_per_token * 1000))
    ),
    "ideal_code_share_pct": lambda nats: 100 * float(loss_units.bits_per_byte(nats, 1)) / 8,
    "shipped_warmup_pct": lambda: 100 * tiny_gpt.SHIPPED_TRAIN.warmup / tiny_gpt.SHIPPED_TRAIN.steps,
    "lr_over_init_std": lambda lr: lr / _init_std(),
    "decay_per_step": _decay_per_step,
}


def _fmt(name):
    return number_formats.format_by_name(name)


def _fmt_running_sum(increment, fmt, steps=100_000):
    """core's running sum: the value after ``steps`` additions (a stalled sum stays where it stopped)."""
    return float(number_formats.running_sum(increment, _fmt(fmt), max_steps=steps).values[-1])


def _fmt_inf_from(fmt):
    f = _fmt(fmt)
    return f.largest + float(number_formats.ulp(f.largest, f)) / 2


def _fmt_round(x, fmt):
    return float(number_formats.round_to_format(x, _fmt(fmt)))


QUANTITIES |= {
    # number_formats (topic owner: number_formats): limits, rounding, the loss scaler, softmax and running sums
    # against core/number_formats.py
    "fmt_largest": lambda fmt: _fmt(fmt).largest,
    "fmt_smallest_normal": lambda fmt: _fmt(fmt).smallest_normal,
    "fmt_smallest_subnormal": lambda fmt: _fmt(fmt).smallest_subnormal,
    "fmt_unit_roundoff_pct": lambda fmt: 100 * _fmt(fmt).unit_roundoff,
    "fmt_cast": _fmt_round,
    "fmt_cast_error_pct": lambda x, fmt: 100 * float(number_formats.relative_error(x, _fmt(fmt))),
    "fmt_spacing": lambda x, fmt: float(number_formats.ulp(x, _fmt(fmt))),
    "fmt_half_spacing": lambda x, fmt: float(number_formats.ulp(x, _fmt(fmt))) / 2,
    "fmt_add": lambda a, b, fmt: _fmt_round(_fmt_round(a, fmt) + _fmt_round(b, fmt), fmt),
    "fmt_decades": lambda fmt: _fmt(fmt).dynamic_range_decades,
    # e^x is inf from ln(where a cast gives inf): the largest finite value plus half its spacing (the tie to even)
    "fmt_inf_from": lambda fmt: _fmt_inf_from(fmt),
    "fmt_exp_overflow": lambda fmt: float(np.log(_fmt_inf_from(fmt))),
    # half the spacing over the value just below a power of two: the smallest relative half-spacing, 2^-(p+2)
    "fmt_min_relative_half_spacing_pct": lambda fmt: 50 * _fmt(fmt).unit_roundoff,
    # an exponential moving average's per-step weight on the new value, 1 - beta, in percent
    "fmt_ema_step_pct": lambda beta: 100 * (1 - beta),
    # the tiny GPT's weight-gradient magnitudes at a percentile (core.number_formats_data's shipped arrays)
    "fmt_tiny_grad_pct": lambda pct: float(fmt_shipped()["grad/pct"][FMT_PERCENTILES.index(pct)]),
    "fmt_running_sum": _fmt_running_sum,
    "fmt_naive_mean_square": lambda d, value, fmt: _fmt_running_sum(value * value, fmt, d) / d,
    "fmt_naive_rms_factor": lambda d, value, fmt: float(
        np.sqrt(value * value / (_fmt_running_sum(value * value, fmt, d) / d))
    ),
    "fmt_scaler_default": lambda name: float(
        inspect.signature(number_formats.dynamic_loss_scaler).parameters[name].default
    ),
    # steps whose largest gradient overflows fp16 at any scale the rule reaches (1e10), then steps that never do (1e-3)
    "fmt_scaler_scale": lambda overflows, good: (
        number_formats.dynamic_loss_scaler([1e10] * overflows + [1e-3] * good).final_scale
    ),
    "fmt_softmax_prob": lambda logits, index, fmt: float(number_formats.softmax_stable(logits, _fmt(fmt))[index]),
    "fmt_naive_softmax_prob": lambda logits, index, fmt: float(number_formats.softmax_naive(logits, _fmt(fmt))[index]),
    "fmt_exp": lambda x: float(np.exp(x)),
    "fmt_logsumexp": lambda logits: float(number_formats.logsumexp(logits)),
    "fmt_log_softmax": lambda logits, index: float(number_formats.log_softmax(logits)[index]),
    "fmt_cross_entropy_nats": lambda logits, target: -float(number_formats.log_softmax(logits)[target]),
}


# -- optimizers (topic owner: optimizers): core/optimizers.py's trajectories, bias correction, effective samples and
# norms, and the shipped arrays through core.optimizers_data, as the page computes them; RAdam's first adaptive step
# through torch.optim.RAdam itself (core has no RAdam).


def _opt_run(surface, name, lr, steps, start=(-1.5, 1.0), wd=0.0, momentum=0.9):
    return optimizers.trajectory(surface, name, [lr], steps, start, momentum=momentum, weight_decay=wd)


def _core_first_step(optimizer, theta, grad, lr, wd):
    """One weight as the x of a bowl whose x-curvature is grad / theta (y starts and stays at 0)."""
    run = _opt_run(optimizers.quadratic(grad / theta), optimizer, lr, 1, (theta, 0.0), wd)
    return float(theta - run.positions[0, 1, 0])


def _core_valley_l2(wd, field, lr=0.1, steps=300):
    run = _opt_run(optimizers.rosenbrock(1.0, 10.0), "adam_l2", lr, steps, wd=wd)
    return {"x": run.positions[0, -1, 0], "y": run.positions[0, -1, 1], "loss": run.losses[0, -1]}[field]


def _core_stable_limit(kappa, momentum=0.0):
    """The largest step of a fine grid at which core's SGD (or heavy ball) ends below its starting loss."""
    s = optimizers.quadratic(kappa)
    hi = 2 * (1 + momentum) / kappa
    lrs = np.linspace(0.9 * hi, 1.1 * hi, 2001)
    name = "momentum" if momentum else "sgd"
    run = optimizers.trajectory(s, name, lrs, 4000, (-1.5, 1.0), momentum=momentum)
    ok = np.isfinite(run.losses[:, -1]) & (run.losses[:, -1] < run.losses[:, 0])
    return float(lrs[ok].max())


def _core_best_rate(kappa, momentum=False):
    """Core's run at the classical best settings, its contraction per step measured over steps 1000 -> 1001."""
    if momentum:
        r = (np.sqrt(kappa) - 1) / (np.sqrt(kappa) + 1)
        run = _opt_run(optimizers.quadratic(kappa), "momentum", 4 / (np.sqrt(kappa) + 1) ** 2, 1001, momentum=r * r)
        a, b = run.positions[0, 1000], run.positions[0, 1001]
    else:
        run = _opt_run(optimizers.quadratic(kappa), "sgd", 2 / (kappa + 1), 41)
        a, b = run.positions[0, 40], run.positions[0, 41]
    return float(np.linalg.norm(b) / np.linalg.norm(a))


def _torch_radam_first_adaptive(beta2):
    """torch.optim.RAdam on a steady gradient of 1 at lr 1: the un-adapted step is m-hat = 1, the rectified adaptive
    one is not; the first step whose size differs from 1."""
    import torch

    w = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.RAdam([w], lr=1.0, betas=(0.9, beta2), eps=0.0)
    for t in range(1, 100):
        before = float(w.detach()[0])
        w.grad = torch.ones(1, dtype=torch.float64)
        opt.step()
        if abs((before - float(w.detach()[0])) - 1.0) > 1e-9:
            return float(t)
    raise AssertionError("RAdam never adapted")


def _core_norm_stat(which, stat, shift=2.0, dim=8):
    x = np.random.default_rng(0).standard_normal(dim) + shift  # the page's vector (views/optimizers.py)
    y = {"x": x, "layernorm": optimizers.layer_norm(x), "rmsnorm": optimizers.rms_norm(x)}[which]
    return float(y.mean()) if stat == "mean" else float(np.sqrt((y * y).mean()))


def _core_mup(param, width, what):
    data = optimizers_shipped()
    row = data[f"sweep/{param}"][list(data["sweep/widths"]).index(width)]
    return float(data["sweep/lrs"][int(np.nanargmin(row))]) if what == "lr" else float(np.nanmin(row))


QUANTITIES |= {
    "opt_first_step": _core_first_step,
    "valley_l2_minimum": _core_valley_l2,
    "sgd_stable_limit": _core_stable_limit,
    "sgd_best_rate": lambda kappa: _core_best_rate(kappa),
    "heavy_ball_rate": lambda kappa: _core_best_rate(kappa, momentum=True),
    "bowl_final_loss": lambda optimizer, kappa, lr, steps: float(
        _opt_run(optimizers.quadratic(kappa), optimizer, lr, steps).losses[0, -1]
    ),
    "adam_uncorrected_peak": lambda beta1, beta2, field: (
        lambda bc: float(np.argmax(bc.uncorrected) + 1) if field == "step" else float(bc.uncorrected.max())
    )(optimizers.bias_correction_steps(5000, beta1, beta2)),
    "adam_n_eff": lambda t, beta2: float(optimizers.second_moment_effective_samples(t, beta2)[-1]),
    "adam_v_rel_std_pct": lambda t, beta2: (
        100 * float(np.sqrt(2 / optimizers.second_moment_effective_samples(t, beta2)[-1]))
    ),
    "adam_n_eff_limit": lambda beta2: float(optimizers.second_moment_effective_samples(100_000, beta2)[-1]),
    "radam_first_adaptive_step": _torch_radam_first_adaptive,
    "norm_stat": _core_norm_stat,
    "depth_grad": lambda init, norm, depth, block: float(optimizers_shipped()[f"grad/{init}/{norm}/L{depth}"][block]),
    "depth_grad_ratio": lambda init, num, den, depth, num_block=-1, den_block=-1: float(
        optimizers_shipped()[f"grad/{init}/{num}/L{depth}"][num_block]
        / optimizers_shipped()[f"grad/{init}/{den}/L{depth}"][den_block]
    ),
    "mup_best_lr": lambda param, width: _core_mup(param, width, "lr"),
    "mup_best_loss": lambda param, width: _core_mup(param, width, "loss"),
    "mup_coord": lambda param, width, layer=2, step=-1: float(
        optimizers_shipped()[f"coord/{param}"][list(optimizers_shipped()["coord/widths"]).index(width), step, layer]
    ),
    "adam_beta2_threshold": lambda beta1: 1 - (1 - beta1) ** 2,
    "adam_m_only_uncorrected": lambda beta1, t=1, field="step", level=0.99: (
        1 - beta1**t if field == "step" else float(np.ceil(np.log(1 - level) / np.log(beta1)))
    ),  # m_t = (1 - beta1^t) g from m_0 = 0; no core function computes it (core corrects both or neither)
    "adam_uncorrected_below_eta": lambda beta1, beta2, field="count": (
        lambda u: float(np.argmax(u >= 1) + (0 if field == "count" else 1))
    )(optimizers.bias_correction_steps(5000, beta1, beta2).uncorrected),
    "adam_step_bound": lambda t, beta1, beta2: optimizers.adam_step_bound(t, beta1, beta2),
    "mup_loss_at_lr": lambda param, width, lr_index: float(
        optimizers_shipped()[f"sweep/{param}"][list(optimizers_shipped()["sweep/widths"]).index(width), lr_index]
    ),
}

# -- policy_gradient (topic owner: policy_gradient): core/policy_gradient.py's exact moments on the page's bandit
# (theta = log pi, so that softmax(theta) = pi, as views/policy_gradient.py sets it).


def _pg(pi, r=None):
    theta = np.log(np.array(pi, dtype=float))
    return (theta,) if r is None else (theta, np.array(r, dtype=float))


def _pg_moments(pi, r, estimator, G=1, b=0.0):
    return policy_gradient.estimator_moments(*_pg(pi, r), estimator, G, b=b)


def _pg_trcov(pi, r, estimator, G=1, b=0.0, per="abs"):
    tr = _pg_moments(pi, r, estimator, G, b).total_variance
    grad = policy_gradient.policy_gradient(*_pg(pi, r))
    return tr / float(grad @ grad) if per == "grad" else tr


def _pg_on_grad(pi, r, estimator, G=1, field="scale"):
    m = _pg_moments(pi, r, estimator, G)
    grad = policy_gradient.policy_gradient(*_pg(pi, r))
    cosine, scale = policy_gradient.alignment(m.mean, grad)
    if field != "snr":
        return scale if field == "scale" else cosine
    return scale / (float(np.sqrt(grad @ m.covariance @ grad)) / float(grad @ grad))


def _pg_per_parameter_trcov(pi, r):
    """Each logit's own best constant b_k = E[r s_k^2] / E[s_k^2] (core has one constant only), from core's score."""
    (theta, rv), p = _pg(pi, r), policy_gradient.softmax_policy(_pg(pi)[0])
    s = policy_gradient.score_function(theta)  # (answer, logit)
    w = p[:, None] * s**2
    b = (w * rv[:, None]).sum(axis=0) / w.sum(axis=0)
    grad = policy_gradient.policy_gradient(theta, rv)
    return float(((w * (rv[:, None] - b[None, :]) ** 2).sum(axis=0) - grad**2).sum())


QUANTITIES |= {
    "pg_expected_reward": lambda pi, r: policy_gradient.expected_reward(*_pg(pi, r)),
    "pg_gradient": lambda pi, r, k: float(policy_gradient.policy_gradient(*_pg(pi, r))[k]),
    "pg_score": lambda pi, a, k: float(policy_gradient.score_function(*_pg(pi))[a, k]),
    "pg_score_sq_norm": lambda pi, a: float((policy_gradient.score_function(*_pg(pi))[a] ** 2).sum()),
    "pg_score_sq_mean": lambda pi: float(np.array(pi) @ (policy_gradient.score_function(*_pg(pi)) ** 2).sum(axis=1)),
    "pg_baseline_term": lambda pi, b, a, k: pi[a] * b * float(policy_gradient.score_function(*_pg(pi))[a, k]),
    "pg_baseline_sum": lambda pi, b, k: float(policy_gradient.baseline_contribution(*_pg(pi), b)[k]),
    "pg_optimal_baseline": lambda pi, r: policy_gradient.optimal_baseline(*_pg(pi, r)),
    "pg_trcov": _pg_trcov,
    "pg_trcov_gap": lambda pi, r, estimator, other, G=1: _pg_trcov(pi, r, estimator, G) - _pg_trcov(pi, r, other, G),
    "pg_trcov_ratio": lambda pi, r, num, den, G: _pg_trcov(pi, r, num, G) / _pg_trcov(pi, r, den, G),
    "pg_on_grad": _pg_on_grad,
    "pg_per_parameter_trcov": _pg_per_parameter_trcov,
    "pg_norm_binary": lambda p, G, std="population": float(policy_gradient.group_norm_scale_binary(p, G, std)),
    "pg_norm_binary_ratio": lambda p, q, G: float(
        policy_gradient.group_norm_scale_binary(p, G) / policy_gradient.group_norm_scale_binary(q, G)
    ),
    "pg_norm_binary_limit": lambda G: float(policy_gradient.group_norm_scale_binary(1e-9, G)),
    "pg_sample_std_factor": lambda G: float(
        policy_gradient.group_norm_scale_binary(0.5, G) / policy_gradient.group_norm_scale_binary(0.5, G, "sample")
    ),
}


def _ttc_samples_needed(p, target, field="whole"):
    """The smallest whole n whose best-of-n success (core) reaches ``target``, or the real n where it equals it (core's
    1 - (1 - p)^n for a real n)."""
    if field == "real":
        return brentq(lambda n: float(evaluation.pass_at_k_true(p, n)) - target, 1, 1e6)  # real n: core's pass@n
    return next(n for n in range(1, 10**6) if float(test_time_compute.best_of_n_success(p, n)) >= target)


@functools.cache
def _ttc_split(budget, queries, tokens=1000.0):
    """Core's compute-split toy at one budget and query count: the best share, and its model's size and tokens per
    parameter at the highest accuracy (the page's readouts)."""
    s = test_time_compute.compute_split(budget, queries, tokens)
    i = int(np.nanargmax(s.accuracy))
    return {
        "share": float(s.best_share),
        "params": float(s.params[i]),
        "tokens_per_param": float(s.tokens_per_param[i]),
    }


QUANTITIES |= {
    "ttc_verifier_success": lambda p, n: float(test_time_compute.best_of_n_success(p, n)),
    "ttc_all_miss": lambda p, n: 1.0 - float(test_time_compute.best_of_n_success(p, n)),
    "ttc_split": lambda budget, queries, field, tokens=1000.0: _ttc_split(budget, queries, tokens)[field],
    "ttc_samples_needed": _ttc_samples_needed,
    "ttc_bon_kl_formula": lambda n: float(test_time_compute.best_of_n_kl_formula(n)),
    "ttc_bon_kl_exact": lambda probs, rewards, n: test_time_compute.best_of_n_kl(probs, rewards, n),
    "ttc_gold": lambda n, alpha=1.0, beta=0.25: float(
        test_time_compute.over_optimisation_curve([n], alpha, beta).gold[0]
    ),
    "ttc_gold_peak": lambda field, alpha=1.0, beta=0.25: float(
        getattr(test_time_compute.over_optimisation_peak(alpha, beta), field)
    ),
    "ttc_majority_vote": lambda p, n, m: float(test_time_compute.majority_vote_accuracy(p, n, m)),
    "ttc_plurality_threshold": lambda m: 1 / (m + 1),
    "ttc_breakeven_tokens": lambda D: float(scaling.training_flops(1.0, D)) / scaling.SERVING_FLOPS_PER_PARAM,
    "ttc_breakeven_answers": lambda D, T: float(scaling.training_flops(1.0, D)) / scaling.SERVING_FLOPS_PER_PARAM / T,
}


@functools.cache
def _dist_fits(d, w=0.5, k=1):
    return distillation.kl_fits(float(d), weight=float(w), components=int(k))


def _dist_local_kl(d, w, start):
    """Core's reverse-KL local optimum (one Gaussian) on the left mode, the right mode or in the middle."""
    side = {"left": lambda m: m < -1, "right": lambda m: m > 1, "middle": lambda m: abs(m) <= 1}[start]
    return next(kl for m, _, kl in _dist_fits(d, w).reverse.local_optima if side(m))


def _dist_jump(w=0.5, lo=5.5, hi=6.0):
    """Bisection on d for where core's best reverse fit leaves the middle (the page's drag steps bracket it)."""
    for _ in range(9):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if abs(_dist_fits(mid, w).reverse.mean) < 1 else (lo, mid)
    return (lo + hi) / 2


def _dist_toy_mass(method, which, eps=0.0):
    """q(A A) or q(A A) + q(B B) of core's students; "gkd": q1 the teacher's marginal, q2 the minimiser of the
    expected token-level reverse KL on those prefixes (core's kl_divergence)."""
    if method == "gkd":
        from scipy.optimize import minimize_scalar

        p = np.asarray(distillation.TOY_TEACHER, dtype=float)
        q1, cond = p.sum(axis=1), p / p.sum(axis=1, keepdims=True)

        def loss(a):
            return sum(q1[i] * distillation.kl_divergence([a, 1 - a], cond[i]) for i in range(2))

        a = minimize_scalar(loss, bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-12}).x
        q = np.outer(q1, [a, 1 - a])
        return float(q[0, 0] if which == "mode" else np.trace(q))
    key = {"token-level": "token-level", "sequence-level": "sequence-level", "whole-sequence": "on-policy"}[method]
    st = distillation.sequence_distillation(distillation.TOY_TEACHER, smoothing=eps)[key]
    return st.mode_mass if which == "mode" else st.coherent_mass


QUANTITIES |= {
    # distillation (topic owner: distillation): the fits, the soft targets and the toy against core/distillation.py
    "dist_forward_sd": lambda d, w=0.5: float(np.sqrt(_dist_fits(d, w).forward.variance)),
    "dist_fit_kl": lambda d, fit, direction, w=0.5: float(getattr(getattr(_dist_fits(d, w), fit), f"{direction}_kl")),
    "dist_reverse_local_kl": _dist_local_kl,
    "dist_reverse_jump": _dist_jump,
    "dist_soft_top": lambda logits, T: float(distillation.soft_targets(logits, T).max()),
    "dist_soft_entropy": lambda logits, T: float(distillation.soft_target_entropy(logits, T)),
    "dist_grad_norm": lambda student, teacher, T, scaled: float(
        np.linalg.norm(distillation.soft_loss_gradient(student, teacher, T, scaled=scaled))
    ),
    "dist_limit_grad_norm": lambda student, teacher: float(
        distillation.temperature_sweep(student, teacher, [1.0]).limit_grad_norm
    ),
    "dist_toy_mass": _dist_toy_mass,
}


def _cal_ece_bins(counts, confidences, right):
    """Core's ECE (10 equal-width bins) on the predictions the per-bin counts describe."""
    c = np.concatenate([np.full(m, conf) for m, conf in zip(counts, confidences, strict=True)])
    a = np.concatenate([np.r_[np.ones(r), np.zeros(m - r)] for m, r in zip(counts, right, strict=True)])
    return calibration.expected_calibration_error(c, a, 10)


def _cal_single_bin_bias(n, c=0.5):
    """Core's one-bin ECE of n predictions at c with k right, averaged over k ~ Binomial(n, c) (scipy's pmf)."""
    from scipy.stats import binom

    conf = np.full(n, c)
    return sum(
        binom.pmf(k, n, c) * calibration.expected_calibration_error(conf, np.r_[np.ones(k), np.zeros(n - k)], 1)
        for k in range(n + 1)
    )


def _cal_brier_constant(c, rate):
    """The Brier score of a constant forecast c on 1,000 questions, a share ``rate`` right (core has no Brier)."""
    right = np.r_[np.ones(round(1000 * rate)), np.zeros(1000 - round(1000 * rate))]
    return float(np.mean((c - right) ** 2))


QUANTITIES |= {
    "cal_ece_bins": _cal_ece_bins,
    "cal_power_population_ece": lambda gamma, a=5.0, b=2.0, n_bins=10: calibration.expected_ece_power(
        gamma, a, b, n_bins
    ),
    "cal_single_bin_bias": _cal_single_bin_bias,
    "cal_tuned_accuracy": lambda stated, kappa: float(calibration.tuned_accuracy(stated, kappa)),
    "cal_sharpen": lambda c, kappa: float(calibration.sharpen(c, kappa)),
    "cal_softmax_top": lambda logits, T=1.0: float(calibration.confidences(np.array([logits]), np.array([0]), T)[0][0]),
    "cal_brier_constant": _cal_brier_constant,
    "cal_brier_two_class": lambda c, rate: 2 * _cal_brier_constant(c, rate),
    "cal_em_crossing": lambda tau, k, alpha=0.5, x0=22.0: calibration.exact_match_crossing(tau, k, alpha, x0),
    "cal_em_delay": lambda k, alpha=0.5: (
        calibration.exact_match_crossing(0.5, k, alpha) - calibration.exact_match_crossing(0.5, 1, alpha)
    ),
    "cal_em_per_token": lambda tau, k: float(
        calibration.per_token_accuracy(calibration.exact_match_crossing(tau, k), 0.5, 22.0)
    ),
}

# Each page's state spec: a card's link must parse without a problem, as the page would open it.
VIEW_OF = {
    m.SPEC.page: m
    for m in (importlib.import_module(f"views.{i.name}") for i in pkgutil.iter_modules(views.__path__))
    if hasattr(m, "SPEC")
}
SPECS = {page: m.SPEC for page, m in VIEW_OF.items()}


def test_every_shipped_card_loads_without_problems():
    assert PROBLEMS == []
    assert len(CARDS) >= 80
    assert len(IDS) == len(set(IDS))


def test_every_card_has_all_four_parts_a_follow_up_a_trap_and_a_source():
    for card in CARDS:
        assert all(getattr(card.answer, part) for part in ANSWER_PARTS), card.id
        assert card.follow_ups and card.traps and card.source, card.id
        assert card.id.startswith(card.topic + "-"), card.id
        assert card.file == f"cards/{card.topic}.toml", card.id


def test_every_number_is_checked_against_core_or_cites_its_source():
    for card in CARDS:
        assert card.checks or card.number_source, f"{card.id}: no check and no number_source"


def test_pages_are_every_view_that_draws_figures():
    drawn = {page for page, spec in SPECS.items() if hasattr(VIEW_OF[page], "figures")}
    assert set(PAGES) == drawn
    assert {"Sampling", "PPO", "Reward_model", "Serving", "Loss_and_units", "Training_memory", "Schedules"} <= drawn
    assert "Drills" not in PAGES and "Deck" not in PAGES


def test_every_page_has_a_card_that_opens_it():
    assert {card.view.page for card in CARDS if card.view.page} == set(PAGES)


def test_a_card_without_a_view_says_why_in_its_file():
    for card in CARDS:
        if card.view.page:
            continue
        text = (ROOT / card.file).read_text(encoding="utf-8")
        block = text[text.index(f'id = "{card.id}"') :].split("[[card]]")[0]
        assert "# No page" in block, f"{card.id}: no view and no comment saying why"


@pytest.mark.parametrize("card", CARDS, ids=IDS)
def test_card_links_use_parameters_and_values_the_page_accepts(card):
    if not card.view.page:
        assert not card.view.params
        return
    assert card.view.page in PAGES and card.view.page in SPECS
    spec = SPECS[card.view.page]
    query = dict(card.view.params)
    state, problems = spec.parse(query)
    assert problems == [], f"{card.id}: {problems}"
    assert set(spec.query(state)) <= set(query), f"{card.id}: the link names fields by their current names"
    # the link opens its view: figures() draws it without a warning, and the figure the card names is there
    request = drills.card_figure(card, answer_shown=True)
    assert request is not None and request.state == state
    view = VIEW_OF[card.view.page].figures(request.state, request.options())
    assert [text for kind, text in view.notices if kind == "warning"] == [], card.id
    name = drills.pick_figure(request, view)
    assert name is not None and view.figures[name].data, f"{card.id}: no figure drawn"
    if card.view.figure:
        assert name == card.view.figure


CHECKS = [(card, i, check) for card in CARDS for i, check in enumerate(card.checks)]


@pytest.mark.parametrize(("card", "i", "check"), CHECKS, ids=[f"{c.id}[{i}]" for c, i, _ in CHECKS])
def test_card_numbers_match_core(card, i, check):
    assert check.what in QUANTITIES, f"{card.id}: unknown quantity {check.what!r}"
    got = QUANTITIES[check.what](**check.kwargs)
    # core's number must print as the card prints it: half a unit in the last digit shown (parse_shown)
    assert check.shown in card.text, f"{card.id}: {check.shown!r} is not in the card's text"
    printed, unit = parse_shown(check.shown), unit_of(check.what, check.kwargs)
    lo, hi = (float(printed.value(unit) + sign * printed.half(unit)) for sign in (-1, 1))
    assert printed.matches(float(got), unit), (
        f"{card.id} {check.what}{check.kwargs}: core {got!r}, the card prints {check.shown!r} (allowed [{lo}, {hi}])"
    )


def test_seed_003_fine_tuning_questions_have_cards():
    by_source = {c.source.split(";")[0]: c for c in CARDS}
    for q in ("003 Q10", "003 Q11", "003 Q12"):
        card = by_source[q]
        assert card.view.page in ("LoRA", "Loss_and_units"), card.id
    assert "forgetting" in by_source["003 Q10"].answer.sentence.lower()
    assert "mask" in by_source["003 Q11"].answer.sentence.lower()


def test_corrected_wording_is_used():
    text = "\n".join(c.text.lower() for c in CARDS)
    assert "beta is the length of the leash" not in text
    assert "leash length is 1/beta" in text
    kv = next(c for c in CARDS if c.id == "attention-04")
    assert "not decoding speed-ups" in kv.text


# ------------------------------------------------------------------------------------------------ bad files

GOOD = """
[[card]]
id = "t-01"
question = "Q?"
follow_ups = ["f"]
traps = ["t"]
source = "001 §9"
[card.answer]
sentence = "s"
equation = 'x'
number = "1"
trade_off = "t"
"""


def _write(tmp_path, name, text):
    (tmp_path / name).write_text(text, encoding="utf-8")


def test_a_good_card_file_loads(tmp_path):
    _write(tmp_path, "t.toml", 'topic = "t"\n' + GOOD)
    cards, problems = load_cards(tmp_path)
    assert problems == [] and [c.id for c in cards] == ["t-01"] and cards[0].topic == "t"
    assert cards[0].view.url() == ""


def test_a_missing_field_names_the_card_and_field_and_the_others_load(tmp_path):
    bad = GOOD.replace("t-01", "t-02").replace('number = "1"\n', "")
    _write(tmp_path, "t.toml", 'topic = "t"\n' + GOOD + bad)
    cards, problems = load_cards(tmp_path)
    assert [c.id for c in cards] == ["t-01"]
    assert problems == [f"{tmp_path.name}/t.toml, card 't-02': field 'answer.number' is missing"]


def test_a_wrong_type_names_the_field(tmp_path):
    bad = GOOD.replace("t-01", "t-02").replace('traps = ["t"]', 'traps = "t"')
    _write(tmp_path, "t.toml", 'topic = "t"\n' + bad + GOOD)
    cards, problems = load_cards(tmp_path)
    assert [c.id for c in cards] == ["t-01"]
    assert len(problems) == 1 and "card 't-02': field 'traps' must be an array of strings, not a string" in problems[0]


def test_bad_toml_skips_that_file_only(tmp_path):
    _write(tmp_path, "a.toml", 'topic = "t"\n' + GOOD)
    _write(tmp_path, "b.toml", "[[card]]\nid = 'oops\n")
    cards, problems = load_cards(tmp_path)
    assert [c.id for c in cards] == ["t-01"]
    assert len(problems) == 1 and problems[0].startswith(f"{tmp_path.name}/b.toml: not valid TOML")


def test_a_duplicate_id_keeps_the_first(tmp_path):
    _write(tmp_path, "a.toml", 'topic = "t"\n' + GOOD)
    _write(tmp_path, "b.toml", 'topic = "t"\n' + GOOD.replace('"Q?"', '"Other?"'))
    cards, problems = load_cards(tmp_path)
    assert [c.question for c in cards] == ["Q?"]
    assert problems == [f"{tmp_path.name}/b.toml, card 't-01': duplicate id (first in {tmp_path.name}/a.toml); skipped"]


def test_bad_views_and_checks_are_named(tmp_path):
    bad = GOOD + '[card.view]\npage = "Nowhere"\nparams = { C = 1 }\n[[card.checks]]\nargs = { N = 1 }\nvalue = "x"\n'
    _write(tmp_path, "t.toml", 'topic = "t"\n' + bad)
    cards, problems = load_cards(tmp_path)
    assert cards == [] and len(problems) == 1
    for part in (
        "field 'view.page' is 'Nowhere'",
        "field 'view.params.C' must be a string",
        "checks[0].what' is missing",
        "field 'checks[0].value' must be a number, not a string",
    ):
        assert part in problems[0]


def test_a_check_must_print_its_number_and_has_no_tolerance(tmp_path):
    """Every checked number is compared at the precision the card prints it, so ``shown`` is required and the old
    per-check ``tol`` (which once hid 2.476 against 2.475) is an unknown field."""
    check = '[[card.checks]]\nwhat = "training_flops"\nargs = { N = 1e9, D = 1e11 }\nvalue = 6e20\n'
    _write(tmp_path, "t.toml", 'topic = "t"\n' + GOOD + check + "tol = 0.1\n")
    cards, problems = load_cards(tmp_path)
    assert cards == [] and len(problems) == 1
    assert "field 'checks[0].tol' is unknown" in problems[0] and "field 'checks[0].shown' is missing" in problems[0]
    _write(tmp_path, "t.toml", 'topic = "t"\n' + GOOD + check + 'shown = "6e20"\n')
    cards, problems = load_cards(tmp_path)
    assert problems == [] and cards[0].checks[0].shown == "6e20"


def test_an_unknown_field_and_a_card_without_id(tmp_path):
    _write(tmp_path, "t.toml", 'topic = "t"\n' + GOOD.replace('id = "t-01"\n', 'colour = "red"\n'))
    cards, problems = load_cards(tmp_path)
    assert cards == [] and problems[0].startswith(f"{tmp_path.name}/t.toml, card #1 (no id): ")
    assert "field 'colour' is unknown" in problems[0] and "field 'id' is missing" in problems[0]


def test_a_missing_folder_is_one_problem(tmp_path):
    cards, problems = load_cards(tmp_path / "none")
    assert cards == [] and len(problems) == 1 and "no such folder" in problems[0]
