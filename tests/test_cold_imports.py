"""No lesson page imports torch before its first figure: the frame, every view module and every page's first figures
at its defaults, in one fresh interpreter (torch takes about 1.8 s to import here, which a cold start would pay)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from views import catalog

ROOT = Path(__file__).resolve().parents[1]

# For each lesson page in turn: import its view, build the parts its page builds at the defaults (the main figure
# with its drag sweep, and the tab the defaults open), and record whether torch has been imported so far. A page
# that imported it is named even when later pages are clean (they cannot be checked after it: torch stays loaded).
_PROBE = """
import json, sys
import pages.frame
from views import Options, catalog
rows = [["frame", "torch" in sys.modules, 0]]
for entry in catalog.PAGES:
    if entry.view is None:
        continue
    module = catalog.view_module(entry.url)
    state = module.SPEC.defaults()
    view = module.figures(state, Options(parts=catalog.parts_for(entry.url, state)))
    rows.append([entry.url, "torch" in sys.modules, len(view.figures)])
print(json.dumps(rows))
"""


def test_no_lesson_page_imports_torch_before_its_first_figure() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    lessons = [e.url for e in catalog.PAGES if e.view is not None]
    assert [r[0] for r in rows] == ["frame", *lessons]  # every lesson page was built, in catalogue order
    assert all(count >= 1 for _, _, count in rows[1:]), rows  # each built at least its main figure
    importers = [url for url, loaded, _ in rows if loaded]
    assert not importers, f"torch was imported by the time {importers[0]} had drawn its first figures"
