"""The training lab's view without Streamlit, and the shipped sweep's curves: each preset's signature (what the bank
asks a candidate to diagnose) asserted on the shipped numbers, the sweep checked against core.tiny_gpt.train by one
short re-run, the drag over every learning rate, the readouts against the curves, predict-first, bad input."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from core import training_lab as lab
from views import Options
from views import training_lab as view_of

SPEC = view_of.SPEC
LN_256 = math.log(256)  # nats per byte of a uniform guess over the bytes
CURVES = view_of.shipped()


def _curve(name: str) -> lab.Curve:
    return CURVES[lab.PRESETS[name].key()]


def _readouts(state) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state).readouts}


def test_the_sweep_holds_every_lr_and_preset_at_full_length() -> None:
    for s in lab.sweep_settings():
        c = CURVES[s.key()]
        assert c.steps_done == s.steps == 300 or lab.diverged(c)
        assert list(c.val_steps) == list(range(25, 301, 25))
        assert c.layer_grad_norm.shape == (c.steps_done, s.layers)
    assert len(CURVES) == len(lab.sweep_settings())


def test_good_run_is_the_sweeps_best_and_never_diverges() -> None:
    good = _curve("good")
    finals = {lr: CURVES[lab.Settings(lr=lr).key()].final_val for lr in lab.SWEEP_LRS}
    assert min(finals, key=finals.get) == good.settings.lr == 3e-3
    assert not lab.diverged(good)
    assert good.loss[0] == pytest.approx(LN_256, abs=0.05)  # starts at the uniform guess
    assert good.final_val < 0.45 * LN_256


def test_lr_too_high_spikes_above_the_uniform_guess_and_ends_worse() -> None:
    high, good = _curve("lr_high"), _curve("good")
    assert lab.diverged(high) and np.nanmax(high.loss) > LN_256  # the signature: a loss above ln 256
    assert high.final_val < LN_256  # it recovers (fast recovery, seed 002 A5.5)
    assert high.final_val >= good.final_val + 0.2


def test_no_warmup_spikes_the_early_gradient_norm_but_costs_little() -> None:
    cold, good = _curve("no_warmup"), _curve("good")
    assert cold.grad_norm[:20].max() > 5 * good.grad_norm[:20].max()
    assert abs(cold.final_val - good.final_val) < 0.05  # the page says: at this size no warm-up costs little


def test_post_norm_at_depth_ends_worse_than_pre_norm_at_the_same_depth() -> None:
    post, pre = _curve("post_deep"), _curve("pre_deep")
    assert post.settings.layers == pre.settings.layers == 6
    assert post.final_val >= pre.final_val + view_of.POST_MARGIN


def test_no_clipping_ends_worse() -> None:
    free, good = _curve("no_clip"), _curve("good")
    assert free.final_val >= good.final_val + 0.05


def test_a_shipped_curve_is_what_train_gives_now() -> None:
    """The shipped data cannot drift from the code: the no-warm-up preset's first 50 steps re-run with core's train()
    (one thread, as shipped) give the same losses, gradient norms and held-out losses."""
    shipped = _curve("no_warmup")
    steps = iter(range(10**6))
    again = lab.run(shipped.settings, should_stop=lambda: next(steps) >= 50)
    assert again.steps_done == 50
    np.testing.assert_allclose(again.loss, shipped.loss[:50], rtol=1e-4)
    np.testing.assert_allclose(again.grad_norm, shipped.grad_norm[:50], rtol=1e-3)
    np.testing.assert_allclose(again.val_loss, shipped.val_loss[:2], rtol=1e-4)


def test_the_drag_covers_every_learning_rate() -> None:
    view = view_of.figures(SPEC.defaults())
    assert view.drags["main"].field == "lab_lr" and view.drags["main"].values == view_of.LR_CHOICES
    slider = view.figures["main"].layout.sliders[0]
    assert len(slider.steps) == 8 and slider.active == view_of.LR_CHOICES.index("3e-3")
    for step, lr in zip(slider.steps, lab.SWEEP_LRS, strict=True):
        c = CURVES[lab.Settings(lr=lr).key()]
        assert list(step.args[0]["y"][0]) == pytest.approx(list(c.loss / math.log(2)))
        assert f"{c.final_val / math.log(2):.2f} bits/byte" in step.args[1]["annotations[0].text"]


def test_readouts_follow_the_curve() -> None:
    c = _curve("good")
    r = {x.label: (x.value, x.help) for x in view_of.figures(SPEC.defaults()).readouts}
    assert r["Held-out loss, last evaluation"][0] == f"{c.val_loss[-1] / math.log(2):.2f} bits/byte"
    assert f"{c.val_loss[-1]:.3f} nats per byte" in r["Held-out loss, last evaluation"][1]
    assert r["Highest train loss"][0] == f"{c.loss.max() / math.log(2):.2f} bits/byte"
    assert r["Peak gradient norm"][0] == f"{c.grad_norm.max():.3g}"
    assert r["Curve"][0] == "shipped"


@pytest.mark.parametrize("name", list(SPEC.presets))
def test_every_preset_shows_its_shipped_curve(name: str) -> None:
    view = view_of.figures(SPEC.state(SPEC.presets[name]))
    assert view.facts["shipped"] and not view.notices, name
    if name != view_of.GOOD:  # each against its twin, drawn thin
        assert "Its twin's held-out loss" in {r.label for r in view.readouts}


def test_unshipped_settings_show_the_nearest_curve_and_a_message() -> None:
    view = view_of.figures(SPEC.defaults().replace(lab_lr="1e-2", lab_batch="8"))
    assert not view.facts["shipped"] and "main" not in view.drags
    assert any(text.startswith("Not precomputed: press Run") for _, text in view.notices)
    assert view.facts["curve"] is CURVES[lab.Settings(lr=1e-2).key()]


def test_a_warmup_as_long_as_the_run_is_clamped_with_a_note() -> None:
    view = view_of.figures(SPEC.defaults().replace(lab_steps=20, lab_warmup=50))
    assert view.facts["settings"].warmup == 10
    assert any("not shorter than the run" in text for _, text in view.notices)


def test_predict_first_hides_then_reveals() -> None:
    hidden = view_of.figures(SPEC.defaults().replace(predict_lab=True))
    assert hidden.facts["predict"] == "hidden" and "main" not in hidden.drags
    assert {r.label: r.value for r in hidden.readouts}["Held-out loss, last evaluation"] == "?"
    shown = view_of.figures(SPEC.defaults().replace(predict_lab=True, guess_lab_bits=4.0))
    truth = _curve("good").final_val / math.log(2)
    r = {x.label: x.value for x in shown.readouts}
    assert r["Held-out loss (the answer)"] == f"{truth:.2f} bits/byte"
    assert r["Error"] == f"{4.0 - truth:+.2f}".replace("-", "−")


def test_a_live_curve_and_earlier_runs_are_drawn() -> None:
    c = _curve("no_clip")
    state = SPEC.defaults().replace(lab_batch="8")
    view = view_of.figures(state, Options(), runs=[("run: earlier", c)], live=c)
    names = [t.name for t in view.figures["main"].data]
    assert "run: earlier" in names and view.facts["shipped"] is False
    assert {r.label: r.value for r in view.readouts}["Curve"] == "live run"
    records = [{"loss": 5.0, "grad_norm": 1.0, "layer_grad_norm": [0.5, 0.5], "lr": 1e-3}] * 3
    partial = view_of.partial_curve(c.settings, [*records, {**records[0], "val_loss": 4.0}])
    assert partial.steps_done == 4 and list(partial.val_steps) == [4] and partial.stopped


def test_a_live_run_trains_in_its_own_thread_and_stops_when_asked() -> None:
    state = SPEC.defaults().replace(lab_steps=600, lab_warmup=0, lab_seed=11)
    job = view_of.start_live(state)
    assert job is not None and view_of.start_live(state) is None  # one run per process: the second is refused
    deadline = time.monotonic() + 60
    while len(job.records) < 3 and not job.done.is_set() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert view_of.growing_figure(job) is not None
    job.stop.set()
    assert job.done.wait(60) and job.error is None
    assert job.curve is not None and job.curve.stopped and 3 <= job.curve.steps_done < 600
    assert not view_of.RUN_LOCK.locked() and job.settings.key() not in view_of.DONE  # a stopped run is not cached


def test_the_table_has_every_step() -> None:
    table = view_of.figures(SPEC.defaults()).tables["main"]()
    assert len(table) == 300 and table["held_out_loss_nats"].notna().sum() == 12
