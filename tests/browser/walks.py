"""Which pairs of pages the browser walks visit (tests/browser/test_navigation_browser.py).

All n(n-1) ordered pairs grow with the square of the page count (240 pairs at 16 pages, 870 at 30). By default the
walk goes to and from one page of each stage group (its representative, a seeded choice within the group) and Home:
those eight in a seeded ring, each to the next; plus a seeded random set of other pairs (four), plus, for a page no
pair has reached, the pair from its group's representative: about 19 pairs at 16 pages, about 33 at 30 (a pair costs
about 6-7 s of a worker's time: docs/performance.md, the test suite). ``LESSON_WALK=all`` walks every ordered pair
(the exhaustive mode). The seed is printed in the run's header (tests/conftest.py); set ``LESSON_WALK_SEED`` to
repeat a run's choice.
"""

from __future__ import annotations

import os
import random
import secrets

from views import catalog

RANDOM_PAIRS = 4
SEED = int(os.environ.get("LESSON_WALK_SEED") or secrets.randbelow(10**6))
EXHAUSTIVE = os.environ.get("LESSON_WALK", "").lower() == "all"
ALL = ["", *(e.url for e in catalog.PAGES)]  # URL names; "" is Home


def representatives(seed: int = SEED) -> list[str]:
    """Home and one page of each stage group, chosen with ``seed``."""
    rng = random.Random(seed)
    return ["", *(rng.choice([e.url for e in catalog.in_group(g)]) for g in catalog.GROUPS if catalog.in_group(g))]


def pairs(seed: int = SEED, exhaustive: bool = EXHAUSTIVE) -> dict[str, list[str]]:
    """The pages each start page visits (with Back after each), by start page, in catalogue order."""
    if exhaustive:
        return {a: [b for b in ALL if b != a] for a in ALL}
    reps = representatives(seed)
    ring = list(reps)  # Home among them: it is walked to once and from once, as each group is
    random.Random(seed + 2).shuffle(ring)
    chosen = set(zip(ring, ring[1:] + ring[:1], strict=True))  # each to the next, in a seeded ring
    rest = sorted((a, b) for a in ALL for b in ALL if a != b and (a, b) not in chosen)
    chosen |= set(random.Random(seed + 1).sample(rest, min(RANDOM_PAIRS, len(rest))))
    group_rep = {catalog.by_url(r).group: r for r in reps if r}
    for e in catalog.PAGES:  # every page in one pair at least: from its group's representative
        if not any(e.url in pair for pair in chosen):
            chosen.add((group_rep[e.group], e.url))
    return {a: [b for b in ALL if (a, b) in chosen] for a in ALL if any(p[0] == a for p in chosen)}


def header() -> str:
    """The line the run prints about the walks."""
    mode = "every ordered pair (LESSON_WALK=all)" if EXHAUSTIVE else "group representatives and random pairs"
    n = sum(len(v) for v in pairs().values())
    return f"browser walks: {mode}, {n} pairs, seed {SEED} (repeat with LESSON_WALK_SEED={SEED})"
