"""Valid links for the load and memory benchmarks: random walks over each page's spec, one control at a time.

A classroom does not jump to random corners of every range: each viewer changes one control a step or two from
where it was. :func:`walk` starts at a page's defaults and, at each step, changes one field (a number by a factor of
about 0.7-1.4 or one step, a choice to another choice, a toggle flipped; text fields and predict-first guesses
keep their defaults), and yields the link of every state it visits. Work that is heavy by nature (issue 13's
exemptions: a LoRA matrix of d >= 512, training the initialisation traps) is kept out by :data:`CAPS` and
:data:`FIXED`.
"""

from __future__ import annotations

import importlib
import math
import random
from collections.abc import Iterator
from urllib.parse import urlencode

from views import catalog
from views.state import Field, Spec

# page URL name -> its view module: the catalogue's lesson pages (the players, drills and decks, have no view)
VIEWS: dict[str, str] = {e.url: e.view for e in catalog.PAGES if e.view is not None}

# upper bounds kept below a field's own range: heavy by nature, timed on their own in the page benchmarks
CAPS: dict[str, float] = {"rows": 256, "cols": 256, "tokens": 128, "policies": 20_000, "problems": 100_000}
# tabs whose views are heavy by nature (the LoRA initialisation traps train three models)
FIXED_CHOICES: dict[str, tuple[str, ...]] = {"lora_view": ("Best rank-r approximation", "What it costs")}


def spec_of(page: str) -> Spec:
    """The state spec of the page with URL name ``page``."""
    return importlib.import_module(f"views.{VIEWS[page]}").SPEC


def _changeable(f: Field) -> bool:
    return f.kind != "text" and not f.name.startswith(("predict_", "guess_"))


def _step(f: Field, value: object, rng: random.Random) -> object:
    """A nearby valid value of ``f`` other than ``value`` (or ``value`` if there is none)."""
    if f.kind == "bool":
        return not value
    if f.kind in ("choice", "multi"):
        pool = FIXED_CHOICES.get(f.name, f.choices)
        if f.kind == "multi":
            picked = tuple(c for c in f.choices if rng.random() < 0.5) or f.choices[:1]
            return picked
        others = [c for c in pool if c != value]
        return rng.choice(others) if others else value
    lo, hi = float(f.lo), min(float(f.hi), CAPS.get(f.name, math.inf))
    if value is None:
        value = f.default if f.default is not None else lo
    v = float(value)
    if v > 0 and hi / max(lo, 1e-12) > 50:  # wide ranges move by a factor
        new = v * math.exp(rng.uniform(-0.35, 0.35))
    else:  # narrow ones by a step or a tenth of the range
        new = v + rng.choice((-1, 1)) * (f.step or (hi - lo) / 10)
    new = min(max(new, lo), hi)
    if f.kind == "int":
        new = round(new)
    else:
        new = float(f"{new:.3g}")
    return new if f.check(new) is None else value


def walk(page: str, steps: int, seed: int = 0) -> Iterator[str]:
    """``steps`` query strings of ``page``: a random walk from its defaults, one control changed per step."""
    spec = spec_of(page)
    rng = random.Random(f"{page}-{seed}")
    fields = [f for f in spec.fields if _changeable(f)]
    values = dict(spec.defaults())
    for f in fields:  # a capped field starts within its cap
        if f.name in CAPS and values[f.name] is not None and values[f.name] > CAPS[f.name]:
            values[f.name] = type(values[f.name])(CAPS[f.name])
    for _ in range(steps):
        f = rng.choice(fields)
        values[f.name] = _step(f, values[f.name], rng)
        problems = spec.check(values)
        if problems:  # a combination a page refuses (the spec checks fields one by one): undo the step
            continue
        yield urlencode(spec.query(values))


def pools(per_page: int, seed: int = 0, pages: tuple[str, ...] | None = None) -> dict[str, tuple[str, ...]]:
    """For each page, ``per_page`` links along one random walk (a pool for bench/load.py's sessions)."""
    return {page: tuple(walk(page, per_page, seed)) for page in pages or tuple(VIEWS)}
