"""Deep links with non-default values, one per page: what the browser walks open first and what the server tests
send as a fresh server's first request."""

from __future__ import annotations

import urllib.parse

from views import catalog

# Pages whose link is written out: GRPO's (rewards typed as text), the players' own parameters, and Home, which has no
# state of its own and is reached from GRPO's link.
GRPO_LINK = "/GRPO?rewards=1,0,1,1,0&std=sample&eps=1e-4"
WRITTEN = {
    "": GRPO_LINK,
    "GRPO": GRPO_LINK,
    "Deck": "/Deck?slide=2",
    "Drills": "/Drills?role=interviewer&seconds=60",
    "Class": "/Class?code=K7M2-PQ9X",  # a code no class has: the join form, with the code filled in
}


def deep_link(url_page: str) -> str:
    """A link that opens ``url_page`` (its URL name) with non-default values: :data:`WRITTEN`, or else the preset of
    the page's spec that sets the most values."""
    if url_page in WRITTEN:
        return WRITTEN[url_page]
    spec = catalog.view_module(url_page).SPEC
    query = max((spec.query(spec.state(values)) for values in spec.presets.values()), key=len)
    assert query, url_page  # one preset at least differs from the defaults
    return f"/{url_page}?{urllib.parse.urlencode(query)}"
