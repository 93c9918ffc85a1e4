"""The browser walks' choice of page pairs (tests/browser/walks.py): every page in a pair, Home and each stage group's
representative in a ring (each walked to and from), a seeded choice that repeats, and the exhaustive mode's n(n-1)
pairs."""

from __future__ import annotations

from tests.browser import walks
from views import catalog


def test_every_page_is_walked_to_or_from_and_representatives_both_ways() -> None:
    for seed in (0, 1, 12345):
        chosen = {(a, b) for a, targets in walks.pairs(seed, exhaustive=False).items() for b in targets}
        assert {p for pair in chosen for p in pair} == set(walks.ALL)
        reps = walks.representatives(seed)
        assert len(reps) == 1 + len(catalog.GROUPS)
        assert {catalog.by_url(r).group for r in reps[1:]} == set(catalog.GROUPS)
        for r in reps:  # Home and each group's representative walked to from another of them, and from it to another
            assert any((q, r) in chosen for q in reps if q != r) and any((r, q) in chosen for q in reps if q != r)
        ring = [(a, b) for a, b in chosen if a in reps and b in reps]
        assert len(ring) >= len(reps) and len({a for a, _ in ring}) == len(reps)  # one ring through all of them
        assert len(chosen) <= len(walks.ALL) + walks.RANDOM_PAIRS + len(reps)  # linear in pages: one pair per page


def test_the_seed_repeats_the_choice_and_the_exhaustive_mode_walks_every_pair() -> None:
    assert walks.pairs(7, exhaustive=False) == walks.pairs(7, exhaustive=False)
    every = walks.pairs(7, exhaustive=True)
    n = len(walks.ALL)
    assert sum(len(v) for v in every.values()) == n * (n - 1)
    assert str(walks.SEED) in walks.header()
