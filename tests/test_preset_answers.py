"""A preset that asks a question shows its answer first (issue 30): the first readout of its row, labelled in plain
words, equal to the answer its source states at the precision the source prints.

The stated answers are typed from the sources (``Answer.stated`` in each view's spec; a problem's from core's
``Preset.expected``, the number its seed prints); the readouts are computed by core. The comparison is written here:
the readout's number, rounded to the stated number's last printed digit, is the stated number (or within the
problem's own tolerance where the source rounded its inputs first, as core's presets record)."""

from __future__ import annotations

import math
import re

import pytest

from views import Options, Readout, View, catalog, with_answers
from views.state import Answer, Spec

SPECS = {e.url: catalog.view_module(e.url) for e in catalog.PAGES if e.view is not None}
CASES = [(url, name) for url, module in SPECS.items() for name in module.SPEC.answers]
# the parts a view must build to draw a row of readouts in its facts (a tab's)
ROW_PARTS = {"dpo_readouts": {"DPO", "dpo"}, "noise_readouts": {"noise"}}

# rows in the order of a derivation, whose page text refers to their positions: the answer stays where it is
DERIVATIONS = {
    # "the last two readouts are computed by different functions": the Bradley-Terry loss and DPO's own, 0.554 both
    ("Reward_model", "DPO: worked example B"),
}
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
NUMBER = re.compile(
    r"(?P<sign>[+−-])?(?P<mantissa>\d[\d,]*(?:\.\d+)?)(?:\s*×\s*10(?P<exp>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+))?(?P<suffix>[KMBT](?![A-Za-z]))?"
)
SCALE = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12, None: 1.0}


def parse(text: str) -> list[tuple[float, float]]:
    """The numbers of a text as (value, half of its last printed digit): "1,900" -> (1900, 50), "2.73×10²⁰" ->
    (2.73e20, 5e17), "+1.29 / −0.77" -> two numbers."""
    out = []
    for m in NUMBER.finditer(text):
        mantissa = m.group("mantissa").replace(",", "")
        scale = SCALE[m.group("suffix")] * 10.0 ** int(m.group("exp").translate(SUPERSCRIPT) if m.group("exp") else 0)
        if "." in mantissa:
            step = 10.0 ** -len(mantissa.split(".")[1])
        else:  # an integer's trailing zeros are not printed digits ("1,900": hundreds; "0": units)
            zeros = len(mantissa) - len(mantissa.rstrip("0")) if mantissa.strip("0") else 0
            step = 10.0**zeros
        sign = -1.0 if m.group("sign") in ("−", "-") else 1.0
        out.append((sign * float(mantissa) * scale, step * scale / 2))
    return out


def agrees(shown: str, answer: Answer) -> bool:
    """The readout's value text states the answer: a range "60–80%" holds it; otherwise each number the stated
    answer prints equals the readout's at that number's precision (or within ``answer.tolerance``)."""
    got = parse(shown)
    if (m := re.fullmatch(r"(\d+(?:\.\d+)?)–(\d+(?:\.\d+)?)%", answer.stated)) is not None:
        return len(got) == 1 and float(m.group(1)) <= got[0][0] <= float(m.group(2))
    stated = parse(answer.stated)
    if not stated or not got:
        return False
    for (want, half), (value, _) in zip(stated, got, strict=False):
        close = abs(value - want) <= half * (1 + 1e-9) or abs(value - want) <= answer.tolerance * abs(want)
        if not close:
            return False
    return True


def _view(url: str, preset: str) -> View:
    module = SPECS[url]
    spec: Spec = module.SPEC
    answer = spec.answers[preset]
    tabs = {c for f in spec.fields if f.widget == "tabs" for c in f.choices}
    options = Options(parts=frozenset({"main", *tabs, *ROW_PARTS.get(answer.row, ())}))
    state = spec.defaults().replace(**spec.presets[preset])
    return module.figures(state, options)


def _row(view: View, answer: Answer) -> list[Readout]:
    return list(view.readouts if answer.row == "readouts" else view.facts[answer.row])


@pytest.mark.parametrize(("url", "preset"), CASES, ids=[f"{u}:{p[:40]}" for u, p in CASES])
def test_a_preset_shows_its_stated_answer_first(url: str, preset: str) -> None:
    answer = SPECS[url].SPEC.answers[preset]
    first = _row(_view(url, preset), answer)[0]
    assert first.label == answer.readout, f"{preset}: the first readout is {first.label!r}"
    assert agrees(first.value, answer), f"{preset}: {first.label} = {first.value}, the source states {answer.stated}"
    # plain words: no preset ids ("A10-08", "001-3.2"), no field names in snake case
    assert not re.search(r"\bA\d+[.-]\d+|\b00\d-|_", first.label), first.label


def test_the_comparison_can_fail() -> None:
    one = Answer("x", "68", "s")
    assert agrees("68", one) and not agrees("67", one) and not agrees("69", one)
    assert agrees("1,875.0", Answer("x", "1,900", "s")) and not agrees("1,849", Answer("x", "1,900", "s"))
    assert agrees("2.73×10²⁰", Answer("x", "2.73×10²⁰", "s")) and not agrees("2.74×10²⁰", Answer("x", "2.73×10²⁰", "s"))
    assert agrees("1.510B", Answer("x", "1.5×10⁹", "s")) and not agrees("1.56B", Answer("x", "1.5×10⁹", "s"))
    assert agrees("+1.29 / −0.77", Answer("x", "+1.29 / −0.77", "s"))
    assert not agrees("+1.29 / +0.77", Answer("x", "+1.29 / −0.77", "s"))
    assert agrees("68.2%", Answer("x", "60–80%", "s")) and not agrees("81.0%", Answer("x", "60–80%", "s"))
    assert agrees("0.502%", Answer("x", "0.503%", "s", tolerance=0.005))
    assert not agrees("0.502%", Answer("x", "0.503%", "s"))
    assert parse("8,388,608") == [(8388608.0, 0.5)]
    assert all(math.isfinite(v) for v, _ in parse("320 KiB, 0 · clipped"))


def test_every_question_preset_states_its_answer() -> None:
    """A preset named after a lesson's worked example, check or question has an answer to lead with (a new one
    cannot be added without saying where the page shows its answer). ``D, paired`` is the lesson's "a paired test
    is tighter", a claim without a number, and the KL toy's answer is π*, which the main figure's bars show."""
    pattern = re.compile(r"worked example|check yourself|quick check|\bQ\d", re.IGNORECASE)
    missing = [
        (url, name)
        for url, module in SPECS.items()
        for name in module.SPEC.presets
        if pattern.search(name) and name not in module.SPEC.answers and (url, name) not in DERIVATIONS
    ]
    assert not missing


@pytest.mark.parametrize("url", ["Training_memory", "Serving"])
def test_a_problem_leads_only_while_its_inputs_are_on(url: str) -> None:
    """Once a control moves away from a problem's preset, the page's own readouts lead again and the problem's
    fixed answers follow them (they do not follow the controls)."""
    module = SPECS[url]
    spec = module.SPEC
    name = next(iter(spec.answers))
    state = spec.defaults().replace(**spec.presets[name])
    lead = module.figures(state).readouts[0].label
    assert lead == spec.answers[name].readout
    moved_field = next(
        f for f in spec.fields if f.kind == "int" and f.widget == "number" and f.name in spec.presets[name]
    )
    moved = state.replace(**{moved_field.name: state[moved_field.name] + 1})
    labels = [r.label for r in module.figures(moved).readouts]
    assert labels[0] != lead and lead in labels


def test_with_answers_moves_the_named_readout_only_on_its_preset() -> None:
    module = SPECS["Scaling_laws"]
    spec = module.SPEC
    name = "Check yourself: 7B on 2T tokens"
    rows = [Readout("a", "1"), Readout(spec.answers[name].readout, "2"), Readout("c", "3")]
    on = with_answers(spec, spec.defaults().replace(**spec.presets[name]), View(readouts=list(rows)))
    assert [r.label for r in on.readouts] == [spec.answers[name].readout, "a", "c"]
    off = with_answers(spec, spec.defaults(), View(readouts=list(rows)))
    assert off.readouts == rows
