"""The shipped decks' texts: every sentence about the KL leash agrees with the page (a large beta is a short leash,
its length is 1/beta), a beta sweep is described in the direction it runs, and the lesson's caveats are there."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from decks import Slide, load_decks

SLIDES = [(deck.name, n, s) for deck in load_decks()[0].values() for n, s in enumerate(deck.slides, 1)]
BETA = r"(?:beta|β)"
LONG = r"(?:long|longer|loose|looser)\s+leash|leash\s+(?:lengthens|loosens)|(?:lengthen|loosen)s?\s+the\s+leash"
SHORT = r"(?:short|shorter|tight|tighter)\s+leash|leash\s+(?:shortens|tightens)|(?:shorten|tighten)s?\s+the\s+leash"
LARGE = rf"(?:large|big|high|larger)\s+{BETA}|{BETA}\s+(?:grows|rises|increases)"
SMALL = rf"(?:small|low|smaller|tiny)\s+{BETA}|{BETA}\s+(?:shrinks|falls|drops|decreases|goes to 0)"
# The page's rule (tests/test_content_kl.py): these wordings say the opposite of "a large beta is a short leash".
FORBIDDEN = ("length of the leash", "large β (long leash)", "large beta (long leash)", "beta is the leash")


def leash_problems(text: str) -> list[str]:
    """Sentences (or bullets) that pair a long leash with a large beta or a short leash with a small beta."""
    flat = " ".join(text.split())
    problems = [f"says {p!r}" for p in FORBIDDEN if p in flat.lower()]
    for sentence in re.split(r"(?<=[.;])\s+|\s+-\s+|\(", flat):
        s = sentence.lower()
        if re.search(LONG, s) and re.search(LARGE, s) and not re.search(SMALL, s):
            problems.append(f"a long leash with a large beta: {sentence!r}")
        if re.search(SHORT, s) and re.search(SMALL, s) and not re.search(LARGE, s):
            problems.append(f"a short leash with a small beta: {sentence!r}")
    return problems


def sweep_problems(slide: Slide) -> list[str]:
    """A beta sweep whose key press is said to shorten the leash must raise beta; to lengthen it, lower beta."""
    if slide.sweep is None or slide.sweep.field != "beta":
        return []
    falls = float(slide.sweep.values[-1]) < float(slide.sweep.values[0])
    pressed = [x for x in re.split(r"(?<=[.;])\s+|\s+-\s+", " ".join(slide.notes.lower().split())) if "press" in x]
    text = " ".join(pressed)  # the sentences that tell the lecturer what the key press does
    if falls and re.search(SHORT, text):
        return ["the sweep lowers beta (a longer leash) but the notes say the leash shortens"]
    if not falls and re.search(LONG, text):
        return ["the sweep raises beta (a shorter leash) but the notes say the leash lengthens"]
    return []


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("Press p: beta goes from 10 to 0.1. Long leash at large beta (stays near 0.5).", True),
        ("With a loose leash (small beta) the policy piles onto the exploit.", False),
        ("A large beta is a short leash: the policy stays near pi_ref.", False),
        ("At small beta the leash is a short leash here.", True),
        ("beta is the length of the leash", True),
    ],
)
def test_the_leash_rule_catches_the_wrong_pairings(text: str, bad: bool) -> None:
    assert bool(leash_problems(text)) is bad


def test_a_sweep_that_lowers_beta_must_not_shorten_the_leash() -> None:
    slide = next(s for _, _, s in SLIDES if s.sweep is not None and s.sweep.field == "beta")
    assert float(slide.sweep.values[-1]) < float(slide.sweep.values[0])
    assert sweep_problems(replace(slide, notes="Press **p** to shorten the leash.")) != []
    assert sweep_problems(replace(slide, notes="Press **p**: the leash lengthens.")) == []


@pytest.mark.parametrize(("deck", "number", "slide"), SLIDES, ids=[f"{d}-{n}" for d, n, _ in SLIDES])
def test_every_deck_text_agrees_on_the_leash(deck: str, number: int, slide: Slide) -> None:
    assert leash_problems(f"{slide.title}. {slide.notes}") == []
    assert sweep_problems(slide) == []


def _lesson(title_start: str) -> Slide:
    return next(s for d, _, s in SLIDES if d == "lesson" and s.title.startswith(title_start))


def test_lesson_deck_gives_both_random_lora_init_its_pissa_caveat() -> None:
    notes = " ".join(_lesson("Mistake: both LoRA factors").notes.split())
    assert "Both random, W0 left as loaded" in notes and "unchanged at step 0" in notes
    assert "PiSSA" in notes and "Meng et al. 2024" in notes and "OLoRA" in notes


def test_lesson_deck_says_to_compare_bits_per_byte_across_tokenizers() -> None:
    slide = _lesson("A model that knows nothing")
    notes = " ".join(slide.notes.split())
    assert "different tokenizers" in notes and "bits per byte" in notes
    assert slide.page == "Loss_and_units"
