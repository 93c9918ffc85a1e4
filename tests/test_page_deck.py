"""The deck player (AppTest): the same figures as the page for the same link, keys move, bad links are reported."""

from __future__ import annotations

import json
import time

import numpy as np

from decks import load_decks, parse_deck
from tests.apptest import charts, decode, figures, open_page
from views.catalog import GROUPS  # the navigation folds, not the page's own

PLAYER = "pages/15_Deck.py"


def _ys(fig: dict) -> list[np.ndarray]:
    """The figure's data: every trace's y, but the GRPO bars' click slots, which span the y range (presenter mode's
    range, as the player draws, has headroom for the bars' labels)."""
    slot = "answer slot"
    return [decode(t["y"]).astype(float) for t in fig["data"] if "y" in t and not t.get("name", "").startswith(slot)]


def test_player_draws_the_same_figure_as_the_page_for_the_same_link() -> None:
    lesson = load_decks()[0]["lesson"]
    number = next(i for i, s in enumerate(lesson.slides, 1) if s.title.startswith("3.8"))  # GRPO worked example C
    slide = lesson.slides[number - 1]
    player = open_page(PLAYER, {"deck": "lesson", "slide": str(number)})
    assert not player.exception
    real = open_page(f"pages/4_{slide.page}.py", dict(slide.query))
    assert not real.exception
    a, b = _ys(figures(player)[0]), _ys(figures(real)[0])
    assert len(a) == len(b) and all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))
    assert any(np.allclose(sorted(set(np.round(x, 2))), [-0.77, 1.29]) for x in a)  # lesson §4C advantages


def test_next_previous_and_touched_controls_return_to_the_slide() -> None:
    at = open_page(PLAYER, {"deck": "interview", "slide": "4"})
    assert at.number_input(key="slide").value == 4
    at.button(key="deck-next").click().run()
    assert (
        at.number_input(key="slide").value == 5 and at.query_params["slide"] == "5"
    )  # an int box: the link writes 5, not 5.0
    at.button(key="deck-next-space").click().run()
    at.button(key="deck-next-pagedown").click().run()  # past the end: stays on the last slide
    assert at.number_input(key="slide").value == 6
    at.button(key="deck-prev").click().run()
    at.button(key="deck-prev-pageup").click().run()
    assert at.number_input(key="slide").value == 4
    rewards = next(w for w in at.text_input if w.key.endswith("-rewards"))
    rewards.set_value("1,0,0,0").run()  # the audience touches a control of the slide's page
    assert any(r.value == "0.25" for r in at.metric)
    at.button(key="deck-next").click().run()
    at.button(key="deck-prev").click().run()
    rewards = next(w for w in at.text_input if w.key.endswith("-rewards"))
    assert rewards.value == "1,1,1,1" and not at.exception


def test_blank_and_unknown_deck() -> None:
    at = open_page(PLAYER, {"deck": "interview", "slide": "2"})
    at.button(key="deck-blank").click().run()
    assert at.toggle(key="blank").value is True and not charts(at)
    at = open_page(PLAYER, {"deck": "nosuchdeck"})
    assert any("no deck `nosuchdeck`" in w.value for w in at.warning) and not at.exception


def test_add_this_view_collects_a_draft_that_the_player_plays_and_exports() -> None:
    at = open_page("pages/4_GRPO.py", {"rewards": "1,0,0,0"})
    at.text_input(key="deck-add-title").set_value("One of four")
    at.button(key="deck-add").click().run()
    assert not at.exception
    at.switch_page(PLAYER)
    at.query_params["deck"] = "draft"
    at.run()
    assert not at.exception and at.selectbox(key="deck").value == "draft"
    assert any("One of four" in m.value for m in at.markdown)
    assert any(r.value == "0.25" for r in at.metric)  # the added view's state, not the page's defaults


def test_a_view_picked_in_the_players_sidebar_draws_that_tabs_figure() -> None:
    interview = load_decks()[0]["interview"]
    number = next(i for i, s in enumerate(interview.slides, 1) if s.state.get("kl_view") == "DPO")
    at = open_page(PLAYER, {"deck": "interview", "slide": str(number)})
    assert interview.slides[number - 1].withhold and not figures(at)  # it asks the room first
    at.button(key="deck-reveal").click().run()
    names = [tr.get("name") for fig in figures(at) for tr in fig["data"]]
    assert "loss −log σ(m)" in names and "proxy reward E[r] (what π* optimises)" not in names
    view = next(w for w in at.segmented_control if w.key.endswith("-kl_view"))
    view.set_value("Reward hacking").run()
    assert not at.exception
    names = [tr.get("name") for fig in figures(at) for tr in fig["data"]]
    assert "proxy reward E[r] (what π* optimises)" in names and "loss −log σ(m)" not in names


_UPLOAD = """title = "Two slides"

[[slides]]
title = "Leash"
page = "KL_leash"
sweep = { field = "beta", from = "10", to = "0.1", steps = 5 }
parts = ["Reward hacking"]

[[slides]]
title = "Group"
page = "GRPO"
values = { rewards = "1,0,0,0" }
"""


def test_an_uploaded_deck_keeps_its_sweep_and_parts_through_reorder_and_download(monkeypatch) -> None:
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    served: dict[str, bytes] = {}  # what each download button would hand the browser, by file name
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, data, mimetype, kind, filename=None):
        served[filename] = data if isinstance(data, bytes) else data.encode()
        return original(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    at = open_page(PLAYER, {"deck": "interview"})
    at.file_uploader(key="draft-upload").set_value(("two.toml", _UPLOAD.encode(), "application/toml")).run()
    at.button(key="draft-load").click().run()
    at.button(key="draft-down-0").click().run()  # the leash slide moves to second place
    assert not at.exception
    again = parse_deck(served["my-deck.toml"].decode(), "again")
    assert [s.title for s in again.slides] == ["Group", "Leash"]
    leash = again.slides[1]
    assert leash.sweep is not None and leash.sweep.field == "beta"
    assert leash.sweep.values[0] == "10" and leash.sweep.values[-1] == "0.1"
    assert leash.parts == ("Reward hacking",)
    assert again.slides[0].query == {"rewards": "1,0,0,0"}


def test_the_speaker_view_sends_no_notes_while_answers_are_hidden() -> None:
    from decks import TALKS

    interview = load_decks()[0]["interview"]
    TALKS.update("hide-test", interview, 1, False)
    notes_line = "C = 6 x 7e9 x 2e12"  # slide 1's answer, in its notes
    shown = open_page(PLAYER, {"talk": "hide-test", "speaker": "true"})
    assert not shown.exception and any(notes_line in m.value for m in shown.markdown)
    hidden = open_page(PLAYER, {"talk": "hide-test", "speaker": "true", "hide": "true"})
    assert not hidden.exception
    assert not any(notes_line in m.value for m in hidden.markdown)
    assert any("speaker notes hold the answers" in c.value for c in hidden.caption)
    assert any(interview.slide(2).title in m.value for m in hidden.markdown)  # the next slide's title still shows


def test_the_handout_download_leaves_out_the_notes_while_answers_are_hidden(monkeypatch) -> None:
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    deferred: dict[str, object] = {}  # what each on-click download would build, by file name
    served: dict[str, bytes] = {}  # what each ordinary download button hands the browser, by file name
    add_deferred, load = MediaFileManager.add_deferred, MemoryMediaFileStorage.load_and_get_id

    def record_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        deferred[file_name] = data_callable
        return add_deferred(self, data_callable, mimetype, coordinates, file_name, **kw)

    def record(self, data, mimetype, kind, filename=None):
        served[filename] = data if isinstance(data, bytes) else data.encode()
        return load(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record_deferred)
    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    interview = load_decks()[0]["interview"]
    notes_line = "C = 6 x 7e9 x 2e12"  # slide 1's answer, in its notes
    assert notes_line in interview.slide(1).notes

    def handout_of(query: dict[str, str]):
        """Open the player and run it again until its warming has built the handout (a state, polled)."""
        at = open_page(PLAYER, query)
        deadline = time.monotonic() + 120
        while "interview-handout.html" not in served and time.monotonic() < deadline:
            time.sleep(0.2)
            at.run()
        return at, served.pop("interview-handout.html").decode()

    shown, handout = handout_of({"deck": "interview", "slide": "3"})
    assert not shown.exception and notes_line in handout and deferred == {}  # built ahead, not on the click
    assert notes_line.encode() in served.pop("interview.toml")

    hidden, handout = handout_of({"deck": "interview", "slide": "3", "hide": "true"})
    assert not hidden.exception
    assert 'class="notes"' not in handout and 'data-testid="notes-hidden"' in handout
    assert notes_line not in handout and interview.slide(1).title in handout  # titles stay, answers go
    assert "interview.toml" not in served and not any(notes_line.encode() in data for data in served.values())
    assert any("deck's TOML (which holds them) is not offered" in c.value for c in hidden.caption)


def test_play_the_sweep_draws_every_value_in_order_and_ends_on_the_last(monkeypatch) -> None:
    import time

    from pages.frame import Page

    lesson = load_decks()[0]["lesson"]
    number = next(
        i
        for i, s in enumerate(lesson.slides, 1)
        if s.sweep is not None and not s.withhold and s.view().facts.get("predict") != "hidden"
    )
    slide = lesson.slides[number - 1]
    sweep = slide.sweep
    assert len(sweep.values) >= 5 and sweep.values[-1] != slide.state[sweep.field]
    drawn: list[tuple[str, dict]] = []  # (key, figure JSON) of every chart the page draws, in order
    pauses: list[float] = []
    chart, sleep = Page.chart, time.sleep

    def record(self, fig, key, filename, *args, **kwargs):
        drawn.append((key, json.loads(fig.to_json())))
        return chart(self, fig, key, filename, *args, **kwargs)

    def pause(seconds: float) -> None:  # the frames' pauses are recorded, not waited; AppTest's own polls still wait
        if seconds >= 0.1:
            pauses.append(seconds)
        else:
            sleep(seconds)

    monkeypatch.setattr(Page, "chart", record)
    at = open_page(PLAYER, {"deck": "lesson", "slide": str(number)})
    assert not at.exception and not pauses and not any(k.startswith("deck-sweep") for k, _ in drawn)
    drawn.clear()
    monkeypatch.setattr(time, "sleep", pause)
    at.button(key="deck-play").click().run()
    monkeypatch.setattr(time, "sleep", sleep)
    assert not at.exception
    frames = [(k, fig) for k, fig in drawn if k.startswith("deck-sweep")]
    assert [k for k, _ in frames] == [f"deck-sweep-{number}-{i}" for i in range(len(sweep.values))]
    assert len(pauses) == len(sweep.values)
    # each frame is the page's own figure for the slide's state with the swept field at that step's value
    for (_, fig), value in zip(frames, sweep.values, strict=True):
        want = json.loads(slide.view(state=slide.state.replace(**{sweep.field: value})).figures["main"].to_json())
        assert len(_ys(fig)) == len(_ys(want)) and all(
            np.array_equal(a, b, equal_nan=True) for a, b in zip(_ys(fig), _ys(want), strict=True)
        ), value
    # the run ends showing the slide's figure at the sweep's last value, in place of the slide's own (one slot)
    shown = figures(at)
    last, own = frames[-1][1], json.loads(slide.view().figures["main"].to_json())
    assert len(shown) == len(figures(open_page(PLAYER, {"deck": "lesson", "slide": str(number)})))
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(_ys(shown[0]), _ys(last), strict=True))
    assert not all(np.array_equal(a, b, equal_nan=True) for a, b in zip(_ys(shown[0]), _ys(own), strict=True))
    # the next rerun draws the slide's own values again
    at.run()
    assert not at.exception
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(_ys(figures(at)[0]), _ys(own), strict=True))


def test_a_withheld_slide_opens_with_its_title_alone_until_revealed() -> None:
    lesson = load_decks()[0]["lesson"]
    number = next(i for i, s in enumerate(lesson.slides, 1) if s.withhold)
    at = open_page(PLAYER, {"deck": "lesson", "slide": str(number)})
    assert not at.exception and not figures(at) and not at.metric
    assert any("Answer withheld" in i.value for i in at.info)
    assert any(lesson.slide(number).title in m.value for m in at.markdown)
    at.button(key="deck-reveal").click().run()
    assert not at.exception and figures(at) and at.metric
    at.button(key="deck-next").click().run()
    at.button(key="deck-prev").click().run()  # back on the slide: withheld again, for the next room
    assert not figures(at) and not at.exception


def test_a_slide_shows_the_readouts_it_names() -> None:
    lesson = load_decks()[0]["lesson"]
    number = next(i for i, s in enumerate(lesson.slides, 1) if s.title == "3.7 DPO: worked example B")
    at = open_page(PLAYER, {"deck": "lesson", "slide": str(number)})
    assert not at.exception
    shown = {m.label: m.value for m in at.metric}
    assert shown.get("DPO loss") == "0.554" and shown.get("Weight") == "0.426"  # lesson §3.7, worked example B
    assert "β·log Z" not in shown  # the leash's readouts are not this slide's
    names = [tr.get("name") for fig in figures(at) for tr in fig["data"]]
    assert "loss −log σ(m)" in names and "π* ∝ π_ref·exp(r/β) (optimal)" not in names


def test_a_predict_first_slide_opens_its_controls_where_the_guess_goes() -> None:
    """Lesson slide 1 opens in Predict first: the sidebar's controls expander is open, so the guess field is in reach;
    a slide without a prediction keeps it closed."""
    asks = open_page(PLAYER, {"deck": "lesson", "slide": "1"})
    assert [e.proto.expanded for e in asks.sidebar.expander if e.label not in GROUPS] == [True]
    plain = open_page(PLAYER, {"deck": "lesson", "slide": "4"})
    assert [e.proto.expanded for e in plain.sidebar.expander if e.label not in GROUPS] == [False]


def test_a_predict_first_slide_shows_its_question_in_the_figure_not_a_notice_above_it() -> None:
    """On a projector the figure must fit the first screen: the player leaves out the page's Predict-first notice,
    whose question the held-back figure already shows."""
    at = open_page(PLAYER, {"deck": "lesson", "slide": "1"})
    assert not [i.value for i in at.info if "Predict first" in i.value]
    (fig,) = [f for f in figures(at)][:1]
    texts = " ".join(a.get("text", "") for a in fig["layout"].get("annotations", []))
    assert "Predict first" in texts and "bottom of the U-curve" in texts


def test_a_slides_figure_comes_with_a_free_drag_row_instead_of_plotlys_slider() -> None:
    """A lesson page's declared drag on a slide (slide 4: the scaling plan's N): the deck has no field N, so the
    figure comes without plotly's slider and with a free row, whose steps the browser draws and which sends nothing
    back; the page's own drag row writes its field (``free`` false)."""
    player = open_page(PLAYER, {"deck": "lesson", "slide": "4"})
    assert not player.exception
    (fig,) = [f for f in figures(player) if "sweep" in f]
    assert "sliders" not in fig["layout"]
    sweep = fig["sweep"]
    assert sweep["free"] is True and sweep["label"] == "plan: N" and sweep["prefix"] == "plan: N = "
    assert len(sweep["steps"]) == len(sweep["labels"]) == 98
    page = open_page("pages/1_Scaling_laws.py", {"predict_scaling": "false"})
    (own,) = [f for f in figures(page) if "sweep" in f]
    assert own["sweep"]["free"] is False and own["sweep"]["label"] == "Your plan: model size N (parameters)"
    assert "N" not in player.session_state
