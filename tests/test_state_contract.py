"""The typed state contract: every page's fields round-trip through the URL, names are unique app-wide, presets
name real fields, old link names still work, and bad link values give a message and the default."""

from __future__ import annotations

import importlib
import math
import pkgutil

import pytest

import views
from pages.frame import PAGES
from views.state import APP_PARAMS, Field, Spec, State, check_unique, same_value

VIEW_MODULES = [importlib.import_module(f"views.{m.name}") for m in pkgutil.iter_modules(views.__path__)]
SPECS = [m.SPEC for m in VIEW_MODULES if hasattr(m, "SPEC")]
FIELDS = [(s, f) for s in SPECS for f in s.fields]


def _samples(f: Field) -> list:
    """Valid values of a field: its default, its bounds and a middle value, or each of its choices."""
    if f.kind == "bool":
        return [True, False]
    if f.kind == "choice":
        return list(f.choices)
    if f.kind == "multi":
        return [(), f.choices[:1], tuple(f.choices), f.default]
    if f.kind == "text":
        return [f.default, "", "a, b; c", "ünïcode ✓"]
    mid = (f.lo + f.hi) / 2
    values = [f.default, f.lo, f.hi, round(mid) if f.kind == "int" else mid]
    return values + ([None] if f.optional else [])


def test_every_page_has_a_spec_and_every_spec_a_page() -> None:
    paths = {path.split("_", 1)[1].removesuffix(".py") for path, _, _ in PAGES if path.startswith("pages/")}
    assert {s.page for s in SPECS} <= paths
    assert len(SPECS) >= 6


def test_field_names_are_unique_across_the_app() -> None:
    assert check_unique(SPECS) == []


@pytest.mark.parametrize(("spec", "field"), FIELDS, ids=[f"{s.page}.{f.name}" for s, f in FIELDS])
def test_every_field_round_trips_through_the_url(spec: Spec, field: Field) -> None:
    for value in _samples(field):
        assert field.check(value) is None, value
        state = spec.defaults().replace(**{field.name: value})
        query = spec.query(state)
        assert (field.name in query) == (value != field.default)
        back, problems = spec.parse(query)
        assert problems == []
        assert back == state


@pytest.mark.parametrize("spec", SPECS, ids=[s.page for s in SPECS])
def test_presets_are_valid_states_that_differ_from_the_defaults(spec: Spec) -> None:
    for name, values in spec.presets.items():
        state = spec.state(values)
        assert spec.check(values) == [], name
        assert spec.parse(spec.query(state)) == (state, [])


def test_a_misspelt_preset_fails_when_the_spec_is_built() -> None:
    f = Field("N", "N", "float", 1.0, lo=0.0, hi=2.0)
    with pytest.raises(ValueError, match="`NN` is not a field"):
        Spec("X", (f,), presets={"typo": {"NN": 1.0}})
    with pytest.raises(ValueError, match="outside 0 to 2"):
        Spec("X", (f,), presets={"too big": {"N": 3.0}})


def test_names_and_aliases_may_not_repeat_or_take_app_settings() -> None:
    a = Field("a", "a", "bool", False, aliases=("b",))
    with pytest.raises(ValueError, match="used twice"):
        Spec("X", (a, Field("b", "b", "bool", False)))
    with pytest.raises(ValueError, match="app-wide"):
        Spec("X", (Field("present", "p", "bool", False),))
    assert "present" in APP_PARAMS


OLD_NAMES = [  # (page, old name, current name, a non-default value in the link)
    ("LoRA", "r", "rank", "16"),
    ("LoRA", "d", "rows", "128"),
    ("LoRA", "k", "cols", "256"),
    ("LoRA", "gpu", "gpu_gb", "48"),
    ("LoRA", "view", "lora_view", "What LoRA costs"),
    ("GRPO", "r", "rewards", "1,0,1"),
    ("KL_leash", "n", "policies", "5000"),
    ("KL_leash", "view", "kl_view", "DPO"),
    ("Evaluation", "N", "questions", "500"),
    ("Evaluation", "seed", "sim_seed", "7"),
    ("Attention", "n", "tokens", "100"),
    ("Attention", "seed", "layer_seed", "3"),
    ("Evaluation", "view", "eval_view", "Model comparison"),
    ("Attention", "view", "attn_view", "KV cache"),
    ("Drills", "profile", "learner", "ada_2"),
]


def test_every_old_name_is_in_the_alias_test() -> None:
    assert {(page, old) for page, old, _, _ in OLD_NAMES} == {
        (s.page, a) for s in SPECS for f in s.fields for a in f.aliases
    }


@pytest.mark.parametrize(("page", "old", "new", "raw"), OLD_NAMES)
def test_links_made_before_the_renames_open_the_same_view(page: str, old: str, new: str, raw: str) -> None:
    spec = next(s for s in SPECS if s.page == page)
    state, problems = spec.parse({old: raw})
    assert problems == []
    assert spec.query(state) == {new: spec[new].to_text(state[new])}
    assert spec.parse({old: "1", new: raw})[0][new] == spec.parse({new: raw})[0][new]  # the current name wins


BAD = ("abc", "nan", "NaN", "inf", "-inf", "1e400", "", "1e-400x")


@pytest.mark.parametrize(("spec", "field"), FIELDS, ids=[f"{s.page}.{f.name}" for s, f in FIELDS])
def test_bad_link_values_give_a_message_and_a_valid_value(spec: Spec, field: Field) -> None:
    for raw in (*BAD, "-5", "0", "1e30", "x" * 3000):
        state, problems = spec.parse({field.name: raw})
        value = state[field.name]
        assert field.check(value) is None, (raw, value)
        if value != field.default or raw == field.to_text(field.default):  # a usable value, or the default itself
            continue
        if field.kind in ("float", "int") and not (field.optional and raw == ""):
            assert problems and field.name in problems[0], raw
        if isinstance(value, float):
            assert math.isfinite(value)


def test_out_of_range_numbers_fall_back_to_the_default_with_a_message() -> None:
    spec = next(s for s in SPECS if s.page == "Scaling_laws")
    state, problems = spec.parse({"N": "1e30", "gpus": "8.6", "fit": "hoffmann 2022", "zz": "1"})
    assert state.N == spec["N"].default
    assert state.gpus == 9
    assert state.fit == "Hoffmann 2022"
    assert any("outside" in p and "N=1e30" in p for p in problems)
    assert any("whole number" in p for p in problems)
    assert any("`zz=1`" in p and "no such control" in p for p in problems)


def test_state_is_hashable_read_only_and_picklable() -> None:
    import pickle

    s = State({"a": 1, "b": (1, 2)})
    assert hash(s) == hash(State({"b": (1, 2), "a": 1}))
    assert pickle.loads(pickle.dumps(s)) == s
    assert s.a == 1 and s.replace(a=2).a == 2 and s.a == 1
    with pytest.raises(AttributeError):
        s.a = 3  # type: ignore[misc]


def test_every_view_runs_in_a_process_without_streamlit() -> None:
    """Decks, handouts and cards draw pages through ``figures(state, options)``: no Streamlit may come with it."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import importlib, pkgutil, sys; import views as v\n"
        "mods = [importlib.import_module(f'views.{m.name}') for m in pkgutil.iter_modules(v.__path__)]\n"
        "from views import grpo, scaling\n"
        "grpo.figures(grpo.SPEC.defaults()); scaling.figures(scaling.SPEC.defaults())\n"
        "print(len(mods), 'streamlit' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    count, loaded = out.stdout.split()
    assert int(count) >= 14 and loaded == "False", out.stdout


def test_same_value_is_the_one_rule_for_a_preset_and_a_page_holding_the_same_value() -> None:
    """The state contract and the frame's binding both ask whether a page's value is a preset's (views.state's
    ``same_value``, once twins): numbers within round-off whatever their type, sequences by their elements."""
    assert same_value(1e21, 10**21) and same_value(0.1 + 0.2, 0.3) and same_value(4, 4.0)
    assert not same_value(1.0, 1.0001) and not same_value(None, 0.0) and not same_value(0.0, "x")
    assert same_value([1, 0, 2], (1, 0, 2)) and not same_value([1, 0], (1, 0, 2))
    assert same_value("hoffmann2022", "hoffmann2022") and not same_value("a", "b")
