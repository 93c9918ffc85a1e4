"""The FlashAttention page's view without Streamlit: its numbers against formulas written here (a plain softmax in
numpy, the causal tiles counted by hand, Algorithm 0's and Algorithm 1's loads and stores counted line by line,
the bytes of P against O and one logsumexp per row), not core.flash_attention."""

from __future__ import annotations

import math

import numpy as np
import pytest

from views import Options
from views import flash_attention as view_of

SPEC = view_of.SPEC
ALL = Options(parts=frozenset({"main", *view_of.VIEWS}))


def _readouts(state, options: Options = ALL) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state, options).readouts}


def _skipped(T: int, bq: int, bk: int) -> int:
    """Tiles whose first key comes after their last query: c0 > r1 − 1."""
    return sum(c0 > min(r0 + bq, T) - 1 for r0 in range(0, T, bq) for c0 in range(0, T, bk))


def _hbm_standard(n: int, d: int) -> int:
    # Algorithm 0: read Q, K, write S; read S, write P; read P, V, write O
    return 2 * n * d + n * n + n * n + n * n + n * n + n * d + n * d


def _hbm_flash(n: int, d: int, M: int) -> int:
    B_c = math.ceil(M / (4 * d))
    T_c = math.ceil(n / B_c)
    init = n * d + 2 * n  # line 2: O, l, m
    kv = 2 * n * d  # line 6: K_j, V_j once each
    per_pass = (2 * n * d + 2 * n) + (n * d + 2 * n)  # line 8 reads Q, O, l, m; lines 12-13 write O, l, m
    return init + kv + T_c * per_pass


def test_default_skips_six_of_sixteen_tiles() -> None:
    r = _readouts(SPEC.defaults())
    assert r["Blocks skipped"] == f"{_skipped(16, 4, 4)} of 16" == "6 of 16"
    assert r["Step"] == "6 of 16"


@pytest.mark.parametrize(("T", "bq", "bk"), [(16, 4, 4), (16, 2, 8), (13, 4, 3), (8, 8, 1), (16, 16, 16)])
def test_skipped_tiles_against_a_hand_count(T: int, bq: int, bk: int) -> None:
    n = math.ceil(T / bq) * math.ceil(T / bk)
    state = SPEC.defaults().replace(fa_tokens=T, fa_bq=bq, fa_bk=bk, fa_step=1)
    assert _readouts(state)["Blocks skipped"] == f"{_skipped(T, bq, bk)} of {n}"


@pytest.mark.parametrize("causal", [True, False])
def test_the_tiled_output_equals_a_plain_softmax(causal: bool) -> None:
    state = SPEC.defaults().replace(fa_causal=causal, fa_seed=7, fa_dim=8)
    view = view_of.figures(state, ALL)
    assert view.facts["error"] < 1e-14
    assert float(_readouts(state)["Max |flash − plain|"]) < 1e-14


def test_the_panel_and_the_table_follow_the_online_softmax() -> None:
    """Row 5's running max and sum after each of its tiles, recomputed from the toy's scores."""
    state = SPEC.defaults().replace(fa_causal=False)
    q, k, _ = view_of.toy_qkv(16, 4, 0)
    s = q @ k.T / 2.0
    table = view_of.figures(state, ALL).tables["Tiles"]()
    rows = table[table.row == 5].sort_values("step")
    for j, (_, row) in enumerate(rows.iterrows()):
        seen = s[5, : 4 * (j + 1)]
        assert row.running_max == pytest.approx(seen.max(), abs=1e-12)
        assert row.running_sum == pytest.approx(np.exp(seen - seen.max()).sum(), rel=1e-12)
        if j:
            before = s[5, : 4 * j].max()
            assert row.rescale == pytest.approx(math.exp(before - seen.max()), rel=1e-12)


def test_the_drag_steps_move_the_current_tile() -> None:
    view = view_of.figures(SPEC.defaults())
    drag = view.drags["main"]
    assert drag.field == "fa_step" and drag.values == tuple(range(1, 17))
    fig = view.figures["main"]
    steps = fig.layout.sliders[0].steps
    assert len(steps) == 16 and fig.layout.sliders[0].active == 5
    # Algorithm 1's order: key block j outside, query block i inside; step 6 = (i = 1, j = 1)
    for k, step in enumerate(steps):
        j, i = divmod(k, 4)
        x, y = step.args[0]["x"][0], step.args[0]["y"][0]
        assert (min(x), max(x), min(y), max(y)) == (4 * j - 0.5, 4 * j + 3.5, 4 * i - 0.5, 4 * i + 3.5)
    assert "step 6 of 16" in fig.layout.annotations[0].text


def test_a_step_past_the_end_gives_a_note() -> None:
    view = view_of.figures(SPEC.defaults().replace(fa_bq=8, fa_bk=8, fa_step=9))
    assert any("takes 4 steps" in text for _, text in view.notices)


def test_hbm_traffic_against_algorithms_0_and_1_counted_here() -> None:
    state = SPEC.defaults().replace(fa_view="HBM traffic")
    r = _readouts(state)
    std, flash = 2 * _hbm_standard(4096, 64), 2 * _hbm_flash(4096, 64, 51_200)
    assert r["Bytes moved: standard ÷ flash"] == f"{std / flash:.2f}×"
    assert r["As N grows"] == f"{4 * 51_200 / ((12 + 16 / 64) * 64**2):.2f}×" == "4.08×"
    d128 = _readouts(state.replace(fa_hd="128"))
    assert d128["As N grows"] == f"{4 * 51_200 / ((12 + 16 / 128) * 128**2):.2f}×" == "1.03×"
    fig = view_of.figures(state, ALL).figures["HBM traffic"]
    N = np.asarray(fig.data[0].x)
    np.testing.assert_allclose(fig.data[0].y, [2 * _hbm_standard(int(n), 64) for n in N])
    np.testing.assert_allclose(fig.data[1].y, [2 * _hbm_flash(int(n), 64, 51_200) for n in N])


def test_backward_bytes_are_p_against_o_and_a_logsumexp() -> None:
    state = SPEC.defaults().replace(fa_view="Backward memory", fa_n=32_768, fa_hd="128", fa_heads=32)
    r = _readouts(state)
    P, O = 32 * 32_768**2 * 2, 32 * (32_768 * 128 * 2 + 32_768 * 4)  # noqa: E741
    assert r["P kept, N = 32,768"] == "64 GiB" and P == 64 * 2**30
    assert r["O and logsumexp kept"] == f"{O / 2**20:,.0f} MiB" == "260 MiB"
    assert r["Bytes kept: standard ÷ flash"] == f"{P / O:,.0f}×"


def test_predict_hides_then_reveals() -> None:
    hidden = view_of.figures(SPEC.defaults().replace(predict_fa=True))
    assert hidden.facts["predict"] == "hidden"
    assert {r.label: r.value for r in hidden.readouts}["Blocks skipped"] == "?"
    assert "6 of" not in str(hidden.figures["main"].layout.annotations[0].text)
    shown = view_of.figures(SPEC.defaults().replace(predict_fa=True, guess_skipped=4))
    r = {x.label: x.value for x in shown.readouts}
    assert r["Blocks skipped (the answer)"] == "6" and r["Error"] == "−2"


def test_every_preset_builds() -> None:
    for name, values in SPEC.presets.items():
        view = view_of.figures(SPEC.state(values), ALL)
        assert view.figures["main"] is not None and not [n for k, n in view.notices if k == "warning"], name
