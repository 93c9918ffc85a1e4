"""The tables of tests/test_view_numbers.py for the pages of group 'prefs': per page, per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and
(outside the defaults) new texts show."""

from __future__ import annotations

from tests.page_numbers import Ref

TABLES: dict[str, dict[str, list[Ref]]] = {}
