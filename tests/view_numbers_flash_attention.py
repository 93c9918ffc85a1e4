"""The tables of tests/test_view_numbers.py for the FlashAttention page: per view (tests/page_numbers.py ``views``), a
list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and (outside the
defaults) new texts show.

The references are written here, in numpy, never from core/flash_attention.py:
- the toy: its seeded Q, K, V (input data, redrawn here with numpy's generator), S = QKᵀ/√d, and each row's running
  max, running sum of e^(S − m) and rescale e^(m_old − m_new) over the keys seen so far, in Algorithm 1's order (key
  blocks outside, query blocks inside); the tiles a causal mask skips counted by hand;
- the HBM traffic: Algorithm 0's reads and writes (4nd + 4n² values) and Algorithm 1's loads and stores line by line
  (3nd + 2n + T_c(3nd + 4n), T_c = ceil(n/B_c), B_c = ceil(M/4d), B_r = min(B_c, d)), 2 bytes a value;
- the backward: heads · n² · 2 bytes of P against heads · (n·d·2 + n·4) bytes of O and an fp32 logsumexp.
"""

from __future__ import annotations

import math

import numpy as np

from tests.page_numbers import Ref
from tests.test_page_numbers import FORMULA, PAPER, _preset
from views import flash_attention as v_flash

FA = v_flash.SPEC
ROUNDOFF = ("float64 round-off: the tiled output equals the one-shot softmax in exact arithmetic "
            "(test_views_flash_attention.py::test_the_tiled_output_equals_a_plain_softmax)")  # fmt: skip
FP16 = "fp16's width in bytes"


# ------------------------------------------------------------------------------------------------ the formulas
def toy(T: int, d: int, seed: int) -> np.ndarray:
    """S = QKᵀ/√d of the seeded toy (Q, K, V drawn in that order, standard normal)."""
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((T, d)), rng.standard_normal((T, d))
    return q @ k.T / math.sqrt(d)


def order(T: int, bq: int, bk: int) -> list[tuple[int, int, int, int]]:
    """(r0, r1, c0, c1) of each step, key blocks outside."""
    return [(r, min(r + bq, T), c, min(c + bk, T)) for c in range(0, T, bk) for r in range(0, T, bq)]


def skipped(T: int, bq: int, bk: int) -> int:
    return sum(c0 > r1 - 1 for r0, r1, c0, c1 in order(T, bq, bk))


def row_stats(s: np.ndarray, row: int, c1: int, c0: int, causal: bool) -> tuple[float, float, float | None]:
    """Row ``row``'s running max and sum over the keys before c1 (the visible ones), and the rescale of this step."""
    keys = range(min(c1, row + 1) if causal else c1)
    seen = s[row, list(keys)]
    m = float(seen.max())
    l = float(np.exp(seen - m).sum())  # noqa: E741
    before = [j for j in keys if j < c0]
    rescale = None if not before else math.exp(float(s[row, before].max()) - m)
    return m, l, rescale


def panel(p: dict) -> Ref:
    T, d, bq, bk, seed = p["fa_tokens"], p["fa_dim"], p["fa_bq"], p["fa_bk"], p["fa_seed"]
    causal, step = p["fa_causal"], p["fa_step"]
    steps = order(T, bq, bk)
    r0, r1, c0, c1 = steps[step - 1]
    s = toy(T, d, seed)
    text = f"step {step} of {len(steps)} queries {r0}–{r1 - 1}, keys {c0}–{c1 - 1} row: m, ℓ, rescale e^(m_old − m_new)"
    values: list = [step, len(steps), r0, r1 - 1, c0, c1 - 1]
    for r in range(r0, min(r1, r0 + v_flash.PANEL_ROWS)):
        m, l, rescale = row_stats(s, r, c1, c0, causal)  # noqa: E741
        text += f" {r}: {m:.3f}, {l:.3f}, " + ("first block" if rescale is None else f"× {rescale:.3f}")
        values += [r, m, l] + ([] if rescale is None else [rescale])
    if r1 - r0 > v_flash.PANEL_ROWS:
        text += f" (and {r1 - r0 - v_flash.PANEL_ROWS} more rows)"
        values.append(r1 - r0 - v_flash.PANEL_ROWS)
    return Ref(text.replace("-", "−").replace("m_old − m_new", "m_old − m_new"), *values)


def tiles(p: dict) -> list[Ref]:
    T, bq, bk, step = p["fa_tokens"], p["fa_bq"], p["fa_bk"], p["fa_step"]
    steps = order(T, bq, bk)
    r0, r1, c0, c1 = steps[step - 1]
    n = len(steps)
    skip = skipped(T, bq, bk) if p["fa_causal"] else 0
    return [
        Ref(f"Step: {step} of {n}", step, n),
        Ref(f"Step help: queries {r0}–{r1 - 1} against keys {c0}–{c1 - 1}", r0, r1 - 1, c0, c1 - 1),
        Ref(f"Blocks skipped: {skip} of {n}", skip, n),
    ]


def hbm_standard(n: int, d: int) -> int:
    return 4 * n * d + 4 * n * n


def hbm_flash(n: int, d: int, M: int) -> int:
    T_c = math.ceil(n / math.ceil(M / (4 * d)))
    return 3 * n * d + 2 * n + T_c * (3 * n * d + 4 * n)


def hbm(p: dict) -> list[Ref]:
    n, d, kib = p["fa_n"], int(p["fa_hd"]), p["fa_sram"]
    M = kib * 1024 // 2
    std, flash = 2 * hbm_standard(n, d), 2 * hbm_flash(n, d, M)
    B_c = math.ceil(M / (4 * d))
    flat = 4 * M / ((12 + 16 / d) * d * d)
    mib = 2**20
    return [
        Ref(f"Standard at N = {n:,}: {std / mib:.3g} MiB", n, std / mib),
        Ref("Standard at N = 4,096 help: Algorithm 0: S and P written and read back, 4Nd + 4N² values of 2 bytes",
            n, PAPER, FORMULA, FORMULA, FP16),
        Ref(f"FlashAttention (Algorithm 1): {flash / mib:.3g} MiB", PAPER, flash / mib),
        Ref(f"FlashAttention (Algorithm 1) help: B_c = {B_c}, B_r = {min(B_c, d)} from M = {M:,} values", PAPER, B_c,
            min(B_c, d), M),
        Ref(f"Bytes moved: standard ÷ flash: {std / flash:.2f}×", std / flash),
        Ref(f"As N grows: {flat:.2f}×", flat),
        Ref(f"HBM traffic of one head's forward, d = {d}", d),
        Ref("bytes (fp16)", FP16),
        Ref("standard (Algorithm 0)", PAPER),
        Ref(f"FlashAttention (Algorithm 1), M = {kib} KiB", PAPER, kib),
        Ref("4M / ((12 + 16/d)·d²)", FORMULA),  # the help and the legend
    ]  # fmt: skip


HBM_CAPTION = Ref(
    "T_q = T_k = N, counted as Algorithms 0 and 1 of the paper load and store them, 2 bytes a value",
    PAPER,
    PAPER,
    FP16,
)


def backward(p: dict) -> list[Ref]:
    n, d, H = p["fa_n"], int(p["fa_hd"]), p["fa_heads"]
    P, O = H * n * n * 2, H * (n * d * 2 + n * 4)  # noqa: E741
    unit = (2**30, "GiB") if P >= 2**30 else (2**20, "MiB")
    return [
        Ref(f"P kept, N = {n:,}: {P / unit[0]:.3g} {unit[1]}", n, P / unit[0]),
        Ref(f"P kept, N = {n:,} help: standard: the N × N probabilities of {H} heads, 2 bytes each", n, H, FP16),
        Ref(f"O and logsumexp kept: {O / 2**20:.3g} MiB", O / 2**20),
        Ref(f"O and logsumexp kept help: FlashAttention: O (N × d, 2 bytes) and one fp32 logsumexp per row, {H} heads",
            FP16, H),
        Ref(f"Bytes kept: standard ÷ flash: {P / O:,.0f}×", P / O),
        Ref("Bytes kept: standard ÷ flash help: N²·2 over N·(2d + 4) bytes: N/(d + 2)", FORMULA),
        Ref(f"What the backward keeps: {H} heads, d = {d}", H, d),
        Ref("bytes kept, one layer (fp16 values, fp32 logsumexp)", FP16),
    ]  # fmt: skip


BACKWARD_CAPTION = Ref(
    "P, N × N per head, 2 bytes each. FlashAttention: O (N × d per head, 2 bytes) and one logsumexp per row in fp32, "
    "as the flash-attn code keeps it; Algorithm 1 of the 2022 paper writes m and ℓ to HBM, two numbers per row",
    FP16,
    FP16,
    PAPER,
    "the paper's year",
)


P0 = FA.defaults()
_NOMASK = _preset(FA, "A8.8: the online softmax, no mask")
_ONE = _preset(FA, "One tile: plain softmax")
_D128 = _preset(FA, "d = 128 with 100 KiB: the count as written saves little")
_BACK = _preset(FA, "A8.8: what the backward keeps at 32k tokens")

# fmt: off
FLASH: dict[str, list[Ref]] = {
    "defaults": [
        *tiles(P0),
        Ref("Max |flash − plain|: 2e-16", ROUNDOFF),
        panel(P0),
    ],
    "tab HBM traffic": [HBM_CAPTION, *hbm(P0)],
    "tab Backward memory": [BACKWARD_CAPTION, *backward(P0)],
    # the step is the defaults' (step 6): its readout is checked there, the preset shows the mask's absence
    "preset A8.8: the online softmax, no mask": [
        *(r for r in tiles(_NOMASK) if r.snippet not in {t.snippet for t in tiles(P0)}),
        panel(_NOMASK),
    ],
    "preset One tile: plain softmax": [*tiles(_ONE), Ref("Max |flash − plain|: 1e-16", ROUNDOFF), panel(_ONE)],
    "preset d = 128 with 100 KiB: the count as written saves little": [HBM_CAPTION, *hbm(_D128)],
    "preset A8.8: what the backward keeps at 32k tokens": [BACKWARD_CAPTION, *backward(_BACK)],
}
# fmt: on

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/17_FlashAttention.py": FLASH}
