"""Independent references for the numbers the interview cards quote: each ``what`` of a card's [[card.checks]]
computed again here from its published formula (or scipy, fractions, torch autograd), never through core.

tests/test_card_numbers.py compares every card check's ``shown`` text with these at the printed precision.
"""

from __future__ import annotations

from collections.abc import Callable

REFERENCES: dict[str, Callable[..., float]] = {}

# ---- references added by the topic owners (one entry each; keep this marker line) ----
