"""The drill page in AppTest (cards, reveal steps, roles, grading into the learner's store, export and import) and
the app-wide "hide answers" switch on a lesson page; plus the drill page's pure logic."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from study.cards import ANSWER_PARTS
from study.progress import DB_NAME, ProgressStore
from tests.apptest import figures, no_exception, open_page
from views import drills as view_of
from views.state import APP_PARAMS
from viz.style import DARK, PRESENTER_MIN

PAGE = "pages/14_Drills.py"
CARD = view_of.BY_ID["scaling-01"]


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    """Every test keeps progress in its own folder."""
    monkeypatch.setenv("LESSON_DATA_DIR", str(tmp_path))
    return tmp_path


def _texts(at) -> str:
    """Everything the page rendered as text: markdown, captions, LaTeX, code, alerts, labels."""
    parts = [
        e.value for kind in ("markdown", "caption", "latex", "code", "info", "success", "error") for e in at.get(kind)
    ]
    parts += [str(e.label) for kind in ("button", "checkbox", "expander") for e in at.get(kind)]
    return "\n".join(parts)


def _latex(at) -> list[str]:
    """The LaTeX of every st.latex element, without the $$ Streamlit wraps it in."""
    return [x.value.strip("$\n") for x in at.latex]


def _answer_text_absent(at, card) -> None:
    text = _texts(at)
    for part in ANSWER_PARTS:
        assert getattr(card.answer, part) not in text, part
    for line in (*card.follow_ups, *card.traps):
        assert line not in text


def test_the_page_opens_on_the_first_card_without_exception_or_warning():
    at = open_page(PAGE)
    assert no_exception(at)
    assert at.warning.len == 0 and at.error.len == 0
    first = view_of.CARDS[0]
    assert any(first.question in m.value for m in at.markdown)
    assert f"card 1 of {len(view_of.CARDS)}" in _texts(at)
    assert at.slider(key="seconds").value == 75


def test_a_card_link_shows_that_card_and_its_show_me_link():
    at = open_page(PAGE, {"card": "scaling-01"})
    assert no_exception(at) and at.warning.len == 0
    assert any(CARD.question in m.value for m in at.markdown)
    links = [link.proto for link in at.get("page_link") if "Show me" in link.proto.label]
    assert len(links) == 1 and links[0].page.endswith("Scaling_laws")
    assert parse_qs(links[0].query_string) == {"C": ["6e20"], "N": ["1e9"]}
    _answer_text_absent(at, CARD)  # nothing revealed yet


def test_reveal_steps_show_the_parts_in_order():
    at = open_page(PAGE, {"card": "scaling-01"})
    expected = ["Reveal the sentence", "Reveal the equation", "Reveal the number", "Reveal the trade-off"]
    for shown, label in enumerate(expected):
        assert at.button(key="drill-reveal").label == label
        at.button(key="drill-reveal").click().run()
        assert no_exception(at)
        assert at.slider(key="reveal").value == shown + 1
        markdown = "\n".join(m.value for m in at.markdown)
        latex = _latex(at)
        assert (CARD.answer.sentence in markdown) is True
        assert (latex == [CARD.answer.equation]) is (shown >= 1)
        assert (CARD.answer.number in markdown) is (shown >= 2)
        assert (CARD.answer.trade_off in markdown) is (shown >= 3)
        assert (CARD.follow_ups[0] in markdown) is (shown >= 3)
    assert not [b for b in at.button if b.key == "drill-reveal"]  # all four shown: no further step
    at.button(key="drill-unreveal").click().run()
    assert at.slider(key="reveal").value == 0
    _answer_text_absent(at, CARD)


def test_a_reveal_link_opens_with_that_many_parts():
    at = open_page(PAGE, {"card": "scaling-01", "reveal": "2"})
    markdown = "\n".join(m.value for m in at.markdown)
    assert CARD.answer.sentence in markdown and CARD.answer.number not in markdown
    assert _latex(at) == [CARD.answer.equation]


def test_the_candidate_sees_the_question_the_countdown_and_show_me_only():
    at = open_page(PAGE, {"card": "scaling-01", "role": "candidate", "reveal": "4"})
    assert no_exception(at) and at.warning.len == 0
    assert any(CARD.question in m.value for m in at.markdown)
    _answer_text_absent(at, CARD)
    assert at.latex.len == 0 and at.checkbox.len == 0
    assert [b.label for b in at.button] == ["Reset to defaults"]  # no reveal, grade or import
    assert any("Show me" in link.proto.label for link in at.get("page_link"))
    countdown = [e for e in at.get("bidi_component") if "drill-countdown" in e.proto.id]
    assert len(countdown) == 1 and json.loads(countdown[0].proto.json)["seconds"] == 75


def test_the_interviewer_sees_the_answer_follow_ups_traps_rubric_and_the_candidate_link():
    at = open_page(PAGE, {"card": "scaling-01", "role": "interviewer", "seconds": "60"})
    assert no_exception(at) and at.warning.len == 0
    text = _texts(at)
    for part in ("sentence", "number", "trade_off"):
        assert getattr(CARD.answer, part) in text
    assert _latex(at) == [CARD.answer.equation]
    for line in (*CARD.follow_ups, *CARD.traps):
        assert line in text
    assert [c.label for c in at.checkbox] == list(view_of.PART_LABELS.values())
    assert "Score: 0 of 4" in text
    at.checkbox(key="rubric-scaling-01-number").check().run()
    assert "Score: 1 of 4" in _texts(at)
    (link,) = [c.value for c in at.code if "role=candidate" in c.value]
    query = parse_qs(urlsplit(link).query)
    assert query["card"] == ["scaling-01"] and query["role"] == ["candidate"] and query["reveal"] == ["0"]
    assert query["seconds"] == ["60"] and query["hide"] == ["true"]


def test_grading_writes_the_learners_store_moves_on_and_survives_a_restart(data_dir):
    at = open_page(PAGE, {"card": "scaling-01", "learner": "ada"})
    assert no_exception(at) and at.warning.len == 0
    at.button(key="grade-easy").click().run()
    assert no_exception(at)
    store = ProgressStore(data_dir)
    state = store.state("ada", "scaling-01")
    assert state is not None and state.reps == 1 and state.state == "review"
    assert [r.rating for r in store.reviews("ada")] == ["easy"]
    assert at.text_input(key="card").value == view_of.CARDS[0].id  # the first card not yet graded
    assert any("Graded `scaling-01` **easy**" in s.value for s in at.success)
    assert at.slider(key="reveal").value == 0

    again = open_page(PAGE, {"learner": "ada", "due": "true", "topics": "scaling"})  # a new session
    assert no_exception(again) and again.warning.len == 0
    assert f"1 of {len(view_of.CARDS)} cards graded" in _texts(again)
    scaling = [c.id for c in view_of.CARDS if c.topic == "scaling"]
    assert f"card 1 of {len(scaling) - 1}" in _texts(again)  # scaling-01 is not due again today
    assert any(view_of.BY_ID[scaling[1]].question in m.value for m in again.markdown)


def test_a_bad_learner_name_gives_a_notice_and_writes_nothing(data_dir):
    at = open_page(PAGE, {"card": "scaling-01", "learner": "ada lovelace!"})
    assert no_exception(at)
    assert any("profile name" in w.value and "Nothing is saved" in w.value for w in at.warning)
    assert all(at.button(key=f"grade-{g}").disabled for g in view_of.GRADES)  # a browser cannot click them
    assert not [b for b in at.download_button if b.key == "drill-export"] and at.file_uploader.len == 0
    assert not (data_dir / DB_NAME).exists()
    at.text_input(key="learner").set_value("ada").run()  # fixed: grading works
    assert at.warning.len == 0
    at.button(key="grade-good").click().run()
    assert ProgressStore(data_dir).state("ada", "scaling-01").reps == 1


def test_export_then_import_round_trips(data_dir, monkeypatch):
    exported: list[str] = []
    original = ProgressStore.export_json

    def recording(self, profile):
        exported.append(original(self, profile))
        return exported[-1]

    monkeypatch.setattr(ProgressStore, "export_json", recording)
    at = open_page(PAGE, {"card": "scaling-01", "learner": "ada"})
    for grade in ("good", "again", "easy"):
        at.button(key=f"grade-{grade}").click().run()
    assert at.download_button(key="drill-export").label == "Export progress (JSON)"
    store = ProgressStore(data_dir)
    ada = store.states("ada")
    ada_export = exported[-1]  # what the page's export button holds
    assert len(ada) == 3 and json.loads(ada_export)["profile"] == "ada"
    assert {c["card_id"] for c in json.loads(ada_export)["cards"]} == set(ada)

    at.text_input(key="learner").set_value("bob").run()
    at.file_uploader(key="drill-import").set_value(("ada.json", ada_export.encode(), "application/json")).run()
    at.button(key="drill-import-go").click().run()
    assert no_exception(at)
    assert any("Imported 3 cards" in s.value for s in at.success)
    assert store.states("bob") == ada
    log = [(r.card_id, r.rating) for r in store.reviews("ada")]
    assert [(r.card_id, r.rating) for r in store.reviews("bob")] == log and len(log) == 3

    at.file_uploader(key="drill-import").set_value(("notes.json", b'{"format": "something else"}', "text/json")).run()
    at.button(key="drill-import-go").click().run()
    assert any("Could not import notes.json" in e.value and "unchanged" in e.value for e in at.error)
    assert store.states("bob") == ada


def test_hide_true_removes_lesson_answers_and_carries_across_a_page_switch():
    at = open_page("pages/1_Scaling_laws.py", {"hide": "true"})
    assert no_exception(at)
    labels = [e.label for e in at.expander]
    assert not [label for label in labels if label.startswith("Reveal")]
    text = _texts(at)
    assert "6×10²⁰ FLOPs" not in text and "parameters and tokens should grow together" not in text
    assert "Reveal the answer" not in text
    # the quick check and the interview; the explanation and the common mistakes with the reason after a colon
    assert sum(c.value == "Answers hidden for screen-sharing (hide=true)" for c in at.caption) == 2
    assert sum(c.value.startswith("Answers hidden for screen-sharing (hide=true): ") for c in at.caption) == 2
    assert at.toggle(key="hide").value is True
    assert any(s.value.startswith("A dense model with **1B parameters**") for s in at.markdown)  # the question stays

    at.switch_page("pages/2_KL_leash.py").run()
    assert no_exception(at)
    assert not [e.label for e in at.expander if e.label.startswith("Reveal")]
    assert at.toggle(key="hide").value is True
    nav = [link.proto for link in at.get("page_link")]
    assert nav and all("hide=true" in link.query_string for link in nav)

    at.toggle(key="hide").set_value(False).run()
    assert any(e.label == "Reveal the answer" for e in at.expander)


def test_without_hide_the_lesson_answers_are_there():
    at = open_page("pages/1_Scaling_laws.py")
    labels = [e.label for e in at.expander]
    assert "Reveal the answer" in labels and "Reveal a 60-90 second answer" in labels
    assert at.toggle(key="hide").value is False


def test_hide_true_turns_the_drill_page_into_the_candidates_view():
    at = open_page(PAGE, {"card": "scaling-01", "role": "interviewer", "reveal": "4", "hide": "true"})
    assert no_exception(at)
    _answer_text_absent(at, CARD)
    assert "Answers hidden for screen-sharing (hide=true)" in _texts(at)
    assert at.button(key="drill-next").label == "Next →"  # the interviewer can still move on


# ------------------------------------------------------------------------------------------- pure logic


def test_hide_is_an_app_wide_setting_and_the_spec_round_trips_defaults():
    assert "hide" in APP_PARAMS
    assert view_of.SPEC.parse({"profile": "ada"}) == (view_of.SPEC.defaults().replace(learner="ada"), [])
    state, problems = view_of.SPEC.parse({"seconds": "120"})
    assert state.seconds == 75 and problems


def test_decks_steps_and_the_next_card():
    scaling = view_of.deck_of(["scaling"])
    assert scaling == tuple(c.id for c in view_of.CARDS if c.topic == "scaling") and scaling[0] == "scaling-01"
    assert view_of.deck_of(["scaling"], ["lora-01", "scaling-03", "scaling-02"]) == ("scaling-03", "scaling-02")
    assert view_of.step(scaling, scaling[-1], 1) == scaling[0] and view_of.step(scaling, scaling[0], -1) == scaling[-1]
    assert view_of.step(scaling, "lora-01", 1) == scaling[0]
    assert view_of.next_card(scaling, "scaling-01", ["scaling-01", "lora-01", "scaling-05"]) == "scaling-05"
    assert view_of.next_card(scaling, "scaling-02", []) == "scaling-03"


def test_drill_decides_the_parts_per_role():
    state = view_of.SPEC.defaults().replace(card="scaling-01", reveal=2)
    assert view_of.drill(state).parts == ("sentence", "equation")
    assert view_of.drill(state.replace(role="interviewer")).parts == ANSWER_PARTS
    assert view_of.drill(state.replace(role="candidate")).parts == ()
    hidden = view_of.drill(state.replace(role="interviewer"), hide=True)
    assert hidden.parts == () and hidden.role == "candidate"
    missing = view_of.drill(state.replace(card="scaling-99"))
    assert missing.card == view_of.CARDS[0] and missing.notices[0][0] == "warning"
    empty = view_of.drill(state.replace(card="", topics=()))
    assert empty.card is None and empty.deck == () and empty.notices[0][0] == "info"


def test_the_candidate_query_drops_the_interviewers_settings():
    query = {"role": "interviewer", "reveal": "3", "learner": "ada", "card": "x-01", "present": "true", "due": "true"}
    assert view_of.candidate_query(query, "lora-02") == {
        "present": "true",
        "card": "lora-02",
        "role": "candidate",
        "reveal": "0",
        "hide": "true",
    }
    assert view_of.candidate_link("http://h/Drills", {}, "lora-02").startswith("http://h/Drills?card=lora-02&")


def test_bad_link_values_give_messages_and_the_defaults():
    bad = {"seconds": "1e400", "reveal": "nan", "topics": "nope", "role": "boss", "card": "abc", "due": "maybe"}
    at = open_page(PAGE, bad)
    assert no_exception(at)
    warnings = "\n".join(w.value for w in at.warning)
    for name in ("seconds", "reveal", "topics", "role", "due"):
        assert f"`{name}={bad[name]}`" in warnings
    assert at.slider(key="seconds").value == 75 and at.slider(key="reveal").value == 0
    assert "Choose at least one topic" in _texts(at) and "No card to show" in _texts(at)


# ------------------------------------------------------------------------------------------ the figure beside


def _numbers(obj) -> list[float]:
    """Every number in a figure's data and layout (annotations, slider steps), not in its template."""
    if isinstance(obj, dict):
        return [x for k, v in obj.items() if k != "template" for x in _numbers(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in _numbers(v)]
    if isinstance(obj, bool):
        return []
    return [float(obj)] if isinstance(obj, int | float) else []


def _near(at, value: float, rel: float = 2e-3) -> list[float]:
    return [x for f in figures(at) for x in _numbers(f) if abs(x - value) <= rel * abs(value)]


def _n_opt(C: float) -> float:
    """Chinchilla approach 3 (Hoffmann et al. 2022): N_opt = G (C/6)^(b/(a+b)), G = (aA/(bB))^(1/(a+b))."""
    A, B, a, b = 406.4, 410.7, 0.34, 0.28
    return (a * A / (b * B)) ** (1 / (a + b)) * (C / 6) ** (b / (a + b))


def test_show_me_draws_the_cards_figure_beside_it_for_the_interviewer():
    """scaling-01 links C = 6e20, N = 1e9: the U-curve drawn beside the card holds that budget's optimum."""
    at = open_page(PAGE, {"card": "scaling-01", "role": "interviewer"})
    assert no_exception(at) and at.warning.len == 0
    assert len(figures(at)) == 1
    assert _near(at, _n_opt(6e20)) != []
    assert any("Show me" in link.proto.label for link in at.get("page_link"))  # the page stays one click away


def test_the_candidate_sees_the_figure_with_its_answer_held_back():
    """Predict first: before the answer, the figure beside the card is the page's held-back one; the optimum is
    absent from the figure the browser receives."""
    for query in ({"role": "candidate"}, {"role": "solo", "reveal": "3"}, {"role": "interviewer", "hide": "true"}):
        at = open_page(PAGE, {"card": "scaling-01", **query})
        assert no_exception(at) and at.warning.len == 0, query
        assert len(figures(at)) == 1, query
        assert _near(at, _n_opt(6e20)) == [], query
        assert any("held back" in c.value for c in at.caption), query
        if query["role"] != "solo":
            _answer_text_absent(at, CARD)
    solo = open_page(PAGE, {"card": "scaling-01", "reveal": "4"})  # the whole answer shown: the whole figure
    assert len(figures(solo)) == 1 and _near(solo, _n_opt(6e20)) != []


def test_a_figure_that_would_give_the_answer_away_waits_for_the_answer():
    """systems-06 (PagedAttention's waste) is drawn from the Serving page, which has no Predict-first switch: the
    candidate gets no figure, only the link; with the answer shown it is the KV-capacity figure."""
    card = view_of.BY_ID["systems-06"]
    at = open_page(PAGE, {"card": card.id, "role": "candidate"})
    assert no_exception(at) and figures(at) == []
    assert any("appears here with the model answer" in c.value for c in at.caption)
    links = [link.proto for link in at.get("page_link") if "Show me" in link.proto.label]
    assert len(links) == 1 and links[0].page.endswith("Serving")
    shown = open_page(PAGE, {"card": card.id, "role": "interviewer"})
    assert no_exception(shown) and shown.warning.len == 0 and len(figures(shown)) == 1


def test_a_card_can_name_the_figure_it_shows():
    """systems-01 names the Training_memory page's pipeline-bubble figure: (p - 1)/(m + p - 1) = 7/15 at p = m = 8."""
    at = open_page(PAGE, {"card": "systems-01", "role": "interviewer"})
    assert no_exception(at) and at.warning.len == 0 and len(figures(at)) == 1
    assert _near(at, 7 / 15, rel=1e-6) != []


def test_the_cards_figure_follows_the_viewers_theme_and_presenter_mode():
    at = open_page(PAGE, {"card": "scaling-01", "role": "interviewer", "present": "true"}, context={"theme": "dark"})
    assert no_exception(at)
    (fig,) = figures(at)
    assert fig["layout"]["paper_bgcolor"] == DARK.background and fig["layout"]["font"]["size"] >= PRESENTER_MIN


def test_a_guess_committed_beside_the_held_back_figure_reveals_it():
    """The candidate types a guess of the bottom's N beside the figure (the scaling page's own guess field, its
    label and range): the figure is redrawn with the optimum in it and the guess marked."""
    at = open_page(PAGE, {"card": "scaling-01", "role": "candidate"})
    box = at.number_input(key="drill-guess-scaling-01")
    assert box.label == "Your guess: the bottom's N (parameters)" and box.value is None
    assert _near(at, _n_opt(6e20)) == []
    box.set_value(2e9).run()
    assert no_exception(at) and at.warning.len == 0
    assert _near(at, _n_opt(6e20)) != [] and _near(at, 2e9, rel=1e-9) != []
    assert any("Your guess is on the figure" in c.value for c in at.caption)
    _answer_text_absent(at, CARD)  # the figure's answer, not the card's model answer


def test_rubric_ticks_stay_with_their_card_after_next_and_back():
    at = open_page(PAGE, {"card": "scaling-01", "role": "interviewer"})
    at.checkbox(key="rubric-scaling-01-sentence").check().run()
    at.checkbox(key="rubric-scaling-01-number").check().run()
    assert any(c.value == "Score: 2 of 4" for c in at.caption)
    at.button(key="drill-next").click().run()
    second = at.text_input(key="card").value
    assert second != "scaling-01" and any(c.value == "Score: 0 of 4" for c in at.caption)
    at.checkbox(key=f"rubric-{second}-equation").check().run()
    at.button(key="drill-prev").click().run()
    assert at.text_input(key="card").value == "scaling-01"
    assert at.checkbox(key="rubric-scaling-01-sentence").value and at.checkbox(key="rubric-scaling-01-number").value
    assert not at.checkbox(key="rubric-scaling-01-equation").value
    assert any(c.value == "Score: 2 of 4" for c in at.caption)
    at.button(key="drill-next").click().run()
    assert at.checkbox(key=f"rubric-{second}-equation").value


def test_the_finder_opens_a_card_by_words_of_its_question():
    """The finder lists every card by its question; choosing one shows it (AppTest cannot type into the box's
    filter: the browser test does) and empties the finder for the next search."""
    at = open_page(PAGE)
    finder = at.selectbox(key="drill-find")
    card = view_of.BY_ID["lora-02"]
    assert len(finder.options) == len(view_of.CARDS)
    assert f"{card.question} (lora-02)" in finder.options
    finder.select("lora-02").run()
    assert no_exception(at)
    assert at.text_input(key="card").value == "lora-02"
    assert any(card.question in m.value for m in at.markdown)
    assert at.selectbox(key="drill-find").value is None
