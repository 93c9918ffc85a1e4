"""Imports only go down: pages -> views -> viz -> core; decks and the drills read the views; study (cards, progress),
classroom (class mode's store and rules) and core import no layer of the app. Parses every module's imports (ast)
and fails on one going up, and on any circle of imports, between files or between packages. And the frame's modules
stay one idea each, small."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# the harnesses above the app: the app never imports them, and the benchmarks never import the tests
HARNESS = frozenset({"bench", "tests"})
# layer (a folder) -> the top-level packages its modules must not import
FORBIDDEN: dict[str, frozenset[str]] = {
    "core": frozenset({"viz", "views", "pages", "decks", "study", "streamlit", "plotly"}) | HARNESS,
    "viz": frozenset({"views", "pages", "decks", "study", "streamlit"}) | HARNESS,
    "views": frozenset({"pages", "decks", "streamlit"}) | HARNESS,
    "decks": frozenset({"pages", "streamlit"}) | HARNESS,
    "study": frozenset({"views", "viz", "pages", "decks", "streamlit", "plotly", "classroom"}) | HARNESS,
    # class mode's store and rules: beside study (whose data folder it shares), below the pages, no UI
    "classroom": frozenset({"views", "viz", "pages", "decks", "core", "streamlit", "plotly"}) | HARNESS,
    "pages": HARNESS,
    "bench": frozenset({"tests"}),
}
PACKAGES = ("pages", "views", "viz", "core", "decks", "study", "classroom", "bench", "tests")


@functools.cache
def _import_nodes(path: Path) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """Every import statement of a file, at any depth, relative ones included (parsed once per test process: the
    walks over every module's tree cost the suite about 25 s when each test parsed the files anew)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return tuple(n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom))


def imported_packages(path: Path) -> set[str]:
    """Top-level names of every import in a file (at any depth: function-level imports count too)."""
    names: set[str] = set()
    for node in _import_nodes(path):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_module_imports_relatively() -> None:
    """The checks here read absolute imports only: a relative one (``from . import x``) would pass them unseen."""
    relative = [
        str(f.relative_to(ROOT))
        for package in PACKAGES
        for f in (ROOT / package).rglob("*.py")
        if any(isinstance(n, ast.ImportFrom) and n.level > 0 for n in _import_nodes(f))
    ]
    assert relative == []


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


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """The project modules a file imports, at any depth (``from a.b import c`` is a.b.c when that is a module)."""
    out: set[str] = set()
    for node in _import_nodes(path):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                out.add(name)
    return out


def _graph() -> dict[str, set[str]]:
    files = [f for package in PACKAGES for f in (ROOT / package).rglob("*.py")]
    known = {_module_name(f) for f in files}
    graph = {_module_name(f): _imports(f, known) for f in files}
    for module, targets in graph.items():  # importing a package's module imports the package's __init__ too
        targets.discard(module)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of the graph, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_circle_of_imports_between_files() -> None:
    """Function-level imports count: a lazy import that closes a circle is still a circle."""
    graph = _graph()
    assert len(graph) > 80
    parents = {m: {m.rsplit(".", 1)[0]} if "." in m else set() for m in graph}
    # a module's own package __init__ is not a circle with it when the __init__ only re-exports (pages.frame): it
    # holds nothing but its docstring, imports and __all__
    reexports = {m for m in graph if _only_reexports(ROOT / Path(*m.split(".")) / "__init__.py")}
    graph = {
        m: {t for t in targets if t not in parents[m] or t not in reexports or m not in graph.get(t, set())}
        for m, targets in graph.items()
    }
    assert _cycle(graph) is None, _cycle(graph)


def _only_reexports(init: Path) -> bool:
    """Whether a package's ``__init__.py`` holds only a docstring, imports and ``__all__``."""
    if not init.exists():
        return False
    body = ast.parse(init.read_text(encoding="utf-8")).body
    return all(
        isinstance(n, ast.Import | ast.ImportFrom)
        or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
        or (isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == ["__all__"])
        for n in body
    )


def test_only_a_reexporting_init_is_exempt(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text('"""Doc."""\nfrom x import y\n__all__ = ["y"]\n')
    (tmp_path / "b.py").write_text("from x import y\nZ = y + 1\n")
    assert _only_reexports(tmp_path / "a.py") and not _only_reexports(tmp_path / "b.py")


def test_no_circle_of_imports_between_packages() -> None:
    graph = _graph()
    top: dict[str, set[str]] = {p: set() for p in PACKAGES}
    for module, targets in graph.items():
        top[module.split(".")[0]] |= {t.split(".")[0] for t in targets} - {module.split(".")[0]}
    assert _cycle(top) is None, _cycle(top)


# The frame in modules of one idea each, each under about 400 lines (issue 29): a module that grows past this bound is
# two ideas (page.py reached 544 lines on 2026-12-04 and its sections' layout became layout.py).
FRAME_MODULE_LINES = 420


def test_each_frame_module_holds_one_idea_in_under_about_400_lines() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "pages" / "frame").glob("*.py")}
    assert len(sizes) >= 10, sizes  # the frame's modules were found
    assert {name: n for name, n in sizes.items() if n > FRAME_MODULE_LINES} == {}, sizes
