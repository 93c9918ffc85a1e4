"""viz.style and every figure builder: valid plotly, readable in both themes, large type in presenter mode.

One registry holds an example call of every public ``*_figure`` builder in viz/ (inputs from core). Each is built
in the light and the dark theme, with presenter mode off and on, and checked:

- against plotly's schema (the builders skip validation for speed: ``go.Figure(fig.to_dict())`` validates);
- for contrast (WCAG 2.1): every text colour >= 4.5:1 against what lies behind it (criterion 1.4.3), every line
  and mark >= 3:1 against the figure background (criterion 1.4.11). Relative luminance and the ratio are computed
  here from the WCAG definitions, independently of viz.style; translucent colours are composited over the
  background first;
- in presenter mode, for type of at least 16 px everywhere (the back of a room, at 1280 x 720).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

import viz
from core import (
    attention,
    evaluation,
    kv_cache,
    lora,
    lora_layer,
    lora_memory,
    loss_units,
    ppo,
    reward_model,
    sampling,
    scaling,
    schedules,
    serving,
    tokenizer,
    toy_attention,
    training_memory,
)
from core.dpo import dpo_curve, dpo_loss
from core.grpo import batch_normalised_advantages, expected_abs_advantage, group_signal_probability, grpo_advantages
from core.hardware import GIB, GPUS
from core.kl_leash import LEASH_PRESETS, beta_grid, leash_sweep, random_policies
from core.model_spec import CUSTOM, LLAMA3_8B
from views import Options, catalog
from viz import attention as attention_viz
from viz import style
from viz.attention import (
    attention_figure,
    attention_kv_cache_figure,
    attention_mask_figure,
    attention_outputs_figure,
    attention_scale_figure,
)
from viz.calibration import emergence_figure, power_figure, reliability_figure, temperature_scaling_figure
from viz.class_guesses import choices_figure, guesses_figure
from viz.distillation import kl_figure, sequence_figure, temperature_figure
from viz.dpo import dpo_figure
from viz.evaluation import (
    comparison_figure,
    comparison_figure_of,
    curve_figures,
    pass_at_k_figure,
    pass_hat_k_figure,
    simulation_figure,
    simulation_figure_of,
)
from viz.flash_attention import backward_memory_figure, hbm_traffic_figure, tiles_figure
from viz.grpo import grpo_advantages_figure, grpo_batch_contrast_figure, grpo_difficulty_figure, ppo_vs_grpo_figure
from viz.kl_leash import kl_hacking_figure, kl_leash_figure, kl_sweep_figure, kl_theorem_figure
from viz.lora import lora_curves_figure, lora_heatmaps_figure, lora_memory_figure, lora_training_figure
from viz.loss_units import (
    bpe_merges_figure,
    packing_mask_figure,
    padding_figure,
    sft_mask_figure,
    tokenizer_units_figure,
)
from viz.moe import balance_figure, parameters_figure, routing_figure, with_panel_line
from viz.number_formats import loss_scale_figure, running_sum_figure, softmax_figure, spacing_figure
from viz.optimizers import bias_figure, depth_figure, mup_figure, norm_figure, trajectory_figure, warmup_figure
from viz.policy_gradient import group_figure, learning_figure, spread_figure, zero_figure
from viz.positions import decay_figure, relative_figure, wavelength_figure
from viz.ppo import (
    clip_batch_figure,
    gae_bias_variance_figure,
    gae_figure,
    kl_estimators_figure,
    ppo_clip_figure,
    rlhf_memory_figure,
)
from viz.predict import predict_figure, with_guess
from viz.reward_model import accuracy_noise_figure, bradley_terry_figure, length_bias_figure
from viz.sampling import generation_figure, order_figure, sampling_figure
from viz.scaling import isoflop_family_figure, isoflop_figure
from viz.schedules import kaplan_figure, mixture_figure, schedule_figure, wsd_branch_figure, wsd_name
from viz.serving import kv_capacity_figure, roofline_figure, speculative_figure
from viz.test_time_compute import best_of_n_figure, pass_per_compute_figure, split_figure, vote_figure
from viz.training_lab import lab_figure, series
from viz.training_memory import pipeline_bubble_figure, training_memory_figure

THEMES = ("light", "dark")

# ----------------------------------------------------------------------------------------------------------------
# example inputs (small, built once)


@functools.cache
def _scaling():
    return scaling.isoflop_study(2.7343872e20, 1.5e9)


@functools.cache
def _leash():
    p = LEASH_PRESETS["toy"]
    return p, leash_sweep(p.pi_ref, p.r, beta_grid(31, include=p.beta), p.r_true)


@functools.cache
def _hacking():
    p = LEASH_PRESETS["k5"]  # a proxy gap: the peak, its label over the curves
    return p, leash_sweep(p.pi_ref, p.r, beta_grid(31, include=p.beta), p.r_true)


@functools.cache
def _cloud():
    p, _sweep = _leash()
    return random_policies(p.pi_ref, p.r, p.beta, n=400, seed=1, device="cpu")


@functools.cache
def _lora():
    s = lora.svd(lora.make_target(48, 40, "exponential", 1, decay=6.0))
    curves = lora.rank_curves(s)
    return curves, lora.display_frames(s, lora.slider_ranks(s.m, 6, include=[4]))


@functools.cache
def _lora_runs():
    cfg = lora_layer.TrainConfig(d=12, k=10, r=2, alpha=4.0, target_rank=4, n_samples=30, steps=20, lr=0.05)
    return lora_layer.train_all_inits(cfg, inits=("B0", "zeros", "both_random"))


@functools.cache
def _words():
    return tuple(tokenizer.DEFAULT_TEXT.split())


def _grpo_adv(**kw):
    r = np.array([1, 0, 0, 1, 1, 0, 0, 0], dtype=float)
    return grpo_advantages_figure(r, grpo_advantages(r), mean=float(r.mean()), denominator=0.48, **kw)


def _grpo_no_signal(**kw):  # every advantage 0: the warning annotation on its own background
    r = np.ones(4)
    return grpo_advantages_figure(r, np.zeros(4), mean=1.0, **kw)


def _pass_curves():
    return evaluation.pass_at_k_curves(200, 20, 10)


def _simulation():
    return evaluation.simulate_estimators(0.3, 10, 5, 2000, seed=2)


def _comparisons():
    return [
        evaluation.compare_models(0.71, 0.725, 1000),
        evaluation.compare_models(0.71, 0.725, 1000, only_a=15, only_b=30),
    ]


@functools.cache
def _mask_comparison():
    qkv = toy_attention.toy_qkv(_words(), toy_attention.ToyModelSettings())
    return attention.mask_comparison(qkv.q[0], qkv.k[0])


@functools.cache
def _stats():
    return attention.logit_statistics((1, 4, 16), tokens=16, d_model=64)


@functools.cache
def _toy(**settings):
    return toy_attention.toy_attention(_words(), toy_attention.ToyModelSettings(**settings))


def _mask(**kw):
    cmp = _mask_comparison()
    return attention_mask_figure(cmp.correct, cmp.buggy, _words(), **kw)


def _scale(**kw):
    stats = _stats()
    return attention_scale_figure(
        stats.d_k, stats.variance, stats.entropy, stats.max_entropy, expected_variance=stats.expected_variance,
        current_d_k=4, **kw,
    )  # fmt: skip


def _kv(**kw):
    totals = [kv_cache.kv_cache_bytes(80, h, 128, 2, tokens=131072) for h in (64, 8, 1)]
    return attention_kv_cache_figure(
        ["MHA", "GQA", "MQA"], totals, context_tokens=131072, memory_limit_bytes=80e9, **kw
    )


def _dpo(**kw):
    pair = dpo_loss(-10.0, -15.0, -12.0, -14.0, 0.1)
    return dpo_figure(*dpo_curve(pair.margin), pair.margin, pair.loss, pair.weight, both_fell=True, **kw)


def _heads(**kw):
    res = _toy(heads=4, kv_heads=2)
    return attention_figure(res.weights, _words(), res.head_names, **kw)


def _outputs(**kw):
    res = _toy(d_k=8, d_model=32)
    return attention_outputs_figure(res.outputs, _words(), res.head_names, **kw)


def _memory(**kw):
    states = [training_memory.state_memory(7e9, zero=z, dp=8) for z in range(4)]
    comps = {
        "weights": [s.weights for s in states],
        "gradients": [s.gradients for s in states],
        "optimizer states": [s.optimizer for s in states],
        "activations": [10 * GIB] * 4,
    }
    labels = ["ZeRO-0", "ZeRO-1", "ZeRO-2", "ZeRO-3"]
    h100 = GPUS["H100"]
    return training_memory_figure(labels, comps, h100.memory_bytes, "H100", chosen=1, gb_misread_bytes=80e9, **kw)


def _bubble(**kw):
    m = np.arange(1, 65)
    bubbles = {p: training_memory.pipeline_bubble(p, m) for p in (2, 4, 8)}
    return pipeline_bubble_figure(m, bubbles, (8, 8, 7 / 15), target=0.1, **kw)


def _roofline(**kw):
    h, x, batches = GPUS["H100"], np.logspace(-1, 4, 60), np.array([1, 16, 256])
    step = serving.forward_step(LLAMA3_8B, "H100", batches, 1, 1024)
    prefill = serving.forward_step(LLAMA3_8B, "H100", 1, 2048, 0)
    return roofline_figure(
        x, serving.attainable_flops(x, "H100"), h.peak_flops, h.bandwidth, "H100",
        points=[("prefill 2,048", float(prefill.intensity), float(prefill.flops / prefill.seconds)),
                ("decode", float(step.intensity[0]), float(step.flops[0] / step.seconds[0]))],
        decode_curve=(batches, step.intensity, step.flops / step.seconds),
        sparse_attainable=serving.attainable_flops(x, "H100", sparse=True), **kw,
    )  # fmt: skip


def _speculative(**kw):
    a, b = np.linspace(0, 1, 11), np.array([1, 64, 4096])
    exp = {k: serving.expected_tokens_per_forward(a, k) for k in (1, 4)}
    sp = {k: serving.speculative_speedup_vs_batch(0.8, k, b, LLAMA3_8B, CUSTOM, context=256) for k in (1, 4)}
    return speculative_figure(a, exp, b, sp, (0.8, 4, float(serving.expected_tokens_per_forward(0.8, 4))), **kw)


def _kv_capacity(**kw):
    ctx, lengths, kvpt = np.array([1024, 4096, 16384]), np.full(50, 200), 320 * 1024
    pairs = [serving.sequences_by_allocator(170 * 2**30, kvpt, np.minimum(lengths, c), int(c)) for c in ctx]
    waste = serving.allocation_waste(lengths, 4096)
    return kv_capacity_figure(
        ctx, [p[0] for p in pairs], [p[1] for p in pairs], (4096, *pairs[1]), waste=(waste.contiguous, waste.paged),
        trap=("MHA", [p[0] / 8 for p in pairs]), **kw,
    )  # fmt: skip


def _gae(**kw):
    p, lams = ppo.GAE_PRESETS["sparse"], [0.0, 0.5, 0.9, 0.95, 1.0]
    A = np.stack([ppo.gae(p.rewards, p.values, p.gamma, lm) for lm in lams])
    return gae_figure(p.rewards, p.values, ppo.td_errors(p.rewards, p.values, p.gamma), lams, A, lam=0.95, **kw)


def _kl_estimators(**kw):
    r = np.geomspace(0.1, 10, 41)
    study = ppo.kl_estimator_study([0.5, 0.3, 0.15, 0.05], [0.2, 0.3, 0.3, 0.2], n=200)
    return kl_estimators_figure(study, r, ppo.kl_estimators(np.zeros_like(r), np.log(r)), **kw)


@functools.cache
def _bt():
    true = np.array([-1.0, 0.0, 0.5, 1.5])
    pairs = reward_model.sample_pairs(true, 200, seed=0)
    fit = reward_model.bradley_terry_fit(pairs, n_items=4)
    return true, fit, reward_model.bradley_terry_nll(fit.rewards + 3.0, pairs)


def _bradley_terry(**kw):
    true, fit, shifted = _bt()
    m = np.linspace(-6, 6, 61)
    return bradley_terry_figure(
        fit, true, m, reward_model.preference_probability(m, 0.0), shift=3.0, shifted_nll=shifted, **kw
    )


@functools.cache
def _tokenizers():
    return loss_units.compare_tokenizers()


def _generations(**kw):
    W = sampling.markov_logits(12, 0)
    gens = {
        "greedy": sampling.generate_markov(W, 3, 30),
        "T = 1, top-p 0.9": sampling.generate_markov(W, 3, 30, 1.0, top_p=0.9),
    }
    return generation_figure(gens, **kw)


_VOCAB = sampling.VOCAB_PRESETS["keeper"]
_LRS = {"cosine": schedules.lr_schedule("cosine", 2000), "WSD": schedules.lr_schedule("wsd", 2000)}

p_grid = np.linspace(0, 1, 101)
# name -> a call taking theme= and presenter=; the name is the builder's (a suffix after ":" tells variants apart)
EXAMPLES: dict[str, Callable[..., go.Figure]] = {
    "isoflop_figure": lambda **kw: isoflop_figure(
        *(lambda s: (s.curve, s.current, s.slider, s.slider_active))(_scaling()),
        "Hoffmann", ("Epoch", _scaling().other.N_opt), **kw,
    ),
    "isoflop_family_figure": lambda **kw: isoflop_family_figure(
        *(lambda s: (s.budgets, s.family_N, s.family_loss, s.family_N_opt, s.family_loss_opt))(_scaling()), 2.7e20,
        **kw,
    ),
    "dpo_figure": _dpo,
    "kl_leash_figure": lambda **kw: kl_leash_figure(_leash()[1], _leash()[0].beta, **kw),
    "kl_leash_figure:ten answers": lambda **kw: kl_leash_figure(
        leash_sweep(np.full(10, 0.1), np.linspace(-1, 2, 10), beta_grid(21), r_true=-np.linspace(-1, 2, 10)), 1.0,
        **kw,
    ),
    "kl_sweep_figure": lambda **kw: kl_sweep_figure(_hacking()[1], _hacking()[0].beta, **kw),
    "kl_hacking_figure": lambda **kw: kl_hacking_figure(_hacking()[1], _hacking()[0].beta, **kw),
    "kl_hacking_figure:no gap": lambda **kw: kl_hacking_figure(_leash()[1], _leash()[0].beta, **kw),
    "kl_theorem_figure": lambda **kw: kl_theorem_figure(_cloud(), _leash()[1], _leash()[0].beta, **kw),
    "kl_theorem_figure:objective": lambda **kw: kl_theorem_figure(
        _cloud(), _leash()[1], _leash()[0].beta, mode="objective", **kw
    ),
    "grpo_advantages_figure": _grpo_adv,
    "grpo_advantages_figure:no signal": _grpo_no_signal,
    "grpo_difficulty_figure": lambda **kw: grpo_difficulty_figure(
        p_grid, group_signal_probability(p_grid, 8), expected_abs_advantage(p_grid, 8), G=8, current_p=0.375,
        other_modes={"no std": expected_abs_advantage(p_grid, 8, "none")}, **kw,
    ),
    "ppo_vs_grpo_figure": lambda **kw: ppo_vs_grpo_figure(8, **kw),
    "grpo_batch_contrast_figure": lambda **kw: grpo_batch_contrast_figure(
        *(lambda R: (R, grpo_advantages(R), batch_normalised_advantages(R)))(
            np.stack([np.ones(8), np.array([1, 0, 0, 1, 1, 0, 0, 0.0]), np.zeros(8)])
        ),
        **kw,
    ),
    "lora_heatmaps_figure": lambda **kw: lora_heatmaps_figure(_lora()[1], _lora()[0], 4, **kw),
    "lora_curves_figure": lambda **kw: lora_curves_figure(_lora()[0], 4, slider_ranks=[0, 2, 4, 8], **kw),
    "lora_training_figure": lambda **kw: lora_training_figure(_lora_runs(), **kw),
    "lora_memory_figure": lambda **kw: lora_memory_figure(
        {
            "LoRA": lora_memory.lora_memory(**lora_memory.PRESET_F),
            "QLoRA": lora_memory.lora_memory(lora_memory.LLAMA2_7B, ["q", "v"], 8, base_format="nf4"),
        },
        gpu_gb=24, **kw,
    ),
    "pass_at_k_figure": lambda **kw: (lambda r: pass_at_k_figure(
        r.ks, r.unbiased, r.plugin, n=r.n, c=r.c, k=r.k, unbiased_at_k=r.unbiased_at_k, plugin_at_k=r.plugin_at_k, **kw,
    ))(_pass_curves()),
    "pass_hat_k_figure": lambda **kw: (lambda r: pass_hat_k_figure(
        r.ks, r.unbiased, r.hat, n=r.n, c=r.c, k=r.k, pass_at_at_k=r.unbiased_at_k, pass_hat_at_k=r.hat_at_k, **kw,
    ))(_pass_curves()),
    "simulation_figure": lambda **kw: (lambda s: simulation_figure(
        s.edges, s.counts_unbiased, s.counts_plugin, truth=s.truth, mean_unbiased=s.mean_unbiased,
        mean_plugin=s.mean_plugin, p=s.p, n=s.n, k=s.k, **kw,
    ))(_simulation()),
    "comparison_figure": lambda **kw: (lambda cs: comparison_figure(
        cs[0].acc_a, cs[0].acc_b, cs[0].se_a, cs[0].se_b, cs, **kw
    ))(_comparisons()),
    "attention_figure": _heads,
    "attention_mask_figure": _mask,
    "attention_scale_figure": _scale,
    "attention_outputs_figure": _outputs,
    "attention_kv_cache_figure": _kv,
    "training_memory_figure": _memory,
    "pipeline_bubble_figure": _bubble,
    "roofline_figure": _roofline,
    "speculative_figure": _speculative,
    "kv_capacity_figure": _kv_capacity,
    "predict_figure": lambda **kw: predict_figure(
        "Where is the bottom of the U-curve?", x_title="N", y_title="loss", x_range=(1e6, 1e13), log_x=True, **kw
    ),
    "ppo_clip_figure": lambda **kw: ppo_clip_figure(ppo.ppo_clip_curve(0.2, 0.28), 1.3, **kw),
    "clip_batch_figure": lambda **kw: clip_batch_figure(ppo.token_batch(n=200, log_ratio_std=0.3, seed=1), **kw),
    "gae_figure": _gae,
    "gae_bias_variance_figure": lambda **kw: gae_bias_variance_figure(ppo.gae_bias_variance(n=100), 0.95, **kw),
    "kl_estimators_figure": _kl_estimators,
    "rlhf_memory_figure": lambda **kw: rlhf_memory_figure(
        {m: ppo.rlhf_memory(7e9, method=m) for m in ("ppo", "grpo", "dpo")}, **kw
    ),
    "bradley_terry_figure": _bradley_terry,
    "accuracy_noise_figure": lambda **kw: accuracy_noise_figure(
        reward_model.accuracy_vs_noise(np.linspace(-2, 2, 6), flips=(0.0, 0.25, 0.5), n_train=60, n_test=60), **kw
    ),
    "length_bias_figure": lambda **kw: length_bias_figure(reward_model.length_bias_sweep(), 0.3, **kw),
    "sampling_figure": lambda **kw: sampling_figure(
        _VOCAB.logits, _VOCAB.tokens, 0.7, top_p=0.9, temperatures=(0.0, 0.5, 1.0, 2.0), **kw
    ),
    "order_figure": lambda **kw: order_figure(_VOCAB.logits, _VOCAB.tokens, 2.0, top_p=0.9, **kw),
    "generation_figure": _generations,
    "tokenizer_units_figure": lambda **kw: tokenizer_units_figure(*_tokenizers(), **kw),
    "bpe_merges_figure": lambda **kw: (lambda tok, byte_model: bpe_merges_figure(
        loss_units.merge_prefix_counts(tok, loss_units.bundled_text("lesson_text_heldout.txt"), 30),
        [(a.decode(errors="replace"), b.decode(errors="replace")) for a, b in tok.merges(30)], 12,
        byte_model.total_nll_nats, byte_model.n_bytes, **kw,
    ))(loss_units.get_tokenizer("bpe-800"), _tokenizers()[0][0]),
    "sft_mask_figure": lambda **kw: sft_mask_figure(loss_units.sft_loss_weights(200, 50, mask_prompt=False), **kw),
    "packing_mask_figure": lambda **kw: packing_mask_figure([3, 2, 4], **kw),
    "padding_figure": lambda **kw: padding_figure(
        [
            loss_units.padding_waste(loss_units.example_lengths(64), 16, s, seq_len=2048)
            for s in ("pad_to_longest", "bucket", "pack")
        ],
        **kw,
    ),
    "schedule_figure": lambda **kw: schedule_figure(_LRS, **kw),
    "schedule_figure:wsd sweep": lambda **kw: schedule_figure(
        {"cosine": _LRS["cosine"], wsd_name(400, "linear"): _LRS["WSD"]},
        sweep=schedules.wsd_sweep(2000, [100, 400, 1000]), active=1, labels=["0.05", "0.2", "0.5"], **kw,
    ),
    "wsd_branch_figure": lambda **kw: wsd_branch_figure(2000, [600, 1200], 200, **kw),
    "wavelength_figure": lambda **kw: wavelength_figure(2 * np.pi * 1e4 ** (np.arange(8) / 8), 8192, **kw),
    "wavelength_figure:drag over s": lambda **kw: wavelength_figure(
        2 * np.pi * 1e4 ** (np.arange(8) / 8), 8192, scaled=np.outer([1, 2], 2 * np.pi * 1e4 ** (np.arange(8) / 8)),
        new_context=[8192, 16384], panels=["s = 1", "s = 2"], s_values=[1.0, 2.0], active=1, method_label="PI",
        **kw,
    ),
    "tiles_figure": lambda **kw: tiles_figure(
        np.where(np.tri(4, dtype=bool), np.eye(4), np.nan), [((0, 2), (0, 2)), ((2, 4), (0, 2)), ((0, 2), (2, 4)),
        ((2, 4), (2, 4))], [((0, 2), (2, 4))], ["step 1", "step 2", "step 3", "step 4"], active=1, **kw,
    ),
    "hbm_traffic_figure": lambda **kw: hbm_traffic_figure(
        np.array([256, 1024, 4096]), np.array([4e6, 6e7, 9e8]), np.array([2e6, 2e7, 2e8]), 1024, 4.08, 64, 100, **kw
    ),
    "backward_memory_figure": lambda **kw: backward_memory_figure(
        np.array([256, 1024, 4096]), np.array([4e6, 6e7, 1e9]), np.array([1e6, 4e6, 1.6e7]), 4096, 32, 64, **kw
    ),
    "routing_figure": lambda **kw: routing_figure(
        [np.array([3, 3, 2]), np.array([4, 3, 2])], [np.array([2, 0, 0]), np.array([1, 0, 0])], [3, 4], [1.0, 1.5],
        ["factor 1", "factor 1.5"], active=0, **kw,
    ),
    "balance_figure": lambda **kw: balance_figure(
        np.array([2.0, 1.5, 1.2]), np.array([2.0, 2.1, 1.9]), np.array([1.3, 1.1, 1.0]), np.array([1.3, 1.3, 1.3]), **kw
    ),
    "parameters_figure": lambda **kw: parameters_figure(["A", "B"], [46.7e9, 671e9], [12.9e9, 37.6e9], 1, **kw),
    "lab_figure": lambda **kw: lab_figure(
        [series(np.arange(1, 4), np.array([8.0, 6.0, 5.0]), np.array([3]), np.array([5.1]), np.array([2.0, 1.0, 0.5]),
                np.array([[1.0, 1.5], [0.5, 0.8], [0.3, 0.4]])),
         series(np.arange(1, 4), np.array([8.0, 9.0, 6.0]), np.array([3]), np.array([6.2]), np.array([2.0, 9.0, 3.0]),
                np.array([[1.0, 1.5], [5.0, 7.0], [2.0, 2.0]]))],
        ["rate 1", "rate 2"], active=0, labels=["1e-3", "1e-2"], title="a run",
        others=[("earlier run", series(np.arange(1, 4), np.array([8.0, 7.0, 6.5]), np.array([3]), np.array([6.6]),
                                       np.array([1.0, 1.0, 1.0]), np.array([[0.5, 0.5]] * 3)))], **kw,
    ),
    "spacing_figure": lambda **kw: spacing_figure(
        ["a", "b"], [(np.array([1e-3, 1.0, 2.0, 448.0]), np.array([1e-4, 0.125, 0.25, 32.0]))] * 2,
        [(1e-3, 1e-2, 448.0), (1e-3, 1e-2, 448.0)], [0.1, 1.0], ["0.1", "1"], [[0.01, 0.02], [0.1, 0.2]],
        ["x = 0.1", "x = 1"], x_range=(1e-4, 1e3), active=1, **kw,
    ),
    "loss_scale_figure": lambda **kw: loss_scale_figure(
        np.linspace(-10.0, 6.0, 17), np.arange(16.0), [("flush", 3e-8), ("normal", 6.1e-5), ("inf", 65504.0)],
        np.arange(1, 6), np.array([16.0, 16.0, 15.0, 15.0, 16.0]), np.array([False, True, False, False, False]),
        scale_text="S·g", **kw,
    ),
    "softmax_figure": lambda **kw: softmax_figure(
        np.arange(4), [("naive", np.array([np.nan, 0.0, 0.0, 0.0])), ("stable", np.array([0.6, 0.2, 0.1, 0.1]))], **kw
    ),
    "running_sum_figure": lambda **kw: running_sum_figure(
        np.arange(4), [("bf16", np.array([0.0, 1.0, 2.0, 2.0])), ("exact", np.arange(4.0))], **kw
    ),
    "kl_figure": lambda **kw: kl_figure(
        np.linspace(-2, 2, 5), [np.ones(5)] * 2, [np.ones(5)] * 2, [np.zeros(5)] * 2, ["1", "2"], ["d = 1", "d = 2"],
        active=1, **kw,
    ),
    "temperature_figure": lambda **kw: temperature_figure(
        np.array([1.0, 2.0]), np.array([[0.7, 0.3], [0.6, 0.4]]), ["a", "b"], np.array([0.6, 0.67]), 0.69,
        np.array([0.1, 0.05]), np.array([0.1, 0.2]), 0.25, 1.5, **kw,
    ),
    "sequence_figure": lambda **kw: sequence_figure(
        ["A A", "B B"], np.array([0.5, 0.5]), {"token-level": np.array([0.4, 0.6])}, {"token-level": (0.1, 0.2)},
        0.05, **kw,
    ),
    "spread_figure": lambda **kw: spread_figure(
        ["none", "group mean"], [np.ones((2, 3)), np.zeros((2, 3))], [np.ones(2), np.array([1.0, 0.5])],
        [np.ones(2), np.ones(2)], np.zeros(3), ["2", "4"], ["G = 2", "G = 4"], active=1, **kw,
    ),
    "zero_figure": lambda **kw: zero_figure(
        np.array([[0.1, -0.1], [-0.1, 0.1]]), np.zeros(2), ["A", "B"], np.linspace(-1, 2, 4), np.array([3, 1, 0.5, 1]),
        0.5, 0.4, 0.3, **kw,
    ),
    "group_figure": lambda **kw: group_figure(
        np.array([2, 3]), {"group mean": np.array([0.5, 0.67]), "RLOO": np.ones(2)}, 2, np.array([0.1, 0.5]),
        np.array([1.0, 1.0]), **kw,
    ),
    "learning_figure": lambda **kw: learning_figure(
        np.arange(3), {"a": np.array([0.3, 0.5, 0.6])}, {"a": np.array([0.0, 0.1, 0.1])}, "sampled", 1.0, **kw,
    ),
    "trajectory_figure": lambda **kw: trajectory_figure(
        np.linspace(-2, 2, 5), np.linspace(-1, 1, 4), np.ones((4, 5)),
        [[np.array([[-1.5, 1.0], [-1.0, 0.5]]), np.array([[-1.5, 1.0], [np.nan, np.nan]])]] * 2, ["SGD", "Adam"],
        [0.0, 0.0], ["0.1", "0.2"], ["η = 0.1", "η = 0.2"], active=1, title="paths", **kw,
    ),
    "bias_figure": lambda **kw: bias_figure(np.arange(1, 4), np.ones(3), np.array([3.16, 4.2, 5.0]), "β", 3.16, **kw),
    "warmup_figure": lambda **kw: warmup_figure(
        np.arange(1, 4), np.array([[0.1, 0.2, 0.3], [0.5, 0.8, 0.9], [3.0, 2.0, 1.5]]), np.array([1.41, 1.0, 0.8]),
        np.array([1.4, 1.0, 0.8]), **kw,
    ),
    "norm_figure": lambda **kw: norm_figure(np.array([1.0, 3.0]), np.array([-1.0, 1.0]), np.array([0.45, 1.34]), **kw),
    "depth_figure": lambda **kw: depth_figure(np.array([3.0, 2.0]), np.array([4.0, 4.0]), "xavier", **kw),
    "mup_figure": lambda **kw: mup_figure(
        np.array([32, 64]), np.array([0.2, 0.4]), np.array([0.2, 0.18]), np.array([0.3, 0.3]), np.array([32, 128]),
        np.array([1e-3, 1e-2]), np.array([[0.2, 0.1], [0.1, np.nan]]), np.array([[0.2, 0.1], [0.2, 0.1]]), **kw,
    ),
    "best_of_n_figure": lambda **kw: best_of_n_figure(
        np.array([1.0, 2.0, 4.0]), np.array([0.1, 0.19, 0.34]), 0.1, np.array([0.0, 0.4, 0.7]), 147.0, 1.0,
        [1, 4], [0.1, 0.34], [0.0, 0.7], ["n = 1", "n = 4"], active=1, **kw,
    ),
    "vote_figure": lambda **kw: vote_figure(
        np.array([1.0, 5.0]), [("majority vote, m = 10", np.array([0.35, 0.6])), ("verifier", np.array([0.35, 0.9]))],
        np.array([0.0, 1.0]), [("majority vote, m = 10", np.array([0.0, 1.0]))], 5, 0.35, **kw,
    ),
    "pass_per_compute_figure": lambda **kw: pass_per_compute_figure(
        np.array([1.0, 10.0]), np.array([0.05, 0.4]), np.array([0.3, 0.97]), 10.0, 4, 0.87, 0.76, **kw,
    ),
    "reliability_figure": lambda **kw: reliability_figure(
        (np.array([0.25, 0.75]), np.array([0.25, 0.75])), [(np.array([0.2, 0.8]), np.array([0.3, 0.7]))] * 2,
        [(np.array([0.25, 0.75]), np.array([0.25, 0.75]))] * 2, np.linspace(0.1, 0.9, 5),
        [np.linspace(0.2, 0.8, 5)] * 2,
        np.array([0.25, 0.75]), np.array([5, 5]), [np.array([5, 5])] * 2, [np.array([5, 5])] * 2, [1.0, 2.0],
        ["κ = 1", "κ = 2"], active=1, **kw,
    ),
    "power_figure": lambda **kw: power_figure(
        (np.array([0.5, 0.9]), np.array([0.3, 0.8])), (np.array([0.5, 0.9]), np.array([0.3, 0.8])),
        np.linspace(0, 1, 5), np.linspace(0, 1, 5) ** 2, 2.0, np.array([1.0, 2.0]), np.array([0.1, 0.1]),
        np.array([0.1, 0.1]), 0.1, 10, **kw,
    ),
    "guesses_figure": lambda **kw: guesses_figure(
        np.array([0.0, 0.5, 1.0, 1.5]), np.array([2, 5, 1]), 0.75, own=1.2, **kw
    ),
    "choices_figure": lambda **kw: choices_figure(["A", "B", "C"], [4, 9, 2], 1, own=0, **kw),
    "temperature_scaling_figure": lambda **kw: temperature_scaling_figure(
        np.array([0.5, 1.0, 2.0]), np.array([1.5, 1.2, 1.3]), np.array([1.5, 1.2, 1.3]), 1.0, 1.0,
        (np.array([0.5, 0.9]), np.array([0.4, 0.7])), (np.array([0.5, 0.9]), np.array([0.5, 0.9])), **kw,
    ),
    "emergence_figure": lambda **kw: emergence_figure(
        np.array([20.0, 22.0, 24.0]), np.array([0.1, 0.4, 0.9]), np.array([0.0, 0.01, 0.6]), np.array([4.5, 3.0, 0.5]),
        5, 0.5, 23.7, 22.3, **kw,
    ),
    "split_figure": lambda **kw: split_figure(
        np.array([0.1, 0.5]), np.array([0.5, 0.9]), np.array([100.0, 1000.0]), 0.5, 0.9, **kw,
    ),
    "relative_figure": lambda **kw: relative_figure(np.eye(4), np.eye(4), 0, 100, **kw),
    "decay_figure": lambda **kw: decay_figure(np.arange(1.0, 65.0), np.linspace(1, 0.1, 64), np.cos(np.arange(64.0)),
                                              1024, **kw),
    "kaplan_figure": lambda **kw: kaplan_figure(schedules.kaplan_gap(2000, [500, 1000]), 2000, **kw),
    "mixture_figure": lambda **kw: mixture_figure(
        schedules.data_mixture(2000, 1600), schedules.lr_schedule("wsd", 2000), **kw
    ),
}  # fmt: skip


# Public viz functions that return figures without being a ``<concept>_figure`` builder: the page's shortcuts from
# core's result objects, and with_guess, which draws a guess on a built figure (as the pages call it). Only their
# schema is checked here: the figures they build or copy are the builders' above.
SHORTCUTS: dict[str, Callable[..., go.Figure]] = {
    "curve_figures:pass@k": lambda **kw: curve_figures(_pass_curves(), **kw)[0],
    "curve_figures:pass^k": lambda **kw: curve_figures(_pass_curves(), log_x=True, **kw)[1],
    "simulation_figure_of": lambda **kw: simulation_figure_of(_simulation(), **kw),
    "comparison_figure_of": lambda **kw: comparison_figure_of(_comparisons(), **kw),
    "with_guess:x": lambda theme, presenter: with_guess(
        EXAMPLES["isoflop_figure"](theme=theme, presenter=presenter), 3e10, "your guess: 30.0B", theme=theme
    ),
    "with_guess:y": lambda theme, presenter: with_guess(
        EXAMPLES["pass_at_k_figure"](theme=theme, presenter=presenter), 0.5, "your guess 0.500", axis="y", theme=theme
    ),
    "with_panel_line": lambda theme, presenter: with_panel_line(
        EXAMPLES["routing_figure"](theme=theme, presenter=presenter), "<i>your guess: 3 dropped</i>"
    ),
    "with_guess:x3": lambda theme, presenter: with_guess(
        EXAMPLES["lora_curves_figure"](theme=theme, presenter=presenter), 4, "your guess r = 4", ref="x3", theme=theme
    ),
}  # fmt: skip


@functools.cache
def built(name: str, theme: str, presenter: bool) -> dict[str, Any]:
    """The example's figure as plain JSON-like dicts (what Streamlit sends to the browser)."""
    fig = (EXAMPLES | SHORTCUTS)[name](theme=theme, presenter=presenter)
    assert isinstance(fig, go.Figure)
    return fig.to_dict()


VARIANTS = [(n, t, p) for n in EXAMPLES for t in THEMES for p in (False, True)]


def _public_figure_functions() -> dict[str, Any]:
    """Every public function of a viz module (but viz.style, the shared builder itself) that returns a figure."""
    found = {}
    for info in pkgutil.iter_modules(viz.__path__):
        module = importlib.import_module(f"viz.{info.name}")
        for name, obj in vars(module).items():
            public = not name.startswith("_") and inspect.isfunction(obj) and obj.__module__ == module.__name__
            if public and module.__name__ != "viz.style" and "Figure" in str(inspect.signature(obj).return_annotation):
                found[name] = obj
    return found


def test_the_registry_covers_every_public_builder():
    builders, others = set(), set()
    for name, obj in _public_figure_functions().items():
        if name.endswith("_figure"):
            builders.add(name)
            params = inspect.signature(obj).parameters
            assert params["theme"].default == "light" and params["presenter"].default is False, name
            assert params["theme"].kind is params["presenter"].kind is inspect.Parameter.KEYWORD_ONLY, name
        else:
            others.add(name)
    assert builders == {name.split(":")[0] for name in EXAMPLES}
    assert others == {name.split(":")[0] for name in SHORTCUTS}
    assert {"curve_figures", "simulation_figure_of", "comparison_figure_of", "with_guess"} <= others


# ----------------------------------------------------------------------------------------------------------------
# (a) plotly's schema


@pytest.mark.parametrize(
    ("name", "theme", "presenter"), VARIANTS + [(n, t, p) for n in SHORTCUTS for t in THEMES for p in (False, True)]
)
def test_builder_output_passes_plotly_validation(name, theme, presenter):
    go.Figure(built(name, theme, presenter))  # raises ValueError on any invalid property or value


# ----------------------------------------------------------------------------------------------------------------
# (b) contrast

_NAMED = {"white": (255, 255, 255, 1.0), "black": (0, 0, 0, 1.0), "transparent": (0, 0, 0, 0.0)}


def rgba(colour: str) -> tuple[float, float, float, float]:
    """'#RRGGBB', '#RGB', 'rgb(r,g,b)', 'rgba(r,g,b,a)' or a few names, as (r, g, b, alpha)."""
    c = colour.strip().lower()
    if c in _NAMED:
        return _NAMED[c]
    if m := re.fullmatch(r"#([0-9a-f]{6})", c):
        h = m.group(1)
        return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), 1.0)
    if m := re.fullmatch(r"#([0-9a-f]{3})", c):
        return (*(int(d * 2, 16) for d in m.group(1)), 1.0)
    if m := re.fullmatch(r"rgba?\(([^)]*)\)", c):
        parts = [float(v) for v in m.group(1).split(",")]
        return (parts[0], parts[1], parts[2], parts[3] if len(parts) == 4 else 1.0)
    raise AssertionError(f"a colour this test cannot read: {colour!r}")


def over(colour: str, background: tuple[float, float, float], opacity: float = 1.0) -> tuple[float, float, float]:
    """``colour`` (times ``opacity``) composited over an opaque background."""
    r, g, b, a = rgba(colour)
    a *= opacity
    return tuple(a * c + (1 - a) * bg for c, bg in zip((r, g, b), background, strict=True))


def luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2.1 relative luminance of an sRGB colour (0..255 channels)."""

    def lin(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_helpers_match_published_values():
    white, black = (255, 255, 255), (0, 0, 0)
    assert contrast(white, black) == pytest.approx(21.0)
    assert contrast(over("#767676", white), white) == pytest.approx(4.54, abs=0.01)  # the usual AA grey
    assert contrast(over("#E69F00", white), white) == pytest.approx(2.25, abs=0.01)  # why orange needs a shade
    assert over("rgba(0,0,0,0.5)", white) == (127.5, 127.5, 127.5)


def _get(d: dict | None, *path: str) -> Any:
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _axes(layout: dict) -> Iterator[tuple[str, dict]]:
    for key, value in layout.items():
        if re.fullmatch(r"[xy]axis\d*", key):
            yield key, value


def texts(fig: dict) -> Iterator[tuple[str, str, tuple[float, float, float]]]:
    """(where, colour, what lies behind it) for every text of the figure."""
    layout = fig["layout"]
    bg = over(layout["paper_bgcolor"], (255, 255, 255))
    default = _get(layout, "font", "color")
    yield "layout.font", default, bg
    for where in (("title", "font"), ("legend", "font"), ("legend", "title", "font")):
        # explicit, not inherited: Streamlit's plotly template would otherwise set its own (grey) colour
        yield ".".join(where), _get(layout, *where, "color"), bg
    hover_bg = over(_get(layout, "hoverlabel", "bgcolor"), bg)
    yield "hoverlabel", _get(layout, "hoverlabel", "font", "color"), hover_bg
    for key, axis in _axes(layout):
        if axis.get("visible") is False:
            continue
        yield f"{key}.tickfont", _get(axis, "tickfont", "color"), bg
        yield f"{key}.title", _get(axis, "title", "font", "color"), bg
    for key, value in layout.items():
        if key.startswith("coloraxis"):
            yield f"{key}.colorbar.tickfont", _get(value, "colorbar", "tickfont", "color"), bg
    for i, note in enumerate(layout.get("annotations", ())):
        behind = over(note["bgcolor"], bg) if note.get("bgcolor") else bg
        yield f"annotations[{i}]", _get(note, "font", "color") or default, behind
    for i, slider in enumerate(layout.get("sliders", ())):
        colour = _get(slider, "font", "color")
        if rgba(colour)[3] > 0:  # a transparent font hides the step labels on purpose
            yield f"sliders[{i}].font", colour, bg
        yield f"sliders[{i}].currentvalue", _get(slider, "currentvalue", "font", "color"), bg
    for i, trace in enumerate(fig["data"]):
        colour = _get(trace, "textfont", "color")
        # text inside bars ('auto', 'inside') gets a colour plotly.js picks against the bar; outside text sits on bg
        if colour is not None and trace.get("textposition") not in ("auto", "inside"):
            for c in [colour] if isinstance(colour, str) else colour:
                yield f"data[{i}].textfont", c, bg
    # inline colours in rich text (notes under axis titles, ...)
    for where, text in _strings(fig):
        for colour in re.findall(r"color:\s*(#[0-9a-fA-F]{3,6}|rgba?\([^)]*\))", text):
            yield f"{where} (inline)", colour, bg


def _strings(obj: Any, where: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(obj, str):
        yield where, obj


def _colours(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return []


FAINT = 0.5  # marks drawn below this opacity are deliberately faint (context, click targets, shaded bands): skipped


def marks(fig: dict) -> Iterator[tuple[str, float]]:
    """(where, contrast against the figure background) of every line and mark meant to be seen."""
    layout = fig["layout"]
    bg = over(layout["paper_bgcolor"], (255, 255, 255))

    def ratio(colour: str, opacity: float = 1.0) -> float | None:
        if rgba(colour)[3] * opacity < FAINT:
            return None  # deliberately faint: a faint fill, a click target or a shaded band
        return contrast(over(colour, bg, opacity), bg)

    for i, trace in enumerate(fig["data"]):
        kind, opacity = trace.get("type", "scatter"), trace.get("opacity", 1.0)
        if trace.get("visible") is False or opacity < FAINT or kind == "heatmap":
            continue
        mode = trace.get("mode", "lines")
        if kind.startswith("scatter") and "lines" in mode:
            for c in _colours(_get(trace, "line", "color")):
                yield f"data[{i}].line", ratio(c, opacity)
        marker = trace.get("marker") or {}
        if kind == "bar" or (kind.startswith("scatter") and "markers" in mode):
            if trace.get("x") == [None]:
                continue  # a legend-only key
            fills = _colours(marker.get("color"))
            outlines = _colours(_get(marker, "line", "color")) if _get(marker, "line", "width") != 0 else []
            o = opacity * marker.get("opacity", 1.0)
            for j, fill in enumerate(fills):
                outline = outlines[j % len(outlines)] if outlines else None
                # a hollow marker (fill = background) is seen by its outline
                best = max((r for r in (ratio(fill, o), outline and ratio(outline, o)) if r is not None), default=None)
                yield f"data[{i}].marker", best
        for c in _colours(_get(trace, "error_x", "color")):
            yield f"data[{i}].error_x", ratio(c, opacity)
    for i, shape in enumerate(layout.get("shapes", ())):
        for c in _colours(_get(shape, "line", "color")):
            yield f"shapes[{i}]", ratio(c, shape.get("opacity", 1.0))
    for key, axis in _axes(layout):
        if axis.get("zeroline"):
            yield f"{key}.zerolinecolor", ratio(axis["zerolinecolor"])
    for key, value in layout.items():
        if key.startswith("coloraxis"):
            stops = value["colorscale"]
            # the strong end(s) of a scale must stand out; zero may blend with the background on purpose
            diverging = np.isclose(value.get("cmin", 0), -value.get("cmax", 1))  # both ends strong
            for c in [stops[0][1], stops[-1][1]] if diverging else [stops[-1][1]]:
                yield f"{key}.colorscale", ratio(c)


@pytest.mark.parametrize(("name", "theme"), [(n, t) for n in EXAMPLES for t in THEMES])
def test_text_and_marks_have_enough_contrast(name, theme):
    fig = built(name, theme, False)
    layout = fig["layout"]
    assert layout["paper_bgcolor"] == layout["plot_bgcolor"] == style.get_theme(theme).background
    low_text = [
        (where, colour, round(contrast(over(colour, behind), behind), 2))
        for where, colour, behind in texts(fig)
        if colour is None or contrast(over(colour, behind), behind) < 4.5
    ]
    assert not low_text, f"text below 4.5:1 (or no explicit colour): {low_text}"
    low_marks = [(where, round(r, 2)) for where, r in marks(fig) if r is not None and r < 3.0]
    assert not low_marks, f"lines or marks below 3:1: {low_marks}"


def test_palettes_meet_the_thresholds_against_their_own_background():
    for theme in style.THEMES.values():
        bg = over(theme.background, (255, 255, 255))
        for role, colour in theme.palette.items():
            assert contrast(over(colour, bg), bg) >= 3.0, (theme.name, role, colour)
        for role, colour in theme.ink.items():  # >= 4.5:1 also on the faint label panel
            panel = over(theme.panel, bg)
            assert contrast(over(colour, panel), panel) >= 4.5, (theme.name, role, colour)
        for colour in (theme.text, theme.muted):
            assert contrast(over(colour, bg), bg) >= 4.5, (theme.name, colour)
        assert contrast(over(theme.axis, bg), bg) >= 3.0


def test_the_dark_theme_is_dark_and_follows_the_app_background():
    dark, light = built("dpo_figure", "dark", False), built("dpo_figure", "light", False)
    assert dark["layout"]["paper_bgcolor"] == "#171614"  # rgb(23, 22, 20): Streamlit's dark app background
    assert light["layout"]["paper_bgcolor"] == "#FFFFFF"
    assert luminance(over(dark["layout"]["font"]["color"], (0, 0, 0))) > 0.8  # light text on a dark page
    assert dark["data"][0]["line"]["color"] != light["data"][0]["line"]["color"]  # per-theme shades of one hue
    heat = built("attention_figure", "dark", False)["layout"]["coloraxis"]["colorscale"]
    assert luminance(over(heat[0][1], (0, 0, 0))) < luminance(over(heat[-1][1], (0, 0, 0)))  # on dark: bright = much


# ----------------------------------------------------------------------------------------------------------------
# (c) presenter mode


def _font_sizes(obj: Any, where: str = "") -> Iterator[tuple[str, float]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k.endswith("font") and isinstance(v, dict) and "size" in v:
                yield f"{where}.{k}", v["size"]
            yield from _font_sizes(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _font_sizes(v, f"{where}[{i}]")
    elif isinstance(obj, str):
        for size in re.findall(r"font-size:\s*(\d+(?:\.\d+)?)px", obj):
            yield f"{where} (inline)", float(size)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_presenter_type_is_at_least_16px(name):
    fig = built(name, "light", True)
    small = [(where, size) for where, size in _font_sizes(fig) if size < 16]
    assert not small, f"type below 16 px in presenter mode: {small}"
    layout = fig["layout"]
    for key, axis in _axes(layout):  # explicit sizes: Streamlit's template would otherwise draw 12 px ticks
        assert axis["tickfont"]["size"] >= 16 and axis["title"]["font"]["size"] >= 16, key
    normal = built(name, "light", False)["layout"]
    assert layout["height"] == round(1.2 * normal["height"])  # room for the larger type


# Presenter mode's chart box at 1280 x 720: the frame's container (pages/frame, 100vh - PRESENTER_TOP_PX) minus the
# page's readout column: about 960 x 475 px. A plotly slider below the plot pushes the bottom margin to its pad, its
# current-value line, the rail and the tick labels; the constants are measured in chromium (plotly.js 3).
BOX_W, BOX_H = 960, 720 - 245
EM = 0.5  # width of an average character, in em (Source Sans; Arial is about 0.55)


def _plain_lines(text: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", line) for line in text.split("<br>")]


def _bottom_px(layout: dict) -> float:
    """The bottom margin plotly gives the figure: the slider's block below the plot, or the layout's own."""
    if not layout.get("sliders"):
        return layout["margin"]["b"]
    s = layout["sliders"][0]
    block = s["pad"]["t"] + s["pad"].get("b", 0) + 1.5 * s["currentvalue"]["font"]["size"] + 1.5 * s["font"]["size"]
    return max(layout["margin"]["b"], block + 39)


def _tick_and_title_px(layout: dict, key: str = "xaxis") -> float:
    axis = layout[key]
    title = axis.get("title") or {}
    # measured in the app (Source Sans, plotly's default title standoff): 19 px ticks and a 20 px title take 70 px
    band = 1.7 * (axis["tickfont"]["size"] + (title["font"]["size"] if title.get("text") else 0))
    return band - 15 + title.get("standoff", 15) if title.get("text") else band


@pytest.mark.parametrize("name", ["isoflop_figure", "ppo_clip_figure"])
def test_presenter_layout_keeps_the_plot_large_in_the_projector_box(name):
    """At 960 x 475 px the legend, the readout and the slider left the plot a strip (70 px on the scaling page)."""
    fig = built(name, "light", True)
    layout = fig["layout"]
    margin = layout["margin"]
    plot_px = BOX_H - margin["t"] - _bottom_px(layout)
    spans = [axis["domain"] for key, axis in _axes(layout) if key.startswith("yaxis") and "domain" in axis]
    span = (max(d[1] for d in spans) - min(d[0] for d in spans)) if spans else 1.0
    assert plot_px * span >= 0.55 * BOX_H, (plot_px, span)
    if len(spans) > 1:  # every row of a grid stays readable
        assert min(d[1] - d[0] for d in spans) * plot_px >= 100
    # the legend is a column right of the plot, as wide as the right margin
    legend = layout["legend"]
    assert legend["orientation"] == "v" and legend["x"] >= 1.0 and legend["xanchor"] == "left"
    size = legend["font"]["size"]
    names = [t["name"] for t in fig["data"] if t.get("showlegend", True) and t.get("name")]
    widest = max(EM * size * len(line) + 40 for n in names for line in _plain_lines(n))
    assert widest <= margin["r"], (widest, margin["r"])
    legend_px = sum(1.25 * size * len(_plain_lines(n)) + 4 for n in names)
    # the readout (annotation 0, rewritten by the slider) sits in that column under the legend, inside the box
    readout = layout["annotations"][0]
    lines = _plain_lines(readout["text"])
    font = readout["font"]["size"]
    assert readout["x"] >= 1.0 and readout["xanchor"] == "left" and readout["y"] == 1.0
    assert -readout["yshift"] >= legend_px
    assert readout["xshift"] + EM * font * max(map(len, lines)) + 12 <= margin["r"]
    assert margin["t"] - readout["yshift"] + 1.3 * font * len(lines) + 12 <= BOX_H
    for step in layout["sliders"][0]["steps"][::10]:  # the slider writes the same short lines
        assert len(_plain_lines(step["args"][1]["annotations[0].text"])) == len(lines)
    # no text in the band under the plot where the tick labels and the x-axis title are drawn
    for a in layout["annotations"][1:]:
        if a.get("yref") == "paper":
            assert a["y"] >= 0, a["text"]
    for key, axis in _axes(layout):
        if key.startswith("xaxis") and axis.get("showticklabels", True):
            assert layout["sliders"][0]["pad"]["t"] >= _tick_and_title_px(layout, key), key


def test_presenter_side_by_side_panels_leave_room_for_the_right_panels_y_axis():
    """The right panel's tick labels and y-axis title stand in the gap; at presenter size they overran the bars."""
    layout = built("tokenizer_units_figure", "light", True)["layout"]
    plot_w = BOX_W - layout["margin"]["l"] - layout["margin"]["r"]
    gap_px = (layout["xaxis2"]["domain"][0] - layout["xaxis"]["domain"][1]) * plot_w
    y2 = layout["yaxis2"]
    need = 4 * EM * y2["tickfont"]["size"] + 1.6 * y2["title"]["font"]["size"] + 10  # "2.5 ", a title line, ticks
    assert gap_px >= need, (gap_px, need)
    normal = built("tokenizer_units_figure", "light", False)["layout"]
    assert normal["xaxis"]["domain"] == [0.0, 0.46] and normal["xaxis2"]["domain"] == [0.54, 1.0]


def test_presenter_layout_leaves_normal_mode_alone():
    scaling = built("isoflop_figure", "light", False)["layout"]
    assert scaling["legend"]["orientation"] == "h" and scaling["annotations"][0]["y"] == -0.27
    assert scaling["sliders"][0]["pad"]["t"] == 175 and scaling["margin"]["r"] == 20
    clip = built("ppo_clip_figure", "light", False)["layout"]
    assert clip["legend"]["y"] == 0.49 and clip["annotations"][0]["x"] == 0.0 and clip["margin"]["r"] == 20
    assert clip["yaxis"]["domain"] == [0.56, 0.78] and clip["xaxis"].get("showticklabels", True)


def test_lora_presenter_heatmaps_spend_the_height_on_the_panels():
    """The three square panels were 109 px tall at 1280 x 720 (measured in chromium): a figure title, the readout,
    the x-axis titles and the slider's current-value line took the height. Presenter mode keeps the readout (it
    starts with r) and the panel titles, and moves the size of ΔW into the first panel's title."""
    heat = built("lora_heatmaps_figure", "light", True)["layout"]
    assert heat["margin"]["t"] == 100 and heat["sliders"][0]["pad"]["t"] == 40
    assert heat["sliders"][0]["currentvalue"]["visible"] is False
    assert heat["annotations"][-1]["text"].startswith("<b>r = ")  # the readout, above the panel titles
    assert heat["annotations"][0]["text"].startswith("target ΔW, ") and not heat["title"]["text"]
    axes = dict(_axes(heat))
    assert not any(axes[f"xaxis{s}"]["title"].get("text") for s in ("", "2", "3"))
    assert [axes[f"yaxis{s}"]["showticklabels"] for s in ("", "2", "3")] == [True, False, False]
    assert built("lora_curves_figure", "light", True)["layout"]["margin"]["t"] >= 150
    normal = built("lora_heatmaps_figure", "light", False)["layout"]
    assert normal["margin"]["t"] == 125 and normal["annotations"][-1]["yshift"] == 28
    assert normal["sliders"][0]["currentvalue"]["visible"] and normal["title"]["text"].startswith("ΔW is ")
    assert normal["xaxis"]["title"]["text"] == "column (input index)"


@pytest.mark.parametrize(("n", "columns"), [(1, 1), (2, 2), (4, 4), (7, 4), (8, 4), (12, 6), (16, 6)])
def test_presenter_heatmap_grid_keeps_the_smallest_side_largest(n, columns):
    assert attention_viz.presenter_columns(n) == columns
    w, h = attention_viz.PRESENTER_GRID_BOX
    side = min(w / columns, h / -(-n // columns))
    # a plain loop over every grid: none has a larger smallest side
    assert all(min(w / c, h / -(-n // c)) <= side for c in range(1, n + 1))


def test_presenter_attention_grid_has_no_panel_axis_titles_and_a_title_row_between_rows():
    layout = built("attention_figure", "light", True)["layout"]
    axes = dict(_axes(layout))
    assert not any(axis.get("title", {}).get("text") for axis in axes.values())
    assert layout["title"]["text"].startswith("Attention weights per head (rows: queries, columns: keys")
    tops = sorted({axis["domain"][1] for key, axis in axes.items() if key.startswith("yaxis")})
    bottoms = sorted({axis["domain"][0] for key, axis in axes.items() if key.startswith("yaxis")})
    if len(tops) > 1:  # the gap between rows holds a 19 px panel title in the grid box
        assert (bottoms[-1] - tops[-2]) * attention_viz.PRESENTER_GRID_BOX[1] >= 1.6 * 19
    # normal mode too (the titles "query" and "key" overprinted the tick labels beside them, issue 30); every
    # other token labelled once there are more than six
    normal = dict(_axes(built("attention_figure", "light", False)["layout"]))
    assert not any(axis.get("title", {}).get("text") for axis in normal.values())
    assert all(len(axis["tickvals"]) <= 6 for axis in normal.values())


def test_log_axes_label_decades_only():
    """plotly draws the 2s and 5s between decades at 3/4 of the tick size (14 px at presenter size); a "5" under
    "1" reads as 5, not 0.5 (the walkthrough, 1.10), and "6 7 8 9" crowded each other on the loss page."""
    for presenter in (True, False):
        axes = dict(_axes(built("isoflop_figure", "light", presenter)["layout"]))
        logs = [axis for axis in axes.values() if axis.get("type") == "log"]
        assert logs and all(axis["minorloglabels"] == "none" for axis in logs)


def test_the_reward_model_readout_has_the_top_of_the_left_column():
    """The readout panel stood on the sigmoid (presenter size, 1280 x 720); now the curve's plot ends below it."""
    for presenter in (False, True):
        layout = built("bradley_terry_figure", "light", presenter)["layout"]
        panel = layout["annotations"][0]
        assert panel["name"] == style.READOUT and panel["y"] == 1.0 and panel["yanchor"] == "top"
        lines = len(_plain_lines(panel["text"]))
        plot_px = BOX_H - layout["margin"]["t"] - layout["margin"]["b"] - 40  # less the x tick labels and title
        room = (1.0 - layout["yaxis"]["domain"][1]) * plot_px
        assert room >= 1.3 * panel.get("font", layout["font"])["size"] * lines, (presenter, room)
        # the panel's widest line ends before the bars' y axis (tick labels and title in front of it)
        width = EM * layout["font"]["size"] * max(map(len, _plain_lines(panel["text"])))
        assert width + 4 * EM * layout["font"]["size"] <= layout["xaxis2"]["domain"][0] * (BOX_W - 100)


# ----------------------------------------------------------------------------------------------------------------
# the grid helper


def test_grid_domains_tile_the_paper_with_the_gaps():
    ids, layout = style.grid(2, 3, hgap=0.1, vgap=0.2, widths=[2, 1, 1], titles=list("abcdef"))
    assert ids[0] == ("x", "y") and ids[5] == ("x6", "y6")
    unit = (1 - 2 * 0.1) / 4
    assert layout["xaxis"]["domain"] == pytest.approx([0, 2 * unit])
    assert layout["xaxis2"]["domain"] == pytest.approx([2 * unit + 0.1, 3 * unit + 0.1])
    assert layout["xaxis3"]["domain"][1] == pytest.approx(1.0)
    assert layout["yaxis"]["domain"] == pytest.approx([0.6, 1.0]) and layout["yaxis4"]["domain"] == pytest.approx(
        [0, 0.4]
    )
    assert layout["yaxis5"]["anchor"] == "x5" and layout["xaxis5"]["anchor"] == "y5"
    assert [a["text"] for a in layout["annotations"]] == list("abcdef")
    assert layout["annotations"][1]["x"] == pytest.approx(2.5 * unit + 0.1) and layout["annotations"][4]["y"] == 0.4
    ids, layout = style.grid(3, 1, heights=[0.5, 0.2, 0.22], vgap=0.04)  # the KL sweep's three rows
    domains = [layout[k]["domain"] for k in ("yaxis", "yaxis2", "yaxis3")]
    np.testing.assert_allclose(domains, [[0.5, 1], [0.26, 0.46], [0, 0.22]], atol=1e-12)
    with pytest.raises(ValueError):
        style.grid(1, 2, widths=[1.0])


def test_unknown_theme_is_refused_and_none_means_light():
    assert style.get_theme(None) is style.LIGHT and style.get_theme("dark") is style.DARK
    with pytest.raises(ValueError, match="light"):
        style.get_theme("sepia")


def test_legend_rows_follows_plotlys_wrapping_rule() -> None:
    """One row when every entry fits side by side; otherwise each entry is as wide as the widest (plotly's
    computeLegendDimensions), so one long entry puts every entry on its own row; heatmaps have no legend entry."""
    from viz.style import legend_rows

    short = [{"type": "scatter", "name": n} for n in ("a", "bb", "ccc")]
    assert legend_rows(short, 14) == 1
    long_first = [{"type": "scatter", "name": "x" * 58}] + [{"type": "scatter", "name": "y" * 25}] * 3
    assert legend_rows(long_first, 14, width=640) == 4  # each entry as wide as the 58-character one: one per row
    assert legend_rows(long_first, 14, width=1100) == 2  # two such entries per row
    assert legend_rows([{"type": "heatmap", "name": "ΔW"}] * 3, 14) == 0
    assert legend_rows([{"type": "heatmap", "name": "ΔW", "showlegend": True}], 14) == 1
    assert legend_rows([{"type": "scatter", "name": "hidden", "showlegend": False}], 14) == 0


def test_the_scaling_title_clears_its_four_row_legend() -> None:
    """The scaling page's title sat on its legend's first row (plotly put each of the 4 entries on its own row, and
    the margin made room for fewer)."""
    from views import Options, scaling
    from views.state import State
    from viz.style import legend_rows

    fig = scaling.figures(State(scaling.SPEC.defaults()), Options()).figures["main"]
    data = [trace.to_plotly_json() for trace in fig.data]
    rows = legend_rows(data, fig.layout.legend.font.size)
    assert rows == 4
    title_px = 1.35 * fig.layout.title.font.size
    assert fig.layout.margin.t >= title_px + 1.6 * fig.layout.legend.font.size * rows


def _without_colours(obj):
    """A figure as plain data, every colour setting left out (keys naming a colour, inline ``color:#...`` in a text,
    and the template)."""
    if isinstance(obj, dict):
        return {k: _without_colours(v) for k, v in obj.items() if "color" not in k.lower() and k != "template"}
    if isinstance(obj, list):
        return [_without_colours(v) for v in obj]
    if isinstance(obj, str):
        return re.sub(r"color:\s*#[0-9A-Fa-f]{3,8};?", "", obj)
    return obj


@pytest.mark.parametrize("url", [e.url for e in catalog.PAGES if e.view is not None])
def test_dark_draws_every_main_figure_where_light_does(url):
    """The browser test of overlapping labels (tests/browser/test_first_screen_browser.py) runs in light and
    presenter mode; dark mode draws the same figure but for its colours (every text, size, margin and position
    equal), so its labels sit where light's do."""
    import json

    module = catalog.view_module(url)
    state = module.SPEC.defaults()
    light, dark = (next(iter(module.figures(state, Options(theme=t)).figures.values())) for t in ("light", "dark"))
    assert _without_colours(json.loads(light.to_json())) == _without_colours(json.loads(dark.to_json()))
