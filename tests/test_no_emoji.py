"""No emoji in the app's user-facing strings: without a colour-emoji font (Debian's chromium as installed, many
projector laptops) they render as empty boxes. Icons are Streamlit's Material Symbols (``:material/name:``),
which Streamlit serves itself.

Scanned: the string literals of the app's Python (pages, views, frame, viz, and core, decks and study, whose
labels, card texts and handouts reach the page), every string of the decks' and cards' TOML files, and the lesson
text that the token pages show."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PY_PATTERNS = (
    "pages/*.py",
    "views/*.py",
    "pages/frame/*.py",
    "viz/*.py",
    "core/*.py",
    "decks/*.py",
    "study/*.py",
)
FILES = sorted([ROOT / "app.py"] + [p for pattern in PY_PATTERNS for p in ROOT.glob(pattern)])
TOML_FILES = sorted([*ROOT.glob("decks/*.toml"), *ROOT.glob("cards/*.toml")])
TEXT_FILES = sorted(ROOT.glob("core/data/*.txt"))
# Strings that are no UI text, by file and how they start: the tokenizer's pattern of the code points that it keeps
# with the character before them (variation selectors, skin tones), so that an emoji a person types stays whole.
NOT_UI = {"core/tokenizer.py": ("[\u0300-\u036f",)}
# Pictographs and dingbats (emoji ranges): mahjong tiles, dominoes, playing cards and enclosed letters through the
# symbols and pictographs blocks; the miscellaneous symbols, dingbats and arrows blocks; and, in the miscellaneous
# technical block, only its emoji (watch, hourglass, keyboard, eject, the media buttons): its ceiling brackets and
# return symbol are text. Arrows, geometric shapes (the deck's play triangle), maths operators and Greek letters are
# not in them.
EMOJI_RANGES = (
    (0x1F000, 0x1FAFF),
    (0x2600, 0x27BF),
    (0x2B00, 0x2BFF),
    (0xFE0F, 0xFE0F),
    (0x231A, 0x231B),
    (0x2328, 0x2328),
    (0x23CF, 0x23CF),
    (0x23E9, 0x23F3),
    (0x23F8, 0x23FA),
)
# Dingbats with a text presentation that ordinary text fonts draw (DejaVu Sans, Liberation): a check mark and a
# ballot cross, used as "fits" / "does not fit" marks.
TEXT_DINGBATS = frozenset("\u2713\u2717")


def emoji_in(text: str) -> list[str]:
    """The characters of ``text`` that lie in an emoji range (text-style check marks and crosses excepted)."""
    return [ch for ch in text if ch not in TEXT_DINGBATS and any(lo <= ord(ch) <= hi for lo, hi in EMOJI_RANGES)]


def test_the_detector_finds_emoji_and_passes_maths() -> None:
    assert emoji_in("📈 Scaling") == ["📈"]
    assert emoji_in("✂️ PPO") == ["✂", "\ufe0f"]
    assert emoji_in("⬇ CSV") == ["⬇"]
    assert emoji_in("C ≈ 6ND → √(C/120) ≤ ∑ α·β × 2 ⭐") == ["⭐"]
    assert emoji_in(":material/trending_up: Scaling laws, 10²⁰ FLOPs, β = 0.1") == []
    assert emoji_in("✗ KV per token ✓") == []
    assert emoji_in("⏩ skip 🀄 🃏 ⌛ ⏏") == ["⏩", "🀄", "🃏", "⌛", "⏏"]
    assert emoji_in("⌈n/k⌉ pages, ⏎ newline, ␣ space, ▶ Play, ◀ ← ↔ → ⇥") == []


def test_page_icons_are_material_symbols() -> None:
    from pages.frame import PAGES

    assert all(icon.startswith(":material/") and icon.endswith(":") for _, _, icon in PAGES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_string_literal_contains_an_emoji(path: Path) -> None:
    exempt = NOT_UI.get(path.relative_to(ROOT).as_posix(), ())
    found = [
        (node.lineno, node.value[:60])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and emoji_in(node.value)
        if not node.value.startswith(exempt)
    ]
    assert found == [], found


def _strings(value: Any) -> Iterator[str]:
    """Every string in a parsed TOML document: keys and values, nested tables and arrays included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_the_decks_and_cards_are_scanned() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in TOML_FILES}
    assert {"decks/lesson.toml", "cards/scaling.toml"} <= names and len(names) >= 10
    assert ROOT / "core" / "scaling.py" in FILES and ROOT / "decks" / "handout.py" in FILES


@pytest.mark.parametrize("path", TOML_FILES + TEXT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_deck_card_or_lesson_text_contains_an_emoji(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    strings = list(_strings(tomllib.loads(text))) if path.suffix == ".toml" else text.splitlines()
    assert strings
    found = [s[:60] for s in strings if emoji_in(s)]
    assert found == [], found
