"""The LoRA page in AppTest: worked example F and QLoRA from presets, every control moves its figure, links
reproduce the view, bad links, out-of-range ranks and bad uploads give a message and a sane default."""

import dataclasses
import io

import numpy as np
import pytest

from core import lora, lora_memory
from tests.apptest import (
    BAD_LINK_VALUES,
    Reused,
    assert_bad_link_falls_back,
    assert_link_reproduces,
    charts,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    opened,
    slider_of,
    trace,
)
from views import lora as view_of

PAGE = "pages/3_LoRA.py"
RANK, COST, INIT = "Rank-r approximation", "What LoRA costs", "Initialisation traps"


def _data(at) -> list:
    """The meaningful data of the open view's figures: trace values, annotation texts, the slider's position."""
    out = []
    for fig in figures(at):
        for tr in fig["data"]:
            out += [decode(tr.get(axis, [])).tolist() for axis in ("x", "y", "z")]
        out += [a["text"] for a in fig["layout"].get("annotations", [])]
        out += [(s["active"], len(s["steps"])) for s in fig["layout"].get("sliders", [])]
        if "sweep" in fig:
            out.append((fig["sweep"]["active"], len(fig["sweep"]["steps"])))
        out += [fig["layout"].get("xaxis", {}).get("type"), fig["layout"].get("title", {}).get("text")]
    return out


def _notes(at) -> list[str]:
    return [i.value for i in at.info]


def _view(view: str, query: dict | None = None):
    return open_page(PAGE, {"lora_view": view, **(query or {})})


def _npy(a) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.asarray(a))
    return buf.getvalue()


@pytest.fixture(scope="module", autouse=True)
def quick_training():
    """The initialisation traps with 40 Adam steps instead of 200 (same layer, data and seeds): what these tests
    read (the step-0 gradients, the flat loss of A = B = 0, the merge gap, controls, links, clamps) does not depend
    on the length of the run; tests/test_core_lora.py trains to convergence."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(view_of, "TRAIN", dataclasses.replace(view_of.TRAIN, steps=40))
        patch.setattr(view_of, "_RUNS", {})
        yield


@pytest.fixture(scope="module")
def upload_page():
    return open_page(PAGE)


@pytest.fixture(scope="module")
def reused():
    return {view: Reused(PAGE, {"lora_view": view}) for view in (RANK, COST, INIT)}


def test_default_rank_view(default):
    assert default.warning.len == 0 and default.info.len == 0
    heat, curves = figures(default)
    assert [t["type"] for t in heat["data"]] == ["heatmap"] * 3
    slider = slider_of(heat)
    assert "sliders" not in heat["layout"]  # it became the drag row
    assert slider["steps"][slider["active"]]["label"] == "8"  # the slider starts at the page's r
    assert "r = 8</b> of min(d, k) = 64" in heat["layout"]["annotations"][-1]["text"]
    assert decode(heat["data"][0]["z"]).shape == (64, 64)  # 64 x 64: every entry, no block averaging
    m = metrics(default, measured=True)
    curves_core = lora.rank_curves(lora.svd(lora.make_target(64, 64, "exponential", 0)))
    ro = curves_core.readout(8)
    assert m["Trainable r(d + k)"] == "1,024" and m["Share of dk"] == "25.0%"  # 8 (64 + 64) of 64²
    assert m["Relative error"] == f"{100 * ro.rel_frobenius:.1f}%"
    assert m["Energy captured"] == f"{100 * ro.energy:.1f}%"
    assert "SVD (once per matrix)" in m
    err = decode(trace(curves, "‖ΔW − BA‖")["y"])
    assert err[0] == pytest.approx(1.0) and err[-1] == pytest.approx(0.0, abs=1e-6) and np.all(np.diff(err) <= 1e-9)


@pytest.mark.parametrize(
    ("view", "kind", "key", "value"),
    [
        (RANK, "number_input", "rank", 20.0),
        (RANK, "slider", "rows", 128),
        (RANK, "slider", "cols", 32),
        (RANK, "selectbox", "profile", "flat"),
        (RANK, "number_input", "seed", 3.0),
        (RANK, "toggle", "smooth", True),
        (RANK, "toggle", "logr", True),
        (COST, "number_input", "rank", 64.0),
        (COST, "selectbox", "model", lora_memory.LLAMA3_8B.name),
        (COST, "pills", "mats", ["q", "v", "up", "down"]),
        (COST, "segmented_control", "base", "nf4"),
        (COST, "number_input", "gpu_gb", 24.0),
        (INIT, "number_input", "rank", 2.0),
        (INIT, "number_input", "alpha", 4.0),
        (INIT, "toggle", "rs", True),
        (INIT, "number_input", "seed", 1.0),
    ],
)
def test_each_control_changes_its_figure(reused, view, kind, key, value):
    before = _data(opened(PAGE, {"lora_view": view}))
    with reused[view].change(kind, key, value) as at:
        assert no_exception(at) and at.warning.len == 0 and _notes(at) == []
        assert _data(at) != before


def test_alpha_and_rslora_change_the_scale():
    at = _view(COST)
    assert metrics(at)["Scale s"] == "2"
    at.toggle(key="rs").set_value(True).run()
    assert metrics(at)["Scale s"] == f"{16 / 8**0.5:.3g}" == "5.66"
    at.number_input(key="alpha").set_value(32.0).run()
    assert metrics(at)["Scale s"] == "11.3"


@pytest.mark.parametrize(
    ("view", "query"),
    [
        (RANK, {"rank": "5", "rows": "200", "cols": "96", "profile": "low_rank_noise", "seed": "4", "smooth": "true"}),
        (RANK, {"rank": "40", "rows": "80", "cols": "300", "profile": "power_law", "logr": "true"}),
        (
            COST,
            {
                "rank": "16",
                "model": lora_memory.LLAMA3_8B.name,
                "mats": "q",
                "base": "int8",
                "alpha": "32",
                "rs": "true",
                "gpu_gb": "24",
            },
        ),
        (INIT, {"rank": "3", "alpha": "6", "rs": "true", "seed": "2"}),
    ],
)
def test_link_with_every_parameter_reproduces_the_view(view, query):
    linked = assert_link_reproduces(
        PAGE, {"lora_view": view, **query, "present": "true"}, _data, session={"lora_view": view}
    )
    assert linked.warning.len == 0 and _notes(linked) == []


BAD = BAD_LINK_VALUES


@pytest.mark.parametrize("view", [RANK, COST, INIT])
@pytest.mark.parametrize("bad", BAD)
def test_bad_link_values_fall_back_to_defaults_with_a_message(view, bad):
    keys = ["rows", "cols", "alpha", "gpu_gb", "profile", "model", "base", "mats", "smooth", "logr", "rs"]
    keys += ["rank", "seed"] * (bad != "0")  # rank = 0 and seed = 0 are valid
    assert_bad_link_falls_back(_view(view, dict.fromkeys(keys, bad)), opened(PAGE, {"lora_view": view}), bad)


def test_bad_view_falls_back_to_the_first_tab():
    at = open_page(PAGE, {"lora_view": "Nonsense"})
    assert no_exception(at) and metrics(at) == metrics(opened(PAGE))
    (warning,) = at.warning
    assert warning.value.startswith("The link asked for `lora_view=Nonsense`, which is not a valid value here")
    assert warning.value.endswith(f"using `{RANK}` instead.")


@pytest.mark.parametrize(
    ("view", "query", "note", "shown"),
    [
        (
            RANK,
            {"rows": "16", "cols": "32", "rank": "100"},
            "r = 100 must lie between 0 and 16; using 16",
            {"Energy captured": "100.0%"},
        ),
        (COST, {"rank": "0"}, "r = 0 must lie between 1 and 4096; using 1", {"Trainable parameters": "1,048,576"}),
        (INIT, {"rank": "100"}, "must lie between 1 and 64; using 64", {"∂L/∂A at step 0, B = 0": "0 exactly"}),
    ],
)
def test_out_of_range_ranks_are_clamped_with_a_note(view, query, note, shown):
    at = _view(view, query)
    assert no_exception(at)
    assert any(note in text for text in _notes(at)), _notes(at)
    for label, value in shown.items():
        assert metrics(at)[label] == value


def test_a_non_whole_rank_in_a_link_is_rounded_with_a_warning():
    at = _view(RANK, {"rank": "7.6"})
    assert no_exception(at) and _notes(at) == []
    assert [w.value for w in at.warning] == ["The link asked for `rank=7.6`, a whole number here; using `8`."]
    assert metrics(at)["Trainable r(d + k)"] == "1,024"  # 8 (64 + 64)
    assert "rank" not in at.query_params  # 8 is the default: the link drops it


def test_a_rounded_link_value_is_also_the_widgets_value():
    at = _view(RANK, {"rank": "5.4"})
    assert metrics(at)["Trainable r(d + k)"] == "640"  # 5 (64 + 64)
    assert at.number_input(key="rank").value == 5.0
    assert at.query_params["rank"] == "5"


def test_rank_zero_shows_the_whole_error():
    at = _view(RANK, {"rank": "0"})
    assert no_exception(at) and _notes(at) == []
    m = metrics(at)
    assert m["Relative error"] == "100%" or m["Relative error"] == "100.0%"
    assert m["Trainable r(d + k)"] == "0" and m["Energy captured"] == "0%"


def test_preset_worked_example_f():
    at = _view(RANK, {"rank": "30", "mats": "down", "base": "nf4"})
    choose_preset(at, "LoRA", "Worked example F").run()
    assert no_exception(at) and at.session_state["lora_view"] == COST
    m = metrics(at)
    assert m["Trainable parameters"] == "8,388,608"  # 32 layers x 4 x 8 (4096 + 4096)
    assert m["Share of the model"] == "0.12%"
    assert m["Adapter training states"] == "134 MB"  # 16 x 8.39M
    assert m["Frozen base (bf16)"] == "14.0 GB"  # 2 x 7B
    assert m["Full fine-tuning states"] == "112 GB"  # 16 x 7B
    (fig,) = figures(at)
    assert decode(trace(fig, "weights + gradients")["x"])[0] == pytest.approx(112.0)


def test_preset_qlora_65b_fits_one_48gb_gpu():
    at = open_page(PAGE)
    choose_preset(at, "LoRA", "QLoRA: 65B on one 48 GB GPU").run()
    assert no_exception(at)
    m = metrics(at)
    assert m["Frozen base (nf4)"] == "33.5 GB"  # 4.127 bits x 65B (NF4 with double quantisation)
    total = lora_memory.lora_memory(**lora_memory.PRESET_QLORA_65B).lora_total_bytes
    assert m["LoRA total"] == f"{total / 1e9:.1f} GB" and total < 48e9
    (fig,) = figures(at)
    # the one-GPU line: a "48 GB" GPU holds 48 GiB, drawn on the axis of 10^9 bytes
    assert any(s.get("x0") == pytest.approx(48 * 2**30 / 1e9) for s in fig["layout"].get("shapes", []))


@pytest.mark.parametrize(
    ("preset", "error_below"), [("Fast decay: r = 8 is plenty", 0.25), ("Flat spectrum: no free lunch", None)]
)
def test_rank_presets(preset, error_below):
    at = _view(COST)
    choose_preset(at, "LoRA", preset).run()
    assert no_exception(at) and at.session_state["lora_view"] == RANK
    err = float(metrics(at)["Relative error"].rstrip("%")) / 100
    if error_below is None:  # flat: every direction carries the same energy, so r = 8 of 256 keeps 8/256 of it
        assert err == pytest.approx((1 - 8 / 256) ** 0.5, abs=1e-3)
    else:
        assert err < error_below


def test_initialisation_traps():
    at = _view(INIT)
    assert no_exception(at)
    m = metrics(at)
    assert m["∂L/∂A at step 0, B = 0"] == "0 exactly"
    assert float(m["∂L/∂B at step 0, B = 0"]) > 0
    assert m["Step-0 output change, B = 0"] == "0.0 exactly"
    before, after = m["Loss with A = B = 0"].split(" → ")
    assert before == after  # nothing trains
    assert float(m["Merge gap"]) < 1e-5
    (fig,) = figures(at)
    assert {t["name"] for t in fig["data"] if t.get("showlegend", True) is not False} >= {
        "B = 0, A random",
        "A = B = 0",
        "both random",
    }
    assert at.get("progress") == []  # the bar is gone once training has finished


def test_upload_npy_replaces_the_generated_matrix():
    at = open_page(PAGE)
    a = np.outer(np.arange(1, 41), np.arange(1, 31)).astype(float) + np.eye(40, 30)
    at.file_uploader(key="upload").set_value(("delta.npy", _npy(a), "application/octet-stream")).run()
    assert no_exception(at) and at.warning.len == 0
    assert any(
        "Using the uploaded matrix `delta.npy` (40 × 30)" in n and "not part of the link" in n for n in _notes(at)
    )
    assert any("does not carry the upload" in c.value for c in at.sidebar.caption)
    heat, _ = figures(at)
    assert decode(heat["data"][0]["z"]).shape == (40, 30)
    assert metrics(at)["Trainable r(d + k)"] == f"{8 * 70:,}"


def test_upload_csv():
    at = open_page(PAGE)
    at.file_uploader(key="upload").set_value(("d.csv", b"1,2,3\n4,5,6\n7,8,10\n", "text/csv")).run()
    assert no_exception(at)
    assert metrics(at)["Energy captured"] == "100.0%"  # r = 8 clamped to min(d, k) = 3: exact
    assert any("r = 8 must lie between 0 and 3" in n for n in _notes(at))


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("text.csv", b"a,b\nc,d\n", "not a rectangular table of numbers"),
        ("cube.npy", _npy(np.ones((3, 4, 5))), "must be 2-D"),
        ("nan.csv", b"1,2\nnan,4\n", "non-finite"),
        ("big.csv", b"1,2\n" * 4097, "at most 4096 x 4096"),
        ("vector.npy", _npy(np.arange(5.0)), "must be 2-D"),
        ("picture.png", b"\x89PNG....", "unsupported file type"),
        ("broken.npy", b"not numpy at all", "not a readable .npy"),
    ],
)
def test_bad_uploads_give_a_message_and_keep_the_generated_matrix(default, upload_page, name, data, message):
    at = upload_page  # a rejected upload leaves the page as it was: one page takes them all in turn
    at.file_uploader(key="upload").set_value((name, data, "application/octet-stream")).run()
    assert no_exception(at)
    warnings = [w.value for w in at.warning]
    assert any(f"The upload `{name}` was not used" in w and message in w for w in warnings), warnings
    assert metrics(at) == metrics(default)


def test_large_matrix_is_block_averaged_and_small():
    # the link uses the old names (view, d, k, r, gpu) of lora_view, rows, cols, rank and gpu_gb: they still work
    at = open_page(PAGE, {"view": RANK, "d": "1024", "k": "1024", "r": "8", "gpu": "48"})
    assert no_exception(at) and at.warning.len == 0
    assert dict(at.query_params) == {"rows": "1024", "cols": "1024", "gpu_gb": "48"}  # view and r: the defaults
    heat, _ = figures(at)
    assert decode(heat["data"][0]["z"]).shape == (64, 64)
    assert "shown as 64×64 block averages" in heat["layout"]["title"]["text"]
    assert any("shown as block averages" in c.value for c in at.caption)
    sizes = [len(chart.spec) for chart in charts(at)]
    assert sizes[0] <= 1_000_000 and sum(sizes) <= 1_100_000, sizes
    assert metrics(at)["Share of dk"] == "1.56%"  # 8 x 2048 / 1024²


def test_presenter_mode_folds_the_equation():
    at = open_page(PAGE, {"present": "true"})
    assert no_exception(at)
    assert any(e.label == "The equation" for e in at.expander)
    assert figures(at)[0]["layout"]["font"]["size"] == 20


def test_answers_are_hidden_until_revealed(default):
    labels = [e.label for e in default.expander]
    assert "Reveal the answer" in labels and "Reveal a 60-90 second answer" in labels
    answer = next(e for e in default.expander if e.label == "Reveal the answer")
    assert "Nothing trains" in answer.markdown[0].value


@pytest.mark.parametrize(
    ("view", "names"), [(RANK, ["Rank curves", "Singular values"]), (COST, ["Memory"]), (INIT, ["Training"])]
)
def test_csv_download_per_view(view, names):
    at = _view(view)
    assert [b.proto.label for b in at.get("download_button")] == [f"{n} (CSV)" for n in names]
