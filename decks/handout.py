"""A deck as one self-contained HTML handout: every slide's figures (still interactive), titles, readouts and notes.

plotly.js is inlined once from the installed plotly package, so the file opens offline and asks nothing of the
network. The figures come from each page's ``figures(state, options)``, as on the page itself.

Command line: ``python -m decks.handout decks/lesson.toml out.html`` (add ``--hide`` to leave out the speaker notes,
which hold the answers, as the page does with answers hidden).
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import plotly.offline

from decks import Deck, DeckError, load_deck, page_label

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1100px; margin: 2rem auto;
       padding: 0 1rem; color: #222; line-height: 1.45; }
section.slide { border-top: 1px solid #ddd; padding-top: 1.2rem; margin-top: 2rem; }
.meta { color: #666; font-size: 0.9rem; }
.figure { width: 100%; height: 480px; }
.readouts { display: flex; flex-wrap: wrap; gap: 0.4rem 1.6rem; margin: 0.6rem 0; }
.readout b { display: block; font-size: 1.2rem; }
.readout span { color: #555; font-size: 0.85rem; }
.notes { background: #f6f5f2; border-left: 4px solid #E69F00; padding: 0.3rem 1rem; margin-top: 0.8rem; }
code { background: #eee; padding: 0 0.2rem; }
"""

_DRAW = """
document.querySelectorAll("script.figure-data").forEach(function (node) {
  var fig = JSON.parse(node.textContent);
  var div = document.getElementById(node.dataset.target);
  Plotly.newPlot(div, fig.data, fig.layout, {responsive: true, displaylogo: false}).then(function () {
    div.dataset.drawn = "true";
  });
});
"""


def markdown_to_html(text: str) -> str:
    """A small, safe subset of Markdown: paragraphs, ``-`` lists, **bold**, *italic* and `code`; everything else is
    escaped."""
    blocks = re.split(r"\n\s*\n", text.strip())
    out = []
    for block in blocks:
        lines = [line.rstrip() for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        if all(re.match(r"\s*[-*] ", line) or (i and line.startswith("  ")) for i, line in enumerate(lines)):
            items: list[str] = []
            for line in lines:
                if re.match(r"\s*[-*] ", line):
                    items.append(re.sub(r"^\s*[-*] ", "", line))
                else:
                    items[-1] += " " + line.strip()
            out.append("<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + "</ul>")
        else:
            out.append(f"<p>{_inline(' '.join(line.strip() for line in lines))}</p>")
    return "\n".join(out)


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])", r"<em>\1</em>", text)


HIDDEN_NOTES = (
    "Answers hidden (hide=true): this handout leaves out the speaker notes, which hold the answers. Build it with "
    "answers shown to include them."
)


def build_handout(deck: Deck, theme: str = "light", hide: bool = False) -> str:
    """The handout of ``deck`` as one HTML document (plotly.js inline, no request to any network).

    ``hide``: answers hidden (``?hide=true``, as on the pages): the speaker notes, which hold the answers, are left
    out entirely, and the handout says so once under its title."""
    sections = []
    for number, slide in enumerate(deck.slides, start=1):
        view = slide.view(theme=theme, presenter=False)
        figs = []
        for j, fig in enumerate(slide.shown_figures(view)):
            target = f"fig-{number}-{j}"
            data = fig.to_json().replace("</", "<\\/")
            figs.append(
                f'<div class="figure" id="{target}"></div>'
                f'<script type="application/json" class="figure-data" data-target="{target}">{data}</script>'
            )
        readouts = "".join(
            f'<div class="readout"><b>{html.escape(r.value)}</b><span>{html.escape(r.label)}</span></div>'
            for r in (slide.shown_readouts(view) if slide.readouts else view.readouts)
        )
        notices = "".join(f"<p class='meta'>{html.escape(text)}</p>" for _, text in view.notices)
        notes = f'<div class="notes">{markdown_to_html(slide.notes)}</div>' if slide.notes and not hide else ""
        sections.append(
            f'<section class="slide" id="slide-{number}">'
            f"<h2>{number}. {html.escape(slide.title)}</h2>"
            f'<p class="meta">{html.escape(page_label(slide.page))} · link: <code>{html.escape(slide.link)}</code></p>'
            f"{notices}{''.join(figs)}<div class='readouts'>{readouts}</div>{notes}</section>"
        )
    contents = "".join(
        f'<li><a href="#slide-{i}">{html.escape(s.title)}</a></li>' for i, s in enumerate(deck.slides, start=1)
    )
    description = f"<p>{html.escape(deck.description)}</p>" if deck.description else ""
    if hide:
        description += f'<p class="meta" data-testid="notes-hidden">{html.escape(HIDDEN_NOTES)}</p>'
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(deck.title)}</title><style>{_CSS}</style>"
        f'<script type="text/javascript">{plotly.offline.get_plotlyjs()}</script></head><body>'
        f"<h1>{html.escape(deck.title)}</h1>{description}<ol>{contents}</ol>{''.join(sections)}"
        f"<script>{_DRAW}</script></body></html>\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    hide = "--hide" in args
    args = [a for a in args if a != "--hide"]
    if len(args) != 2:
        print("usage: python -m decks.handout [--hide] DECK.toml OUT.html", file=sys.stderr)
        return 2
    try:
        deck = load_deck(args[0])
    except DeckError as exc:
        print(f"{args[0]}: the deck cannot be used:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    Path(args[1]).write_text(build_handout(deck, hide=hide), encoding="utf-8")
    print(f"wrote {args[1]}: {len(deck)} slides" + (", speaker notes left out (--hide)" if hide else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
