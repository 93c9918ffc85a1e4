"""Imports only go down: pages -> viz -> core. Parses every module's imports (ast) and fails on one going up."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# layer (a folder) -> the top-level packages its modules must not import
FORBIDDEN: dict[str, frozenset[str]] = {
    "core": frozenset({"viz", "pages", "streamlit", "plotly"}),
    "viz": frozenset({"pages", "streamlit"}),
    "pages/views": frozenset({"streamlit"}),
}


def imported_packages(path: Path) -> set[str]:
    """Top-level names of every import in a file (at any depth: function-level imports count too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_parser_sees_nested_and_dotted_imports(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("import plotly.graph_objects as go\n\ndef g():\n    from streamlit import x\n")
    assert imported_packages(f) == {"plotly", "streamlit"}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_import_goes_up(layer: str) -> None:
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files, f"no modules found under {layer}/"
    wrong = {
        str(f.relative_to(ROOT)): sorted(imported_packages(f) & FORBIDDEN[layer])
        for f in files
        if imported_packages(f) & FORBIDDEN[layer]
    }
    assert not wrong, f"{layer} imports a layer above it: {wrong}"


def test_page_scripts_leave_the_computing_to_their_views() -> None:
    """A page script draws what its view computed (``figures(state, options) -> View``): it imports no core."""
    scripts = sorted((ROOT / "pages").glob("[0-9]*_*.py"))
    assert len(scripts) >= 15
    wrong = [str(f.relative_to(ROOT)) for f in scripts if "core" in imported_packages(f)]
    assert not wrong, f"page scripts that call core themselves: {wrong}"
