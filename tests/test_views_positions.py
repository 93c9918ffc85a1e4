"""The positions page's view without Streamlit: its numbers against formulas written here (RoPE's frequencies
base^(-2i/d), Hugging Face's scalings written out), not core.rope."""

from __future__ import annotations

import math

import numpy as np
import pytest

from views import Options
from views import positions as view_of

SPEC = view_of.SPEC
ALL = Options(parts=frozenset({"main", *view_of.VIEWS}))


def _theta(d: int, base: float) -> np.ndarray:
    return np.array([base ** (-2 * i / d) for i in range(d // 2)])


def _readouts(state) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state, ALL).readouts}


def test_default_counts_the_pairs_longer_than_the_context() -> None:
    lam = 2 * math.pi / _theta(128, 10_000.0)
    beyond = int(np.sum(lam > 8192))
    r = _readouts(SPEC.defaults())
    assert r["Pairs with λ > L"] == f"{beyond} of 64" == "14 of 64"
    assert r["Wavelengths"] == f"{2 * math.pi:.3g} to {2 * math.pi * 10_000 ** (126 / 128):,.0f}"


def test_llama3_base_doubles_the_count() -> None:
    state = SPEC.state(SPEC.presets["Llama 3's base 500,000"])
    beyond = sum(2 * math.pi * 500_000 ** (2 * i / 128) > 8192 for i in range(64))
    assert _readouts(state)["Pairs with λ > L"] == f"{beyond} of 64" == "29 of 64"


def _scaled(method: str, s: float, d: int = 128, base: float = 10_000.0, L: int = 8192) -> np.ndarray:
    """Hugging Face's modeling_rope_utils formulas, written out: the scaled frequencies."""
    th = _theta(d, base)
    if method == "linear":
        return th / s
    if method == "ntk":
        return _theta(d, base * s ** (d / (d - 2)))
    if method == "yarn":  # beta_fast 32, beta_slow 1, truncated ramp in the pair index

        def dim(r: float) -> float:
            return d * math.log(L / (r * 2 * math.pi)) / (2 * math.log(base))

        low, high = max(math.floor(dim(32)), 0), min(math.ceil(dim(1)), d - 1)
        ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)
        return th / s * ramp + th * (1 - ramp)
    if method == "llama3":  # low_freq_factor 1, high_freq_factor 4
        out = []
        for t in th:
            lam = 2 * math.pi / t
            if lam < L / 4:
                out.append(t)
            elif lam > L:
                out.append(t / s)
            else:
                smooth = (L / lam - 1) / (4 - 1)
                out.append((1 - smooth) * t / s + smooth * t)
        return np.array(out)
    raise AssertionError(method)


@pytest.mark.parametrize("method", ["linear", "ntk", "yarn", "llama3"])
def test_kept_slowed_and_between_match_the_written_out_scaling(method: str) -> None:
    ratio = _theta(128, 10_000.0) / _scaled(method, 4.0)
    kept = int(np.sum(np.isclose(ratio, 1, rtol=1e-9, atol=0)))
    full = int(np.sum(np.isclose(ratio, 4, rtol=1e-9, atol=0)))
    state = SPEC.defaults().replace(rope_method=method, rope_s=4.0)
    label = f"Pairs kept / slowed by s / between ({view_of.SHORT[method]})"
    assert _readouts(state)[label] == f"{kept} / {full} / {64 - kept - full}"


def test_yarn_attention_factor_is_0_1_ln_s_plus_1() -> None:
    for s in (4.0, 16.0):
        r = _readouts(SPEC.defaults().replace(rope_s=s))
        assert r["YaRN attention factor"] == f"{0.1 * math.log(s) + 1:.4f}"
    assert _readouts(SPEC.defaults().replace(rope_s=16.0))["YaRN attention factor"] == "1.2773"


def test_the_drag_steps_draw_the_scaled_wavelengths() -> None:
    view = view_of.figures(SPEC.defaults().replace(rope_method="linear", rope_s=3.0))
    drag = view.drags["main"]
    assert drag.field == "rope_s" and 3.0 in drag.values and list(drag.values) == sorted(drag.values)
    fig = view.figures["main"]
    steps = fig.layout.sliders[0].steps
    assert len(steps) == len(drag.values) and fig.layout.sliders[0].active == drag.values.index(3.0)
    lam = 2 * math.pi / _theta(128, 10_000.0)
    for s, step in zip(drag.values, steps, strict=True):
        np.testing.assert_allclose(step.args[0]["y"][0], lam * s, rtol=1e-12)  # PI: every wavelength × s
        assert step.args[0]["y"][1] == [s * 8192] * 2
    np.testing.assert_allclose(np.asarray(fig.data[2].y), lam * 3.0, rtol=1e-12)


def test_plain_rope_has_no_drag_and_no_scaled_curve() -> None:
    view = view_of.figures(SPEC.defaults().replace(rope_method="none"))
    assert "main" not in view.drags and not view.figures["main"].layout.sliders and len(view.figures["main"].data) == 2


def test_relative_scores_depend_only_on_the_distance() -> None:
    view = view_of.figures(SPEC.defaults().replace(pos_view="Relative position", rope_shift=12_345), ALL)
    a, b = (np.asarray(tr.z) for tr in view.figures["Relative position"].data)
    q, k = view_of.rel_vectors(128)
    th = _theta(128, 10_000.0)
    qc, kc = q[0::2] + 1j * q[1::2], k[0::2] + 1j * k[1::2]
    for m, n in ((0, 0), (5, 2), (3, 20), (23, 0)):
        ref = np.real(np.sum(qc * np.conj(kc) * np.exp(1j * (m - n) * th)))  # Re Σ q_i conj(k_i) e^{i(m−n)θ_i}
        assert a[m, n] == pytest.approx(ref, abs=1e-9) and b[m, n] == pytest.approx(ref, abs=1e-7)
    assert view.facts["max_change"] < 1e-8


def test_decay_curves_against_the_formulas() -> None:
    view = view_of.figures(SPEC.defaults().replace(pos_view="Decay"), ALL)
    bound, same, zero = view.figures["Decay"].data[:3]
    x = np.asarray(bound.x)
    th = _theta(128, 10_000.0)
    S = np.cumsum(np.exp(1j * x[:, None] * th), axis=1)
    np.testing.assert_allclose(np.asarray(bound.y), np.abs(S).mean(axis=1) / (65 / 2), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(same.y), 2 * np.cos(x[:, None] * th).sum(axis=1) / 128, atol=1e-12)
    assert list(zero.y) == [0.0, 0.0]


def test_predict_hides_then_reveals() -> None:
    hidden = view_of.figures(SPEC.defaults().replace(predict_pos=True))
    assert hidden.facts["predict"] == "hidden"
    assert {r.label: r.value for r in hidden.readouts}["Pairs with λ > L"] == "?"
    assert "14" not in str(hidden.figures["main"].layout.annotations[0].text)
    shown = view_of.figures(SPEC.defaults().replace(predict_pos=True, guess_pairs=10))
    r = {x.label: x.value for x in shown.readouts}
    assert r["Pairs with λ > L (the answer)"] == "14" and r["Error"] == "−4"


def test_odd_head_dim_gives_a_note() -> None:
    view = view_of.figures(SPEC.defaults().replace(rope_d=127))
    assert any("d must be even" in text for _, text in view.notices)
    assert {r.label: r.value for r in view.readouts}["Pairs with λ > L"].endswith("of 64")
