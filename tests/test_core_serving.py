"""core.serving: roofline, decode bound, KV capacity, paged waste, speculative decoding, quantisation, MoE memory."""

import numpy as np
import pytest
import torch
from scipy import stats

from core import serving
from core.hardware import GIB, GPUS
from core.model_spec import CUSTOM, DEEPSEEK_V3, LLAMA3_8B, LLAMA3_70B, MIXTRAL_8X7B, param_count


def test_ridge_point_and_decode_bound():
    assert GPUS["H100"].ridge_point == pytest.approx(295.2, abs=0.05)  # 989 / 3.35
    t = serving.decode_time_bound(LLAMA3_70B, "H100")
    assert t == pytest.approx(2 * param_count(LLAMA3_70B) / 3.35e12) and round(1e3 * t) == 42  # 002 A8.1
    assert round(1 / t) == 24  # at most 24 tokens/s (A10-11)
    # TP shards the bytes each GPU reads: 8 GPUs, 1/8 of the time, plus 2 all-reduces per layer
    assert serving.decode_time_bound(LLAMA3_70B, "H100", tp=8) == pytest.approx(t / 8)
    assert serving.decode_time_bound(LLAMA3_70B, "H100", tp=8, allreduce_latency_s=1e-5) == pytest.approx(
        t / 8 + 2 * 80 * 1e-5
    )
    with pytest.raises(ValueError, match="does not divide"):
        serving.decode_time_bound(LLAMA3_70B, "H100", tp=3)


def test_intensity_grows_with_batch():
    B = np.array([1, 8, 64, 512])
    got = serving.decode_intensity(LLAMA3_70B, B)
    assert np.all(np.diff(got) > 0)
    assert got[0] == pytest.approx(1.0, rel=0.02)  # 002 A10-11: about 1 FLOP/byte at batch 1
    np.testing.assert_allclose(got[:3], B[:3], rtol=0.02)  # about B while the weights dominate the bytes
    assert float(serving.simple_intensity(7.06e10, 295)) == 295
    assert float(serving.prefill_intensity(LLAMA3_70B, 2048)) == pytest.approx(2048, rel=0.01)
    # the KV cache read at long context pulls decode intensity down
    assert float(serving.decode_intensity(LLAMA3_70B, 64, context=32768)) < got[2] / 2


def test_step_roofline_is_max_of_memory_and_compute():
    st = serving.forward_step(LLAMA3_70B, "H100", batch=[1, 1024], new_tokens=1, context=0)
    np.testing.assert_allclose(st.seconds, np.maximum(st.bytes / 3.35e12, st.flops / 989e12))
    assert st.memory_seconds[0] > st.compute_seconds[0] and st.compute_seconds[1] > st.memory_seconds[1]


def test_moe_reads_only_touched_experts():
    one = float(serving.weight_bytes_read(MIXTRAL_8X7B, 1))
    assert one == pytest.approx(2 * param_count(MIXTRAL_8X7B, active=True), rel=1e-9)
    assert float(serving.weight_bytes_read(MIXTRAL_8X7B, 10_000)) == pytest.approx(2 * param_count(MIXTRAL_8X7B))
    acc = serving.moe_accounting(DEEPSEEK_V3)
    assert acc.total_params == pytest.approx(671e9, rel=0.02) and acc.active_params == pytest.approx(37e9, rel=0.02)
    assert acc.weight_bytes == 2 * acc.total_params


def test_kv_capacity_a10_08():
    at8k = serving.kv_sequences_that_fit(LLAMA3_70B, 8192, n_gpus=4, kv_budget_bytes=170 * GIB)
    assert round(at8k.weights / GIB) == 131 and round(at8k.left_after_weights / GIB) == 189
    assert at8k.per_sequence == 2.5 * GIB and at8k.sequences == 68
    assert serving.kv_sequences_that_fit(LLAMA3_70B, 131072, n_gpus=4, kv_budget_bytes=170 * GIB).sequences == 4
    fp8 = serving.kv_sequences_that_fit(LLAMA3_70B, 8192, n_gpus=4, kv_budget_bytes=170 * GIB, kv_bytes_per_value=1)
    assert fp8.sequences == 136
    # with a reserve instead of a fixed budget
    r = serving.kv_sequences_that_fit(LLAMA3_70B, 8192, n_gpus=4, reserve_bytes=4 * GIB)
    assert r.kv_budget == pytest.approx(4 * 80 * GIB - 2 * param_count(LLAMA3_70B) - 4 * GIB)
    assert r.sequences == int(r.kv_budget // (2.5 * GIB))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_gpus": 0},  # zero GPUs
        {"n_gpus": 1},  # 131 GiB of weights on one 80 GiB card: does not fit
        {"n_gpus": 4, "kv_budget_bytes": 300 * GIB},  # more than is left after the weights
        {"n_gpus": 4, "reserve_bytes": -1.0},
    ],
)
def test_kv_capacity_bad_input(kwargs):
    with pytest.raises(ValueError):
        serving.kv_sequences_that_fit(LLAMA3_70B, 8192, **kwargs)


def test_allocation_waste():
    w = serving.allocation_waste(np.array([200]), 4096)
    assert w.contiguous == pytest.approx(1 - 200 / 4096) and round(w.contiguous, 2) == 0.95  # 002 A8.4
    assert w.paged_slots == 208 and w.paged == pytest.approx(8 / 208)
    lengths = np.array([1, 16, 17, 100])
    w = serving.allocation_waste(lengths, 128, block=16)
    assert w.paged_slots == 16 + 16 + 32 + 112
    assert w.paged_slots - w.used_slots < 16 * lengths.size  # at most block - 1 per sequence
    with pytest.raises(ValueError):
        serving.allocation_waste(np.array([300]), 128)


def test_quantisation_bits():
    assert serving.BITS_PER_PARAM["nf4_dq"] == pytest.approx(4.127, abs=5e-4)  # Dettmers et al. 2023
    assert serving.BITS_PER_PARAM["nf4"] == 4.5
    assert serving.bytes_per_param("int8") == 1
    t16 = serving.decode_time_bound(LLAMA3_70B, "H100")
    t4 = serving.decode_time_bound(LLAMA3_70B, "H100", weight_format="nf4_dq")
    assert t4 / t16 == pytest.approx(4.127 / 16, abs=1e-3)
    with pytest.raises(ValueError):
        serving.bytes_per_param("int3")


def test_expected_tokens_against_a_loop():
    for alpha in (0.0, 0.3, 0.8, 0.999, 1.0):
        for k in (0, 1, 4, 8):
            want = sum(alpha**i for i in range(k + 1))
            assert float(serving.expected_tokens_per_forward(alpha, k)) == pytest.approx(want, rel=1e-9)
    # Leviathan et al. 2023, improvement factor (1 - a^(k+1)) / ((1 - a)(k c + 1))
    a, k, c = 0.8, 4, 0.05
    assert float(serving.speculative_speedup(a, k, c)) == pytest.approx((1 - a ** (k + 1)) / ((1 - a) * (k * c + 1)))


def test_speculative_speedup_shrinks_below_one_with_batch():
    B = np.array([1, 16, 256, 2048])
    sp = serving.speculative_speedup_vs_batch(0.8, 4, B, LLAMA3_70B, CUSTOM, tp=8)
    assert sp[0] > 2.5 and np.all(np.diff(sp) < 0) and sp[-1] < 1
    # a draft as expensive as a big model gives less
    assert serving.speculative_speedup_vs_batch(0.8, 4, 1, LLAMA3_70B, LLAMA3_8B, tp=8) < sp[0]


def test_acceptance_rule_leaves_target_unchanged():
    p = torch.tensor([0.05, 0.30, 0.10, 0.25, 0.0, 0.20, 0.08, 0.02], dtype=torch.float64)
    q = torch.tensor([0.20, 0.10, 0.10, 0.10, 0.20, 0.10, 0.10, 0.10], dtype=torch.float64)
    n = 200_000
    g = torch.Generator().manual_seed(0)
    x, accepted = serving.speculative_sample(p, q, n, g)
    counts = np.bincount(x.cpu().numpy(), minlength=p.numel())
    assert counts[4] == 0  # p = 0 is never produced
    keep = p.numpy() > 0
    chi2 = stats.chisquare(counts[keep], n * p.numpy()[keep])
    assert chi2.pvalue > 1e-3
    # the acceptance rate is sum_x min(p, q) (Leviathan et al. 2023)
    assert float(accepted.double().mean()) == pytest.approx(float(torch.minimum(p, q).sum()), abs=0.005)
    # the draft alone is far from p: the same test rejects it
    raw = np.bincount(torch.multinomial(q, n, True, generator=g).numpy(), minlength=8)
    assert stats.chisquare(raw[keep], n * p.numpy()[keep] * raw[keep].sum() / n).pvalue < 1e-10
    with pytest.raises(ValueError):
        serving.speculative_sample(p, q[:4], 10)


def test_speculative_sample_seed_makes_its_generator_on_the_tensors_device():
    p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
    q = torch.tensor([0.2, 0.2, 0.6], dtype=torch.float64)
    x1, a1 = serving.speculative_sample(p, q, 1000, seed=3)
    x2, a2 = serving.speculative_sample(p, q, 1000, seed=3)
    assert torch.equal(x1, x2) and torch.equal(a1, a2)  # seeded: the same draws
    # a seed is a generator on p's device seeded with it (here the CPU): the same draws as that generator
    x3, a3 = serving.speculative_sample(p, q, 1000, torch.Generator(device=p.device).manual_seed(3))
    assert torch.equal(x1, x3) and torch.equal(a1, a3)
    assert x1.device == p.device and a1.device == p.device
    # acceptance rate sum_x min(p, q) = 0.2 + 0.2 + 0.2 = 0.6
    assert float(serving.speculative_sample(p, q, 100_000, seed=0)[1].double().mean()) == pytest.approx(0.6, abs=0.01)
    with pytest.raises(ValueError):
        serving.speculative_sample(p, q, 10, torch.Generator(), seed=1)


def test_attainable_flops_is_the_roofline():
    h = GPUS["H100"]
    got = serving.attainable_flops([1.0, h.ridge_point, 1e4], "H100")
    assert got[0] == pytest.approx(h.bandwidth) and got[1] == pytest.approx(h.peak_flops)
    assert got[2] == h.peak_flops
    assert serving.attainable_flops(1e4, "H100", sparse=True) == h.sparse_flops


def test_sequences_by_allocator_against_a_loop():
    lengths = np.array([200, 17, 4096, 1000])
    contiguous, paged = serving.sequences_by_allocator(40 * GIB, 320 * 1024, lengths, 4096, 16)
    slots = sum(-(-int(n) // 16) * 16 for n in lengths) / len(lengths)  # 208 + 32 + 4096 + 1008, averaged
    assert contiguous == pytest.approx(40 * GIB / (4096 * 320 * 1024))  # 32 sequences of 4,096 tokens
    assert paged == pytest.approx(40 * GIB / (slots * 320 * 1024))
    assert paged > 3 * contiguous
