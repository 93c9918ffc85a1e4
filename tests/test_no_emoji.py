"""No emoji in the app's user-facing strings: without a colour-emoji font (Debian's chromium as installed, many
projector laptops) they render as empty boxes. Icons are Streamlit's Material Symbols (``:material/name:``),
which Streamlit serves itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(
    [ROOT / "app.py"]
    + [p for pattern in ("pages/*.py", "pages/views/*.py", "pages/frame/*.py", "viz/*.py") for p in ROOT.glob(pattern)]
)
# Pictographs and dingbats (emoji ranges); arrows, maths operators and Greek letters are not in them.
EMOJI_RANGES = ((0x1F300, 0x1FAFF), (0x2600, 0x27BF), (0x2B00, 0x2BFF), (0xFE0F, 0xFE0F))
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


def test_page_icons_are_material_symbols() -> None:
    from pages.frame import PAGES

    assert all(icon.startswith(":material/") and icon.endswith(":") for _, _, icon in PAGES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_string_literal_contains_an_emoji(path: Path) -> None:
    found = [
        (node.lineno, node.value[:60])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and emoji_in(node.value)
    ]
    assert found == [], found
