"""The schedules page in AppTest: the modelled end losses and Kaplan's read-off gap of the draft text, the learning
rate against a plain-python cosine, tabs drawn from links and presets, a deep link reproduces, bad links warn."""

import math

import numpy as np
import pytest

from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
)
from tests.test_content_schedules import _loss
from views import Options
from views import schedules as view_of

PAGE = "pages/13_Schedules.py"


def test_default_end_losses_and_cosine(default):
    m = metrics(default)
    assert m["Modelled end loss: cosine"] == "2.128"
    assert m["Modelled end loss: WSD"] == "2.156"
    assert m["Modelled end loss: constant"] == "2.229"
    assert m["Warm-up"] == "100 steps"
    fig = figures(default)[0]
    cosine = fig["data"][0]
    x, lr = decode(cosine["x"]), decode(cosine["y"])
    for s, eta in zip(x, lr, strict=True):  # warm-up 100 steps, then cosine from 1 to 0.1 over the rest
        u = min(max((s - 100) / 9900, 0.0), 1.0)
        want = s / 100 if s <= 100 else 0.1 + 0.9 * (1 + math.cos(math.pi * u)) / 2
        assert eta == pytest.approx(want, abs=1e-9)
    assert "illustrative" in " ".join(c.value for c in default.caption)


def test_presets_show_their_numbers():
    at = open_page(PAGE)
    choose_preset(at, "Schedules", "Kaplan: a 2,500-step run read off 10,000").run()
    assert no_exception(at) and at.warning.len == 0
    readout = metrics(at)["Read off at 2,500 steps"]
    assert readout == "2.292"
    help_text = next(m.proto.help for m in at.metric if m.label == "Read off at 2,500 steps")
    assert "against 2.263" in help_text
    choose_preset(at, "Schedules", "Branch a WSD decay at step 3,000").run()
    assert no_exception(at)
    names = [t["name"] for t in figures(at)[1]["data"]]
    assert "decay from step 3,000" in names and "decay from step 5,000" in names
    choose_preset(at, "Schedules", "Mid-training: the best data during the decay").run()
    assert metrics(at)["Web share: stable → end of decay"] == "80% → 35%"
    choose_preset(at, "Schedules", "Long warm-up (10%)").run()
    assert metrics(at)["Warm-up"] == "1,000 steps"


def test_deep_link_reproduces_the_view():
    query = {
        "run_steps": "20000",
        "lr_floor": "0.05",
        "wsd_shape": "1-sqrt",
        "sched_view": "WSD branches",
        "present": "true",
    }
    at = open_page(PAGE, query)
    assert no_exception(at) and at.warning.len == 0
    state, problems = view_of.SPEC.parse(query)
    assert not problems
    view = view_of.figures(state, Options(parts=frozenset({"main", "WSD branches"})))
    assert metrics(at) == {r.label: r.value for r in view.readouts}
    np.testing.assert_allclose(decode(figures(at)[0]["data"][3]["y"]), view.figures["main"].data[3].y)


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_warn_and_fall_back(default, bad):
    assert_bad_link_falls_back(open_page(PAGE, {"run_steps": bad, "wsd_decay": bad}), default, bad, warning="")


def test_values_that_do_not_fit_the_run_are_brought_inside_with_a_message():
    at = open_page(PAGE, {"run_steps": "1000", "warmup": "900", "sched_view": "WSD branches", "branch_at": "50000"})
    assert no_exception(at)
    text = " ".join(w.value for w in at.warning)
    assert "does not fit" in text and "cannot branch at step 50,000" in text


def test_a_decay_as_long_as_the_run_still_leaves_a_branch_after_the_warm_up():
    # Found by bench/bench_load.py: the WSD decay filled the run after the warm-up, so no branch could start after
    # it, and the branch figure counted its own 1% warm-up (32 steps) instead of the page's 21.
    state = view_of.SPEC.state(
        {"run_steps": 3224, "warmup": 21, "wsd_decay": 1.0, "branch_at": 4584, "sched_view": "WSD branches"}
    )
    out = view_of.figures(state, Options(parts=frozenset({"main", "WSD branches"})))
    steps, W, D = out.facts["steps"], out.facts["warmup"], out.facts["decay"]
    assert (steps, W, D) == (3224, 21, 3202)  # one stable step after the warm-up
    assert out.facts["branch"] == 22 and out.facts["branch"] + D == steps
    assert any("cannot branch at step 4,584" in text for _, text in out.notices)
    branch = out.figures["WSD branches"].to_dict()["data"][1]
    assert decode(branch["x"])[0] == 22


def _main(**values):
    state = view_of.SPEC.defaults().replace(**values)
    return view_of.figures(state, Options())


def test_wsd_decay_drag_steps_are_the_views_at_each_share(default):
    """The main figure drags the WSD decay's share from 0.01 to 1 (0.01, then every 0.02, and the page's own): step
    i redraws the WSD schedule's two traces (points, legend name, hover) as the view at values[i] draws them and
    leaves the cosine and constant runs alone; the whole figure stays under 300 kB."""
    fig = figures(default)[0]
    slider = slider_of(fig)
    view = _main()
    drag = view.drags["main"]
    field = view_of.SPEC["wsd_decay"]
    assert drag.field == "wsd_decay" and len(drag.values) == 51
    assert drag.values[0] == 0.01 and drag.values[-1] == 1.0 and list(drag.values) == sorted(drag.values)
    assert all(field.check(v) is None and isinstance(v, float) for v in drag.values)
    assert drag.values[slider["active"]] == default.slider(key="wsd_decay").value == 0.2
    assert slider["steps"][slider["active"]]["label"] == "0.20 of the run (2,000 steps)"
    assert slider["currentvalue"]["prefix"] == "WSD decay: "
    for i in (0, 25, 50):
        updates, layout, traces = slider["steps"][i]["args"]
        assert traces == [2, 3] and layout == {}
        drawn = _main(wsd_decay=drag.values[i]).figures["main"]
        for k, trace in enumerate(traces):
            np.testing.assert_array_equal(decode(updates["x"][k]), drawn.data[trace].x)
            np.testing.assert_array_equal(decode(updates["y"][k]), drawn.data[trace].y)
            assert updates["name"][k] == drawn.data[trace].name
            assert updates["hovertemplate"][k] == drawn.data[trace].hovertemplate
    assert len(view.figures["main"].to_json()) < 300_000


def test_wsd_decay_step_against_a_plain_loop(default):
    """The step at half the run against the schedule and the loss model written out step by step: 100 warm-up
    steps to the peak, the peak until step 5,000, then a straight line to 10% at step 10,000."""
    slider = slider_of(figures(default)[0])
    step = next(s for s in slider["steps"] if s["label"] == "0.50 of the run (5,000 steps)")
    lr = [s / 100 if s <= 100 else 1.0 if s <= 5000 else 1.0 - 0.9 * (s - 5000) / 5000 for s in range(1, 10_001)]
    loss = _loss(lr)
    updates = step["args"][0]
    x = decode(updates["x"][1]).astype(int)
    assert x[-1] == 10_000 and 5000 in x and np.sum(x > 5000) == 100  # a hundred samples of the decay
    np.testing.assert_allclose(decode(updates["y"][0]), [lr[s - 1] for s in x], atol=5e-5)  # 4 decimals
    np.testing.assert_allclose(decode(updates["y"][1]), [loss[s - 1] for s in x], atol=5e-5)
    assert updates["name"][0] == "WSD (5,000-step linear decay)"
    # the end of the curve the step draws is the end loss the page's readout prints once the drag ends there
    end = next(r.value for r in _main(wsd_decay=0.5).readouts if r.label == "Modelled end loss: WSD")
    assert f"{decode(updates['y'][1])[-1]:.3f}" == f"{loss[-1]:.3f}" == end == "2.131"


def test_a_share_off_the_grid_is_a_step_of_its_own():
    at = open_page(PAGE, {"wsd_decay": "0.37", "wsd_shape": "1-sqrt"})
    assert no_exception(at)
    slider = slider_of(figures(at)[0])
    assert len(slider["steps"]) == 52
    assert slider["steps"][slider["active"]]["label"] == "0.37 of the run (3,700 steps)"
    updates = slider["steps"][slider["active"]]["args"][0]
    assert updates["name"] == ["WSD (3,700-step 1-sqrt decay)"] * 2
    np.testing.assert_array_equal(decode(updates["y"][1]), decode(figures(at)[0]["data"][3]["y"]))


def test_a_decay_the_warm_up_shortens_is_named_so():
    """With a 1,000-step warm-up in a 10,000-step run, a decay share of 1.0 would need 10,000 steps; it gets the
    9,999 - 1,000 = 8,999 left after the warm-up and one stable step, and its step says so; 0.50 (5,000) fits."""
    slider = _main(warmup=1000).figures["main"].layout.sliders[0]
    labels = [step.label for step in slider.steps]
    assert labels[-1] == "1.00 of the run, shortened to 8,999 steps (after the warm-up)"
    assert "0.50 of the run (5,000 steps)" in labels
