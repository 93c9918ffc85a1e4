""".streamlit/config.toml: two custom themes the viewer's preference picks from, matching the figures, readable."""

import tomllib
from pathlib import Path

import pytest

from viz import style

CONFIG = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())


def _rgb(hex_colour: str) -> tuple[int, ...]:
    h = hex_colour.lstrip("#")
    return tuple(int(h[i : i + 2], 16) for i in (0, 2, 4))


def _contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """WCAG 2.1 contrast ratio of two sRGB colours (0..255 channels)."""

    def lum(rgb):
        lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_private_settings_stay():
    assert CONFIG["browser"]["gatherUsageStats"] is False
    assert CONFIG["server"]["address"] == "127.0.0.1"


def test_colours_live_in_the_light_and_dark_sections_only():
    """A bare [theme] with colours gives its one theme to everybody (checked in chromium, Streamlit 1.67)."""
    assert not [k for k in CONFIG["theme"] if k.lower().endswith("color")]
    assert {"light", "dark"} <= set(CONFIG["theme"])


@pytest.mark.parametrize("name", ["light", "dark"])
def test_each_theme_matches_the_figures_and_its_captions_read(name):
    section, figures = CONFIG["theme"][name], style.get_theme(name)
    assert section["backgroundColor"].upper() == figures.background  # figures are not boxes on the page
    text = _rgb(section["textColor"])
    for bg in (section["backgroundColor"], section["secondaryBackgroundColor"]):  # main area and sidebar
        back = _rgb(bg)
        caption = tuple(0.6 * t + 0.4 * b for t, b in zip(text, back, strict=True))  # Streamlit: text at 60%
        assert _contrast(caption, back) >= 4.5, (name, bg)
        assert _contrast(_rgb(section["primaryColor"]), back) >= 3.0  # toggles, sliders (and >= 4.5 on the page)
    assert _contrast(_rgb(section["primaryColor"]), _rgb(section["backgroundColor"])) >= 4.5  # active tab labels
