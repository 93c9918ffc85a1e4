"""core.systems_presets: every A10 problem (and lesson 001's memory examples) reproduces its stated answer."""

import pytest

from core.systems_presets import PRESETS, PRESETS_BY_KEY, preset_errors


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_preset_meets_its_stated_answers(preset):
    errors = preset_errors(preset)
    for name, (value, tol) in preset.expected.items():
        assert errors[name] <= tol + 1e-12, f"{preset.key} {name}: {preset.compute()[name]} vs stated {value}"


def test_every_a10_problem_is_a_preset():
    keys = set(PRESETS_BY_KEY)
    assert {f"A10-{i:02d}" for i in range(1, 13)} <= keys and {"001-3.2", "001-A"} <= keys
    assert {p.page for p in PRESETS} == {"memory", "serving"}
