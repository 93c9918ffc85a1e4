"""Lecture decks: the shipped decks load and draw, bad files give their messages, TOML and handouts round-trip."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from decks import DECKS_DIR, DeckError, deck_to_toml, load_decks, parse_deck, views
from decks.handout import build_handout, main, markdown_to_html

# slide count bounds per shipped deck (the lesson: 33 since the number formats, optimizers, policy gradient,
# test-time compute, distillation and calibration slides)
SHIPPED = {"lesson": (18, 33), "interview": (4, 8)}


@pytest.fixture(scope="module")
def shipped():
    decks, errors = load_decks()
    assert errors == {}
    return decks


def test_every_shipped_deck_loads_with_its_size(shipped) -> None:
    for name, (lo, hi) in SHIPPED.items():
        assert lo <= len(shipped[name]) <= hi, name


def test_every_slide_parses_through_its_page_contract_and_draws(shipped) -> None:
    for deck in shipped.values():
        for number, slide in enumerate(deck.slides, start=1):
            spec = views()[slide.page].SPEC
            state, problems = spec.parse(slide.query)  # the slide's link, read as the page reads a link
            assert problems == [] and state == slide.state, (deck.name, number)
            assert slide.title and slide.notes, (deck.name, number)
            view = slide.view(presenter=True)
            assert view.figures, (deck.name, number, slide.page)
            if slide.sweep is not None:
                f = spec[slide.sweep.field]
                assert all(f.check(v) is None for v in slide.sweep.values)


def test_lesson_deck_numbers_match_the_lesson(shipped) -> None:
    lesson = shipped["lesson"]
    by_title = {s.title: s for s in lesson.slides}
    readouts = {
        title: {r.label: r.value for r in by_title[title].view().readouts}
        for title in ("Predict 1: 10B parameters on 20B tokens?", "Worked example A, over-trained: 0.5B")
    }
    assert readouts["Predict 1: 10B parameters on 20B tokens?"]["Loss L(N, D)"] == "2.388"  # lesson, answers to §1
    assert readouts["Worked example A, over-trained: 0.5B"]["Loss L(N, D)"] == "2.489"  # lesson §4A step 5
    grpo = next(s for s in lesson.slides if s.title.startswith("3.8")).view().readouts
    assert {r.label: r.value for r in grpo}["Std (÷G)"] == "0.484"  # lesson §4C


def test_beta_sweep_runs_from_10_to_0_1_through_the_fields_choices(shipped) -> None:
    slide = next(s for s in shipped["lesson"].slides if s.sweep is not None and s.sweep.field == "beta")
    values = slide.sweep.values
    assert values[0] == "10" and values[-1] == "0.1" and len(values) <= 15
    floats = [float(v) for v in values]
    assert floats == sorted(floats, reverse=True)


def test_a_log_sweep_is_geometric() -> None:
    deck = parse_deck(
        '[[slides]]\ntitle="t"\npage="Scaling_laws"\nsweep={field="N",from=1e9,to=1e11,steps=3,scale="log"}'
    )
    values = deck.slides[0].sweep.values
    assert values[0] == 1e9 and values[2] == 1e11 and math.isclose(values[1], 1e10, rel_tol=1e-5)


BAD = {
    "missing title": ('[[slides]]\npage = "GRPO"\n', ["slide 1: missing field `title`"]),
    "missing page": ('[[slides]]\ntitle = "x"\n', ["slide 1 ('x'): missing field `page`"]),
    "unknown page": ('[[slides]]\ntitle = "x"\npage = "Nowhere"\n', ["field `page`: unknown page 'Nowhere'"]),
    "refused value": (
        '[[slides]]\ntitle = "ok"\npage = "GRPO"\n\n'
        '[[slides]]\ntitle = "bad"\npage = "KL_leash"\nvalues = { beta = 7 }\n',
        ["slide 2 ('bad'): `beta` = 7 is refused by KL_leash: it is not one of"],
    ),
    "out of range": (
        '[[slides]]\ntitle = "x"\npage = "Scaling_laws"\nvalues = { N = 1 }\n',
        ["`N` = 1 is refused by Scaling_laws: it is outside 1000000 to 10000000000000"],
    ),
    "unknown field": ('[[slides]]\ntitle = "x"\npage = "GRPO"\nlink = "zzz=1"\n', ["`zzz`: GRPO has no such field"]),
    "bad preset": ('[[slides]]\ntitle = "x"\npage = "GRPO"\npreset = "nope"\n', ["field `preset`: 'nope' is not a"]),
    "bad sweep": (
        '[[slides]]\ntitle = "x"\npage = "PPO"\nsweep = { field = "rho", from = 0.5, to = 9 }\n',
        ["field `sweep`: `to` = 9 is refused by `rho`: it is outside 0.5 to 1.5"],
    ),
    "bad readouts": ('[[slides]]\ntitle = "x"\npage = "GRPO"\nreadouts = "Std"\n', ["field `readouts` must be a list"]),
    "figure not drawn": (
        '[[slides]]\ntitle = "x"\npage = "Scaling_laws"\nfigures = ["family"]\n',
        ["field `figures`: 'family' is not drawn on this slide"],
    ),
    "bad withhold": ('[[slides]]\ntitle = "x?"\npage = "GRPO"\nwithhold = 1\n', ["`withhold` must be true or false"]),
    "bad toml": ('[[slides]\ntitle = "x"\n', ["not valid TOML"]),
    "no slides": ('title = "empty"\n', ["no slides"]),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_decks_say_which_slide_and_field(case: str) -> None:
    text, expected = BAD[case]
    with pytest.raises(DeckError) as info:
        parse_deck(text, "bad")
    joined = "\n".join(info.value.problems)
    for part in expected:
        assert part in joined, joined


def test_a_bad_file_leaves_the_other_decks_loading(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text((DECKS_DIR / "interview.toml").read_text())
    (tmp_path / "broken.toml").write_text('[[slides]]\ntitle = "x"\npage = "KL_leash"\nvalues = { beta = 7 }\n')
    (tmp_path / "garbled.toml").write_bytes(b"\xff\xfe = [")
    decks, errors = load_decks(tmp_path)
    assert list(decks) == ["good"]
    assert set(errors) == {"broken", "garbled"}
    assert "`beta` = 7" in errors["broken"][0]


def test_toml_written_by_the_builder_reads_back_to_the_same_deck(shipped) -> None:
    for deck in shipped.values():
        again = parse_deck(deck_to_toml(deck), deck.name)
        assert again == deck


def test_markdown_subset_escapes_html() -> None:
    out = markdown_to_html("Hello **bold** <script>x</script>\n\n- one *i*\n- two `c`")
    assert "<strong>bold</strong>" in out and "&lt;script&gt;" in out and "<script>" not in out
    assert out.count("<li>") == 2 and "<em>i</em>" in out and "<code>c</code>" in out


def test_handout_has_every_figure_and_plotly_once(shipped, tmp_path: Path) -> None:
    deck = shipped["interview"]
    text = build_handout(deck)
    n_figures = sum(len(s.shown_figures(s.view(presenter=False))) for s in deck.slides)  # the figures each shows
    assert n_figures < sum(len({id(f) for f in s.view(presenter=False).figures.values()}) for s in deck.slides)
    assert text.count('class="figure-data"') == n_figures
    assert len(re.findall(r"Plotly\.newPlot\s*=|plotly\.js v\d", text)) >= 1
    assert text.count('<script type="text/javascript">') == 1
    assert "https://" not in re.sub(r"<script type=\"text/javascript\">.*?</script>", "", text, flags=re.S)


def test_handout_cli(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.html"
    assert main([str(DECKS_DIR / "interview.toml"), str(out)]) == 0
    assert out.stat().st_size > 1_000_000  # plotly.js inline
    bad = tmp_path / "bad.toml"
    bad.write_text('[[slides]]\ntitle = "x"\npage = "Nowhere"\n')
    assert main([str(bad), str(tmp_path / "x.html")]) == 1
    assert "unknown page 'Nowhere'" in capsys.readouterr().err


def test_a_deck_may_name_a_kv_preset_by_its_name_before_the_llama_3_1_rename() -> None:
    old = parse_deck('[[slides]]\ntitle = "x"\npage = "Attention"\npreset = "Llama-3-8B at 128k tokens"\n')
    new = parse_deck('[[slides]]\ntitle = "x"\npage = "Attention"\npreset = "Llama-3.1-8B at 128k tokens"\n')
    assert old.slides[0].state == new.slides[0].state
    assert new.slides[0].state["ctx"] == 131_072 and new.slides[0].state["Hkv"] == 8


def test_a_handout_with_answers_hidden_leaves_out_every_speaker_note(shipped, tmp_path: Path) -> None:
    deck = parse_deck(
        'title = "t"\n[[slides]]\ntitle = "Leash"\npage = "KL_leash"\nnotes = "The answer: **0.73**."\n'
        '[[slides]]\ntitle = "Group"\npage = "GRPO"\nvalues = { rewards = "1,0,0,0" }\nnotes = "A_1 = 1.73"\n'
    )
    shown, hidden = build_handout(deck), build_handout(deck, hide=True)
    assert "<strong>0.73</strong>" in shown and "A_1 = 1.73" in shown and shown.count('class="notes"') == 2
    assert "0.73</strong>" not in hidden and "A_1 = 1.73" not in hidden and 'class="notes"' not in hidden
    assert 'data-testid="notes-hidden"' in hidden and 'data-testid="notes-hidden"' not in shown
    # everything else is still there: the titles, the links and every figure
    for text in ("1. Leash", "2. Group", "GRPO?rewards=1%2C0%2C0%2C0"):
        assert text in hidden, text
    assert hidden.count('class="figure-data"') == shown.count('class="figure-data"') >= 2
    out = tmp_path / "hidden.html"
    assert main(["--hide", str(DECKS_DIR / "interview.toml"), str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert 'class="notes"' not in text
    for slide in shipped["interview"].slides:  # no line of any slide's notes, in any form
        for line in filter(None, (x.strip(" -") for x in slide.notes.splitlines())):
            assert markdown_to_html(line).removeprefix("<p>").removesuffix("</p>") not in text, line
