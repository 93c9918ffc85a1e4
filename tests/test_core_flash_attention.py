"""core.flash_attention: the tiled forward equals torch's fused attention, its trace equals the statistics computed
directly, the causal trace skips exactly the blocks above the diagonal, and the HBM counts equal a plain count of
Algorithm 0's and Algorithm 1's loads and stores (Dao et al. 2022)."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp

from core import flash_attention as fa

ROOT = Path(__file__).resolve().parents[1]


def _qkv(lead, t_q, t_k, d, d_v=None, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((*lead, t_q, d)).astype(dtype)
    k = rng.standard_normal((*lead, t_k, d)).astype(dtype)
    v = rng.standard_normal((*lead, t_k, d_v or d)).astype(dtype)
    return q, k, v


def _allowed(t_q, t_k, causal):
    """Boolean (T_q, T_k): key j visible to query i; causal is bottom-right aligned, j <= i + (T_k - T_q)."""
    return np.array([[(not causal) or j <= i + t_k - t_q for j in range(t_k)] for i in range(t_q)])


def _sdpa(q, k, v, causal, scale=None):
    """torch's own attention; an explicit bottom-right mask when T_q != T_k (is_causal is top-left aligned)."""
    import torch
    import torch.nn.functional as F

    tq, tk = torch.from_numpy(q), torch.from_numpy(k)
    if causal and q.shape[-2] != k.shape[-2]:
        mask = torch.from_numpy(_allowed(q.shape[-2], k.shape[-2], True))
        out = F.scaled_dot_product_attention(tq, tk, torch.from_numpy(v), attn_mask=mask, scale=scale)
    else:
        out = F.scaled_dot_product_attention(tq, tk, torch.from_numpy(v), is_causal=causal, scale=scale)
    return out.numpy()


def _scores(q, k, causal, scale=None):
    """S = scale · Q K^T with -inf where masked, in float64, written out with einsum."""
    s = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    S = np.einsum("...id,...jd->...ij", q.astype(np.float64), k.astype(np.float64)) * s
    return np.where(_allowed(q.shape[-2], k.shape[-2], causal), S, -np.inf)


# --- the output equals torch.nn.functional.scaled_dot_product_attention ----------------------------------------

SHAPES = [  # (T, block_q, block_k): even, ragged last blocks, one-row blocks, blocks larger than T
    (16, 4, 8),
    (13, 4, 5),
    (13, 5, 3),
    (7, 1, 1),
    (6, 8, 16),
    (9, 9, 2),
]


@pytest.mark.parametrize("dtype, atol", [(np.float64, 1e-12), (np.float32, 2e-6)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T, bq, bk", SHAPES)
def test_output_equals_torch_sdpa(T, bq, bk, causal, dtype, atol):
    q, k, v = _qkv((2, 3), T, T, 8, seed=T + bq + bk, dtype=dtype)
    out = fa.flash_attention_forward(q, k, v, bq, bk, causal=causal)
    assert out.output.dtype == dtype and out.output.shape == (2, 3, T, 8)
    np.testing.assert_allclose(out.output, _sdpa(q, k, v, causal), atol=atol, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("t_q, t_k, bq, bk", [(5, 11, 2, 4), (3, 17, 4, 5), (11, 11, 3, 4), (1, 6, 1, 4)])
def test_t_q_different_from_t_k_and_d_v_different_from_d(t_q, t_k, bq, bk, causal):
    q, k, v = _qkv((4,), t_q, t_k, 6, d_v=3, seed=t_q * t_k)
    out = fa.flash_attention_forward(q, k, v, bq, bk, causal=causal, scale=0.7)
    np.testing.assert_allclose(out.output, _sdpa(q, k, v, causal, scale=0.7), atol=1e-12, rtol=0)


def test_2d_inputs_large_logits_and_integer_inputs():
    q, k, v = _qkv((), 10, 10, 4, seed=3)
    out = fa.flash_attention_forward(q * 300, k * 300, v, 3, 4)  # logits in the thousands: no overflow
    assert np.isfinite(out.output).all()
    np.testing.assert_allclose(out.output, _sdpa(q * 300, k * 300, v, False), atol=1e-10, rtol=0)
    qi, ki, vi = (np.arange(12).reshape(4, 3) % 5 for _ in range(3))
    got = fa.flash_attention_forward(qi, ki, vi, 2, 3, causal=True)
    assert got.output.dtype == np.float64
    np.testing.assert_allclose(got.output, _sdpa(*(x.astype(float) for x in (qi, ki, vi)), True), atol=1e-12)


# --- the trace -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("t_q, t_k, bq, bk", [(13, 13, 4, 5), (6, 10, 4, 3), (8, 8, 8, 8)])
def test_final_m_and_l_are_the_row_max_and_row_sum(t_q, t_k, bq, bk, causal):
    q, k, v = _qkv((2,), t_q, t_k, 5, seed=7)
    out = fa.flash_attention_forward(q, k, v, bq, bk, causal=causal)
    S = _scores(q, k, causal)  # (2, T_q, T_k)
    m = S.max(axis=-1)
    np.testing.assert_allclose(out.m, m, atol=1e-12, rtol=0)
    np.testing.assert_allclose(out.l, np.exp(S - m[..., None]).sum(axis=-1), atol=1e-12, rtol=1e-13)
    np.testing.assert_allclose(out.logsumexp, logsumexp(S, axis=-1), atol=1e-12, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
def test_every_step_holds_the_statistics_of_the_keys_seen_so_far(causal):
    t_q, t_k, bq, bk = 9, 11, 4, 3
    q, k, v = _qkv((), t_q, t_k, 4, seed=11)
    S = _scores(q, k, causal)  # (T_q, T_k)
    out = fa.flash_attention_forward(q, k, v, bq, bk, causal=causal)
    T_r, T_c = math.ceil(t_q / bq), math.ceil(t_k / bk)
    # Algorithm 1's order: key blocks outside, query blocks inside
    assert [(s.q_block, s.k_block) for s in out.trace] == [(i, j) for j in range(T_c) for i in range(T_r)]
    for s in out.trace:
        (r0, r1), (c0, c1) = s.rows, s.cols
        assert (r0, r1, c0, c1) == (s.q_block * bq, min(t_q, (s.q_block + 1) * bq), s.k_block * bk, min(t_k, c0 + bk))
        seen = S[r0:r1, :c1]  # every key up to the end of this block
        m = seen.max(axis=1)
        np.testing.assert_allclose(s.m, m, atol=1e-13, rtol=0)
        np.testing.assert_allclose(s.l, np.exp(seen - m[:, None]).sum(axis=1), rtol=1e-13)
        m_old = S[r0:r1, :c0].max(axis=1) if c0 else np.full(r1 - r0, -np.inf)
        np.testing.assert_allclose(s.rescale, 1.0 if s.skipped else np.exp(m_old - m), rtol=1e-13)
    assert any(np.any(s.rescale < 1) and not np.all(s.rescale == 0) for s in out.trace)  # a max that moved


@pytest.mark.parametrize(
    "t_q, t_k, bq, bk", [(16, 16, 4, 4), (13, 13, 4, 3), (13, 13, 2, 5), (5, 9, 2, 2), (6, 6, 8, 2)]
)
def test_causal_trace_skips_exactly_the_blocks_above_the_diagonal(t_q, t_k, bq, bk):
    q, k, v = _qkv((), t_q, t_k, 3)
    allowed = _allowed(t_q, t_k, True)
    out = fa.flash_attention_forward(q, k, v, bq, bk, causal=True)
    for s in out.trace:
        (r0, r1), (c0, c1) = s.rows, s.cols
        assert s.skipped == (not allowed[r0:r1, c0:c1].any()), (s.q_block, s.k_block)
    assert any(s.skipped for s in out.trace) == ((t_q, bq, bk) != (6, 8, 2))  # one query block sees every key
    assert not any(s.skipped for s in fa.flash_attention_forward(q, k, v, bq, bk).trace)
    if (t_q, t_k, bq, bk) == (16, 16, 4, 4):  # square blocks: the 6 blocks strictly above the diagonal
        assert sorted((s.q_block, s.k_block) for s in out.trace if s.skipped) == [
            (i, j) for i in range(4) for j in range(4) if j > i
        ]


# --- HBM traffic ---------------------------------------------------------------------------------------------


def _algorithm_1_loop_count(t_q, t_k, d, d_v, bq, bk, causal=False):
    """Loads and stores of Algorithm 1, counted line by line in a plain loop (skipping all-masked causal blocks)."""
    reads = 0
    writes = t_q * d_v + t_q + t_q  # line 2: O, l, m
    for c0 in range(0, t_k, bk):
        cols = min(bk, t_k - c0)
        reads += cols * d + cols * d_v  # line 6: K_j, V_j
        for r0 in range(0, t_q, bq):
            rows = min(bq, t_q - r0)
            if causal and c0 > r0 + rows - 1 + t_k - t_q:
                continue
            reads += rows * d + rows * d_v + rows + rows  # line 8: Q_i, O_i, l_i, m_i
            writes += rows * d_v + rows + rows  # lines 12-13: O_i, l_i, m_i
    return reads, writes


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("t_q, t_k, d, d_v, bq, bk", [(16, 16, 4, 4, 4, 8), (13, 13, 5, 5, 3, 4), (7, 12, 3, 2, 5, 5)])
def test_forward_counters_equal_a_loop_count_of_algorithm_1(t_q, t_k, d, d_v, bq, bk, causal):
    q, k, v = _qkv((3,), t_q, t_k, d, d_v=d_v)
    out = fa.flash_attention_forward(q, k, v, bq, bk, causal=causal)
    reads, writes = _algorithm_1_loop_count(t_q, t_k, d, d_v, bq, bk, causal)
    assert (out.hbm_reads, out.hbm_writes) == (3 * reads, 3 * writes)  # 3 independent heads


@pytest.mark.parametrize("n, d, bq, bk", [(16, 4, 4, 8), (13, 5, 3, 4), (64, 8, 8, 5), (10, 3, 16, 16)])
def test_flash_count_equals_the_loop_and_the_instrumented_forward(n, d, bq, bk):
    traffic = fa.attention_hbm_traffic(n, d, "flash", block_k=bk)
    assert (traffic.reads, traffic.writes) == _algorithm_1_loop_count(n, n, d, d, bq, bk)
    out = fa.flash_attention_forward(*_qkv((), n, n, d), bq, bk)
    assert (out.hbm_reads, out.hbm_writes) == (traffic.reads, traffic.writes)
    assert traffic.total == traffic.reads + traffic.writes


@pytest.mark.parametrize("n, d", [(1024, 64), (4096, 128), (7, 3)])
def test_standard_count_is_algorithm_0_written_out(n, d):
    q = k = v = o = n * d  # Q, K, V, O: n x d
    s = p = n * n  # S, P: n x n
    line_1 = (q + k, s)  # (reads, writes): read Q, K; write S
    line_2 = (s, p)  # read S; write P
    line_3 = (p + v, o)  # read P, V; write O
    t = fa.attention_hbm_traffic(n, d, "standard")
    assert t.reads == line_1[0] + line_2[0] + line_3[0]
    assert t.writes == line_1[1] + line_2[1] + line_3[1]
    assert fa.attention_hbm_bytes(n, d, 100 * 2**10, "standard", 2) == 2 * (4 * n * d + 4 * n * n)


def test_block_sizes_of_algorithm_1_line_1():
    for d, M in [(64, 49_152), (128, 100_000), (64, 100), (16, 64 * 16)]:
        b = math.ceil(M / (4 * d))
        assert fa.flash_block_sizes(d, M) == (min(b, d), b)
    assert fa.flash_block_sizes(64, 49_152) == (64, 192)
    assert fa.flash_block_sizes(128, 100_000) == (128, 196)
    # bytes: M = sram_bytes / bytes_per_element elements, B_c = ceil(M / 4d), total = 3nd + 2n + T_c (3nd + 4n)
    n, d, sram = 2048, 64, 96 * 2**10
    B_c = math.ceil(sram // 2 / (4 * d))
    T_c = math.ceil(n / B_c)
    assert fa.attention_hbm_bytes(n, d, sram, "flash", 2) == 2 * (3 * n * d + 2 * n + T_c * (3 * n * d + 4 * n))


def test_flash_traffic_grows_as_n2_d2_over_m():
    d, M = 64, 64 * 2**10
    # halving M about doubles the count at large N
    for n in (16_384, 65_536):
        ratio = (
            fa.attention_hbm_traffic(n, d, "flash", sram_elements=M // 2).total
            / fa.attention_hbm_traffic(n, d, "flash", sram_elements=M).total
        )
        assert 1.95 < ratio < 2.0
    # count / (N² d² / M) tends to 12 + 16/d: T_c -> 4Nd/M passes, each moving Q, O, O (3Nd) and l, m (4N)
    ns = np.array([4096, 65_536, 2**20])
    c = fa.attention_hbm_traffic(ns, d, "flash", sram_elements=M).total * M / (ns**2 * d**2)
    limit = 12 + 16 / d
    assert np.all(np.diff(np.abs(c - limit)) < 0) and abs(c[-1] - limit) < 0.01  # 3nd · M / (n d)² = 0.003 left
    # doubling d at fixed M about quadruples it; doubling N about quadruples it
    t = lambda n, dd: fa.attention_hbm_traffic(n, dd, "flash", sram_elements=M).total  # noqa: E731
    assert 3.9 < t(65_536, 128) / t(65_536, 64) < 4.0 and 3.9 < t(131_072, 64) / t(65_536, 64) < 4.1
    # standard / flash = 4N(N + d) / total -> 4M / ((12 + 16/d) d²) at large N: about 4x at d = 64 and 100 KiB fp16
    M = 100 * 2**10 // 2
    for n in (4096, 2**20):
        ratio = fa.attention_hbm_bytes(n, 64, 100 * 2**10, "standard") / fa.attention_hbm_bytes(
            n, 64, 100 * 2**10, "flash"
        )
        assert ratio > 3.8
    assert ratio == pytest.approx(4 * M / ((12 + 16 / 64) * 64**2), rel=1e-3)


def test_counts_take_an_array_of_lengths():
    ns = np.array([128, 1000, 4096])
    for method in ("standard", "flash"):
        got = fa.attention_hbm_bytes(ns, 64, 2**16, method)
        assert list(got) == [fa.attention_hbm_bytes(int(n), 64, 2**16, method) for n in ns]
        got = fa.attention_activation_bytes(ns, 64, 8, method)
        assert list(got) == [fa.attention_activation_bytes(int(n), 64, 8, method) for n in ns]


# --- backward memory -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, d, heads, bpe", [(4096, 128, 32, 2), (2048, 64, 12, 4)])
def test_activation_bytes_p_matrix_vs_output_and_statistics(n, d, heads, bpe):
    assert fa.attention_activation_bytes(n, d, heads, "standard", bpe) == heads * n * n * bpe
    # O at bpe plus one float32 logsumexp per row and head
    assert fa.attention_activation_bytes(n, d, heads, "flash", bpe) == heads * (n * d * bpe + n * 4)
    # the paper's m and l, stored at the matrices' width
    got = fa.attention_activation_bytes(n, d, heads, "flash", bpe, stats_per_row=2, stats_bytes_per_element=bpe)
    assert got == heads * n * (d + 2) * bpe
    assert fa.attention_activation_bytes(4096, 128, 32, "standard") == 1 * 2**30  # 32 · 4096² · 2 B = 1 GiB


# --- arguments -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda q, k, v: fa.flash_attention_forward(q, k, v, 0, 2), "block_q"),
        (lambda q, k, v: fa.flash_attention_forward(q, k, v, 2, 2.5), "block_k"),
        (lambda q, k, v: fa.flash_attention_forward(q, k[:, :3], v, 2, 2), "same last dimension"),
        (lambda q, k, v: fa.flash_attention_forward(q, k, v[:3], 2, 2), "same number of tokens"),
        (lambda q, k, v: fa.flash_attention_forward(q[0], k, v, 2, 2), "shape"),
        (lambda q, k, v: fa.flash_attention_forward(q, k[:2], v[:2], 2, 2, causal=True), "T_q <= T_k"),
        (lambda q, k, v: fa.flash_attention_forward(q * np.nan, k, v, 2, 2), "finite"),
        (lambda q, k, v: fa.flash_attention_forward(q, k, v, 2, 2, scale=-1.0), "scale"),
        (lambda q, k, v: fa.attention_hbm_traffic(0, 4, "flash", block_k=2), "n must"),
        (lambda q, k, v: fa.attention_hbm_traffic(8, 4, "flash"), "exactly one"),
        (lambda q, k, v: fa.attention_hbm_traffic(8, 4, "tiled"), "method"),
        (lambda q, k, v: fa.attention_hbm_bytes(8, 64, 100, "flash"), "d <= M"),
        (lambda q, k, v: fa.attention_activation_bytes(8, 4, 0, "flash"), "heads"),
    ],
)
def test_bad_arguments_raise(call, message):
    q, k, v = _qkv((), 4, 4, 4)
    with pytest.raises(ValueError, match=message):
        call(q, k, v)


def test_first_figure_needs_no_torch():
    code = (
        "import sys, numpy as np; from core import flash_attention as fa; "
        "q = np.ones((6, 4)); r = fa.flash_attention_forward(q, q, q, 2, 4, causal=True); "
        "fa.attention_hbm_bytes(1024, 64, 2**17, 'flash'); fa.attention_hbm_bytes(1024, 64, 2**17, 'standard'); "
        "fa.attention_activation_bytes(1024, 64, 8, 'flash'); print(len(r.trace), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6", "False"]
