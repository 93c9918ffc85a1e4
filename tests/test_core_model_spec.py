"""core.model_spec: catalogue counts against the published sizes, per-component counts by a plain loop, MLA cache."""

import pytest

from core import model_spec


def _loop_count(spec: model_spec.ModelSpec, active: bool = False) -> int:
    """An independent count: walk the layers and add up every weight matrix as (rows, cols)."""
    D, N, K, H = spec.d_model, spec.n_heads, spec.n_kv_heads, spec.head_dim
    mats: list[tuple[int, int]] = [(spec.vocab, D)] + ([] if spec.tied else [(D, spec.vocab)])
    vectors = [D]  # final norm
    for layer in range(spec.layers):
        vectors += [D, D]
        if spec.kv_lora_rank:
            qk = spec.qk_nope_dim + spec.qk_rope_dim
            mats += [(D, spec.q_lora_rank), (spec.q_lora_rank, N * qk), (D, spec.kv_lora_rank + spec.qk_rope_dim)]
            mats += [(spec.kv_lora_rank, N * (spec.qk_nope_dim + spec.v_head_dim)), (N * spec.v_head_dim, D)]
            vectors += [spec.q_lora_rank, spec.kv_lora_rank]
        else:
            mats += [(D, N * H), (D, K * H), (D, K * H), (N * H, D)]
        if spec.n_experts and layer >= spec.n_dense_layers:
            used = spec.top_k if active else spec.n_experts
            for _ in range(used + spec.n_shared_experts):
                mats += [(D, spec.d_expert)] * 3
            mats.append((D, spec.n_experts))
            if spec.n_shared_experts:
                vectors.append(spec.n_experts)  # DeepSeek-V3's routing bias
        else:
            mats += [(D, spec.d_ff)] * 3
    return sum(a * b for a, b in mats) + sum(vectors)


@pytest.mark.parametrize(
    ("name", "published", "tol"),
    [
        ("Llama-2-7B", 6.738e9, 0.005),
        ("Llama-3-8B", 8.030e9, 0.005),
        ("Llama-3-70B", 70.554e9, 0.005),
        ("Llama-3.1-405B", 405.853e9, 0.005),
        ("Mixtral-8x7B", 46.70e9, 0.005),
        ("DeepSeek-V3", 671e9, 0.02),
    ],
)
def test_catalogue_totals_meet_published_sizes(name, published, tol):
    spec = model_spec.get_spec(name)
    n = model_spec.param_count(spec)
    assert n == _loop_count(spec)
    assert abs(model_spec.relative_error(n, published)) < tol


def test_exact_llama_counts():
    # the well-known exact sizes of the released checkpoints
    assert model_spec.param_count(model_spec.LLAMA2_7B) == 6_738_415_616
    assert model_spec.param_count(model_spec.LLAMA3_8B) == 8_030_261_248
    assert model_spec.param_count(model_spec.LLAMA3_70B) == 70_553_706_496
    assert model_spec.param_count(model_spec.LLAMA31_405B) == 405_853_388_800
    assert model_spec.param_count(model_spec.CUSTOM) == 1_235_814_400  # Llama-3.2-1B, tied


def test_moe_active_counts():
    assert model_spec.param_count(model_spec.MIXTRAL_8X7B, active=True) == _loop_count(
        model_spec.MIXTRAL_8X7B, active=True
    )
    assert model_spec.param_count(model_spec.MIXTRAL_8X7B, active=True) == pytest.approx(12.88e9, rel=0.005)
    v3 = model_spec.param_count(model_spec.DEEPSEEK_V3, active=True)
    assert v3 == _loop_count(model_spec.DEEPSEEK_V3, active=True)
    assert v3 == pytest.approx(37e9, rel=0.02)
    # the 671B excludes the MTP module; with it the count is 682.6B (685B counts its copies of embedding and head)
    with_mtp = model_spec.param_count(model_spec.DEEPSEEK_V3, include_mtp=True)
    assert with_mtp - model_spec.param_count(model_spec.DEEPSEEK_V3) == pytest.approx(11.61e9, rel=0.001)
    assert with_mtp + 2 * 129280 * 7168 == pytest.approx(685e9, rel=0.002)


def test_breakdown_shares_llama3_70b():
    # 002 A2.10: embeddings 3%, attention 17%, FFN 80%
    s = model_spec.param_breakdown(model_spec.LLAMA3_70B).shares()
    assert round(s["embeddings"], 2) == 0.03 and round(s["attention"], 2) == 0.17 and round(s["ffn"], 2) == 0.80
    assert sum(s.values()) == pytest.approx(1.0)


def test_dense_active_equals_total_and_tying():
    b = model_spec.param_breakdown(model_spec.LLAMA3_8B)
    assert b.active == b.total and b.router == 0
    untied = model_spec.CUSTOM.replace(tied=False)
    assert (
        model_spec.param_count(untied) - model_spec.param_count(model_spec.CUSTOM) == 128256 * 2048
    )  # 002 A2.10: 2.6e8


def test_simple_formula_matches_an_mha_spec():
    mha = model_spec.LLAMA3_70B.replace(n_kv_heads=64)
    assert (
        float(model_spec.simple_param_count(128256, 8192, 80, 28672)) == model_spec.param_count(mha) - 8192
    )  # no final norm


def test_kv_cache_per_token():
    assert model_spec.kv_cache_bytes_per_token(model_spec.LLAMA3_70B) == 320 * 1024
    assert model_spec.kv_cache_bytes_per_token(model_spec.LLAMA3_70B, mha=True) == 2560 * 1024
    # MLA: (512 + 64) values per layer per token, 61 layers, bf16 = 70,272 bytes = 68.6 KiB (not 2 L K H b)
    assert model_spec.kv_values_per_token(model_spec.DEEPSEEK_V3) == 61 * 576
    assert model_spec.kv_cache_bytes_per_token(model_spec.DEEPSEEK_V3) / 1024 == pytest.approx(68.625)
    assert model_spec.kv_cache_bytes_per_token(model_spec.DEEPSEEK_V3, mha=True) == 2 * 61 * 128 * 128 * 2


def test_forward_flops_per_token_is_2n_plus_attention():
    spec = model_spec.LLAMA2_7B  # MHA: per layer 4 S D for the scores and the weighted sum
    base = model_spec.forward_flops_per_token(spec, 0)
    n_mult = model_spec.param_count(spec) - 32000 * 4096 - (2 * 32 + 1) * 4096  # minus the lookup and the norm gains
    assert base == 2 * n_mult
    assert model_spec.forward_flops_per_token(spec, 1000) - base == 32 * 4 * 1000 * 4096
    # 002 A10-05's cross-check of A10-04: without attention and unembedding, L 24 B S D^2 = 2 (12 L D^2) B S
    B, S, D, L, V = 2, 100, 4096, 32, 32000
    f = model_spec.forward_flops_formula(B, S, D, L, V)
    assert f - L * 4 * B * S**2 * D - 2 * B * S * D * V == pytest.approx(2 * (12 * L * D**2) * B * S, rel=1e-12)


@pytest.mark.parametrize(
    "changes",
    [
        {"n_heads": 0},
        {"n_kv_heads": 3},  # does not divide 32 heads
        {"d_model": 4100},  # not a multiple of 32 heads, no head_dim
        {"top_k": 2},  # MoE fields on a dense model
        {"layers": 2.5},
    ],
)
def test_bad_specs_raise(changes):
    with pytest.raises(ValueError):
        model_spec.LLAMA2_7B.replace(**changes)


def test_unknown_model():
    with pytest.raises(ValueError, match="unknown model"):
        model_spec.get_spec("GPT-5")
