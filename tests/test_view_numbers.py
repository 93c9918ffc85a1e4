"""Every number a lesson page shows outside its default texts is checked like those (tests/test_page_numbers.py): its
readouts (label, value, help) and figure texts (title, annotations, axis titles, legend entries) at the defaults, and
every text, readout and figure text that another view shows and the defaults do not, for each tab not open at first
and each preset (tests/page_numbers.py ``views`` and ``view_texts``).

Each number is matched at its printed precision by an independent reference (a formula written in the test, scipy,
fractions, tests/card_references.py), or allowed with a reason (a count, a name, an input the view shows back, a
source's own number, a constant of the formula beside it). The tables are per page and per view, in the modules
tests/view_numbers_<group>.py; a view of a page with no table fails, so a new tab or preset cannot go unchecked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import (
    view_numbers_calibration,
    view_numbers_distillation,
    view_numbers_flash_attention,
    view_numbers_lora,
    view_numbers_moe,
    view_numbers_number_formats,
    view_numbers_optimizers,
    view_numbers_policy_gradient,
    view_numbers_positions,
    view_numbers_prefs,
    view_numbers_rl,
    view_numbers_scaling,
    view_numbers_systems,
    view_numbers_test_time_compute,
    view_numbers_tokens,
    view_numbers_training_lab,
)
from tests.page_numbers import check_page, view_texts, views
from views import catalog

# every lesson page (a page with a view) and its spec, from the catalogue of pages
SPECS = {e.script: catalog.view_module(e.url).SPEC for e in catalog.PAGES if e.view is not None}
GROUPS = (view_numbers_scaling, view_numbers_rl, view_numbers_prefs, view_numbers_systems, view_numbers_tokens,
          view_numbers_lora, view_numbers_positions, view_numbers_flash_attention, view_numbers_moe,
          view_numbers_training_lab, view_numbers_number_formats, view_numbers_optimizers,
          view_numbers_policy_gradient, view_numbers_test_time_compute, view_numbers_distillation,
          view_numbers_calibration)  # fmt: skip
TABLES = {page: table for group in GROUPS for page, table in group.TABLES.items()}


def _order(page: str) -> int:
    return int(page.split("/")[1].split("_")[0])


CASES = [(page, view) for page in sorted(SPECS, key=_order) for view in views(page, SPECS[page])]


@pytest.mark.parametrize(("page", "view"), CASES, ids=[f"{p.split('/')[1][:-3]}: {v}" for p, v in CASES])
def test_every_number_of_a_view_is_checked_or_allowed(page: str, view: str) -> None:
    refs = TABLES.get(page, {}).get(view)
    problems = check_page(view_texts(page, views(page, SPECS[page])[view]), refs or [])
    if refs is None:
        problems.insert(0, "the view has no table in tests/view_numbers_*.py; its numbers:")
    assert not problems, f"{page}, {view}:\n" + "\n".join(problems)


def test_every_table_is_of_a_view_that_exists() -> None:
    """A table for a view the page no longer has (a renamed tab or preset) is stale."""
    stale = [(p, v) for p, table in TABLES.items() for v in table if p not in SPECS or v not in views(p, SPECS[p])]
    assert not stale


def test_the_tests_named_as_covering_a_number_exist() -> None:
    """A reason that hands a number to another test names one that exists (as in tests/test_page_numbers.py)."""
    here = Path(__file__).resolve().parent
    named = [
        m.groups()
        for table in TABLES.values()
        for refs in table.values()
        for r in refs
        for v in r.values
        if isinstance(v, str)
        for m in re.finditer(r"(?:(test_\w+\.py)::)?(test_\w+)", v)
    ]
    for module, test in named:
        source = (here / (module or "test_page_numbers.py")).read_text(encoding="utf-8")
        assert re.search(rf"^def {test}\(", source, re.M), (module, test)
