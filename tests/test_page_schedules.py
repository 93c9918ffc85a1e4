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
)
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
