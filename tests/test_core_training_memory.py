"""core.training_memory: recipes, ZeRO sharding, activations, bubble, time and cost against the seeds' numbers."""

import math

import pytest

from core import training_memory
from core.hardware import GB, GB_VS_GIB_LOSS, GIB, GPUS
from core.model_spec import LLAMA2_7B, LLAMA3_70B, MIXTRAL_8X7B, param_count


def test_recipes_bytes_per_param():
    # 002 A10-09: 16 standard, 18 with fp32 gradients, 10 with 8-bit Adam, 8 pure bf16; 12 of 16 in the optimizer
    totals = {k: r.total for k, r in training_memory.RECIPES.items()}
    assert totals == {"standard": 16, "fp32_grads": 18, "adam8bit": 10, "pure_bf16": 8}
    assert training_memory.RECIPES["standard"].optimizer == 12
    assert sum(training_memory.RECIPES["adam8bit"].items().values()) == 10


def test_lesson_states():
    assert training_memory.state_memory(7e9).total == pytest.approx(112 * GB)  # lesson 001 section 3.2
    assert training_memory.state_memory(1.5e9).total == pytest.approx(24 * GB)  # worked example A
    assert training_memory.state_memory(70e9).total == pytest.approx(1120 * GB)  # 002 A5.1


def test_zero_stages_against_a_direct_sum():
    N, tp, pp, dp = 1e9, 2, 2, 4
    r = training_memory.RECIPES["standard"]
    n = N / (tp * pp)
    expected = {
        0: n * 16,
        1: n * (2 + 2 + 12 / dp),
        2: n * (2 + (2 + 12) / dp),
        3: n * 16 / dp,
    }
    for z, want in expected.items():
        assert training_memory.state_memory(N, r, z, tp, pp, dp).total == pytest.approx(want)


def test_a10_10_sharding_100b():
    # TP 8 x PP 8 x DP 8 with ZeRO-1: 16 -> 4 + 12/8 = 5.5 bytes/param, 8.0 GiB of weight-related memory per card
    plain = training_memory.state_memory(100e9, "standard", 0, 8, 8, 8)
    assert plain.total == pytest.approx(2.5e10) and round(plain.total / GIB) == 23
    z1 = training_memory.state_memory(100e9, "standard", 1, 8, 8, 8)
    assert z1.bytes_per_param == 5.5
    assert round(z1.total / GIB, 1) == 8.0
    assert training_memory.microbatches_for_bubble(8, 0.10) == 63
    assert training_memory.pipeline_bubble(8, 63) <= 0.10 < training_memory.pipeline_bubble(8, 62)


def test_gb_vs_gib_trap():
    assert GB_VS_GIB_LOSS == pytest.approx(0.0687, abs=1e-4)
    h100 = GPUS["H100"]
    assert 512 * h100.memory_bytes == 40 * 2**40 and round(512 * h100.memory_bytes / 1e12) == 44


def test_activation_element_count_and_crossovers():
    # 002 A10-03: L (14 B S D + B N S^2); crossover 14 D / N = 1,792 for N = 64, D = 8192
    assert float(training_memory.activation_crossover(8192, 64)) == 1792
    B, S, D, N, L = 2, 1792, 8192, 64, 80
    el = float(training_memory.activation_elements(B, S, D, N, L))
    assert el == L * (14 * B * S * D + B * N * S * S)
    assert 14 * B * S * D == B * N * S * S  # the two terms are equal at the crossover
    assert float(training_memory.activation_elements(B, S, D, N, L, flash=True)) == L * (14 * B * S * D + B * N * S)
    # Korthikanti et al. 2022: 34 s b h + 5 a s^2 b per layer; the terms meet at s = 34 h / (5 a) = 870.4
    assert float(training_memory.korthikanti_crossover(8192, 64)) == pytest.approx(870.4)
    s = 870.4
    assert float(training_memory.layer_activation_bytes(s, 1, 8192, 64)) == pytest.approx(2 * 34 * s * 8192)


def test_layer_activation_bytes_variants():
    s, b, h, a, t = 2048, 1, 4096, 32, 4
    sbh = s * b * h
    assert float(training_memory.layer_activation_bytes(s, b, h, a, t, sequence_parallel=False)) == pytest.approx(
        sbh * (10 + 24 / t + 5 * a * s / (h * t))
    )
    assert float(training_memory.layer_activation_bytes(s, b, h, a, t, recompute="selective")) == pytest.approx(
        34 * sbh / t
    )
    assert float(training_memory.layer_activation_bytes(s, b, h, a, t, flash=True)) == pytest.approx(34 * sbh / t)
    assert float(training_memory.layer_activation_bytes(s, b, h, a, 1, recompute="full")) == 2 * sbh


def test_activation_bytes_pipeline_holds_l_layers():
    one = training_memory.activation_bytes(LLAMA3_70B, 4096, 1, 8, 1, recompute="selective")
    piped = training_memory.activation_bytes(LLAMA3_70B, 4096, 1, 8, 8, recompute="selective")
    assert piped == pytest.approx(one)  # 1F1B: 10 layers x 8 micro-batches in flight = 80 layers' worth


def test_recompute_cost():
    assert float(training_memory.recompute_cost(LLAMA2_7B, 4096, "full")) == pytest.approx(1 / 3)  # 6ND -> 8ND
    assert float(training_memory.recompute_cost(LLAMA2_7B, 4096, "none")) == 0
    sel = float(training_memory.recompute_cost(LLAMA2_7B, 4096, "selective"))
    assert 0 < sel < 1 / 3
    # selective recomputes 4 S D per token per layer (QK^T and AV) of a forward of 2 N' + 4 L S D
    n_mult = param_count(LLAMA2_7B) - 32000 * 4096 - 65 * 4096
    fwd = 2 * n_mult + 32 * 4 * 4096 * 4096
    assert sel == pytest.approx(32 * 4 * 4096 * 4096 / (3 * fwd))


def test_training_memory_components_and_fit():
    m = training_memory.training_memory(LLAMA3_70B, "standard", 1, 8, 8, 8, seq=4096, mbs=1, recompute="selective")
    assert m.n_gpus == 512
    assert m.states == pytest.approx(
        training_memory.state_memory(param_count(LLAMA3_70B), "standard", 1, 8, 8, 8).total
    )
    assert m.total == pytest.approx(sum(m.components().values()))
    assert m.fits("H100")
    full_dp = training_memory.training_memory(LLAMA2_7B, dp=8)
    assert not full_dp.fits("H100") and full_dp.headroom("H100") < 0
    # MoE: memory by total parameters (every expert resident)
    assert training_memory.training_memory(MIXTRAL_8X7B).weights == 2 * param_count(MIXTRAL_8X7B)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tp": 0},  # zero GPUs
        {"dp": 0},
        {"tp": 3},  # does not divide 64 heads
        {"pp": 81},  # more stages than layers
        {"zero": 4},
        {"recompute": "some"},
        {"recipe": "adafactor"},
        {"seq": 0},
    ],
)
def test_bad_training_input_raises(kwargs):
    with pytest.raises(ValueError):
        training_memory.training_memory(LLAMA3_70B, **kwargs)


def test_pipeline_bubble_conventions():
    assert float(training_memory.pipeline_bubble(8, 8)) == pytest.approx(7 / 15)  # 47% of wall clock (002 A10-06)
    assert float(training_memory.pipeline_bubble_megatron(8, 8)) == 0.875
    assert float(training_memory.pipeline_bubble(1, 5)) == 0
    with pytest.raises(ValueError):
        training_memory.pipeline_bubble(8, 0)


def test_mfu_a10_06():
    m = float(training_memory.mfu(12_000, 7.06e10, 1024, 989e12))
    assert m == pytest.approx(6 * 7.06e10 * 12_000 / (1024 * 989e12)) and round(100 * m, 1) == 0.5
    assert (
        round(float(training_memory.tokens_per_s_for_mfu(0.4, 7.06e10, 1024, 989e12)), -4) == 960_000
    )  # "about 950,000"


def test_training_run_a10_12_and_traps():
    run = training_memory.training_run(7.06e10, 15e12, 2048, 989e12, 0.40, 2.0)
    assert run.flops == pytest.approx(6.354e24)
    assert round(run.days) == 91
    assert run.cost == pytest.approx(2048 * run.days * 24 * 2.0)
    traps = {
        t.name: t for t in training_memory.training_traps(7.06e10, 15e12, 2048, "H100", 0.40, total_params=10 * 7.06e10)
    }
    assert traps["forgot the MFU"].ratio == pytest.approx(0.4)  # 2.5x too short
    assert traps["sparse peak"].ratio == pytest.approx(989 / 1979)
    assert traps["MoE total instead of active"].ratio == pytest.approx(10)
    assert traps["GB instead of GiB"].ratio == pytest.approx(1 - GB_VS_GIB_LOSS)
    # lesson 001 check yourself 1: 7B on 2T tokens at 40% MFU is about 2,460 H100 GPU-days
    assert round(training_memory.training_run(7e9, 2e12, 1, 989e12, 0.4).days, -1) == 2460
    with pytest.raises(ValueError):
        training_memory.training_run(7e9, 2e12, 0, 989e12, 0.4)
    with pytest.raises(ValueError):
        training_memory.training_run(7e9, 2e12, 8, 989e12, 40)  # MFU given in percent


def test_microbatches_for_bubble_is_least():
    for p in (2, 4, 8, 16):
        for target in (0.05, 0.1, 0.25):
            m = training_memory.microbatches_for_bubble(p, target)
            assert float(training_memory.pipeline_bubble(p, m)) <= target + 1e-12
            assert m == 1 or float(training_memory.pipeline_bubble(p, m - 1)) > target
    assert math.isclose(training_memory.microbatches_for_bubble(1, 0.1), 1)
