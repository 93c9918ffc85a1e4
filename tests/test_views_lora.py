"""The LoRA page's figures(state, options) without Streamlit: only the requested parts are built, the numbers are
real (worked example F, a rank readout against numpy's SVD), one SVD per matrix, and presenter mode's layout."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core import lora, lora_layer, lora_memory
from views import Options
from views import lora as view_of

RANK, COST, INIT = view_of.VIEWS


def _opts(*parts: str, presenter: bool = False) -> Options:
    return Options(presenter=presenter, parts=frozenset(parts))


def _readouts(out) -> dict[str, str]:
    return {r.label: r.value for r in out.readouts}


def _pct(text: str) -> float:
    return float(text.rstrip("%")) / 100


@pytest.fixture
def svd_calls(monkeypatch):
    """Counts core's SVD calls, starting from an empty cache of generated matrices."""
    view_of.generated.cache_clear()
    calls = []
    real = lora.svd

    def counting(delta_w, **kw):
        calls.append(np.shape(delta_w))
        return real(delta_w, **kw)

    monkeypatch.setattr(lora, "svd", counting)
    yield calls
    view_of.generated.cache_clear()


@pytest.fixture
def quick_training(monkeypatch):
    """The initialisation traps with 5 Adam steps instead of 200 (same layer and data), on an empty run cache."""
    monkeypatch.setattr(view_of, "TRAIN", lora_layer.TrainConfig(steps=5))
    monkeypatch.setattr(view_of, "_RUNS", {})


def test_the_view_module_does_not_import_streamlit():
    tree = ast.parse(Path(view_of.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(name.split(".")[0] == "streamlit" for name in imported)


def test_the_rank_and_cost_tabs_do_not_import_torch():
    # a fresh interpreter: the view's import, its default figures (the rank tab with its drag sweep), the cost tab and
    # the rank presets at 256 x 256 all run in numpy; only the initialisation traps (a torch layer) import torch
    code = (
        "import sys; from views import Options; from views import lora as v; "
        "seen = ['torch' in sys.modules]; out = v.figures(v.SPEC.defaults()); seen.append('torch' in sys.modules); "
        "v.figures(v.SPEC.defaults(), Options(parts=frozenset({'rank', 'cost'}))); "
        "[v.figures(v.SPEC.state(v.SPEC.presets[p])) for p in v.SPEC.presets if p != 'Initialisation traps']; "
        "seen.append('torch' in sys.modules); help = [r.help for r in out.readouts if r.label.startswith('SVD')]; "
        "print(sorted(out.figures), sorted(out.drags), seen, help)"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == (
        "['curves', 'heatmaps'] ['heatmaps'] [False, False, False] ['numpy.linalg.svd on cpu; moving r reuses it']"
    )


def test_train_is_made_on_first_use():
    assert view_of.TRAIN == lora_layer.TrainConfig(steps=view_of.TRAIN_STEPS) and view_of.TRAIN_STEPS == 200
    assert view_of.train_defaults() is view_of.TRAIN
    with pytest.raises(AttributeError):
        view_of.NOT_A_NAME  # noqa: B018


def test_only_the_requested_part_is_built(monkeypatch, svd_calls):
    def no_training(*args, **kw):
        raise AssertionError("the cost part must not train")

    monkeypatch.setattr(lora_layer, "train_all_inits", no_training)
    out = view_of.figures(view_of.SPEC.defaults(), _opts("cost"))
    assert set(out.figures) == {"memory"} and list(out.tables) == ["Memory"]
    assert svd_calls == []  # no SVD for the cost part
    assert view_of.figures(view_of.SPEC.defaults(), _opts()).figures == {}  # no parts, nothing built
    out = view_of.figures(view_of.SPEC.defaults(), _opts("rank"))
    assert set(out.figures) == {"heatmaps", "curves"} and list(out.tables) == ["Rank curves", "Singular values"]


def test_main_is_the_tab_the_state_names():
    out = view_of.figures(view_of.SPEC.defaults().replace(lora_view=COST))  # DEFAULT options: parts = {"main"}
    assert set(out.figures) == {"memory"}
    assert view_of.parts_of(view_of.SPEC.defaults(), _opts("main", "cost")) == ["rank", "cost"]


def test_worked_example_f():
    state = view_of.SPEC.state(view_of.SPEC.presets["Worked example F"])
    out = view_of.figures(state)  # the preset opens the cost tab
    m = _readouts(out)
    trainable = 32 * 4 * 8 * (4096 + 4096)  # layers x (q, k, v, o) x r (d_out + d_in)
    assert trainable == 8_388_608 and m["Trainable parameters"] == f"{trainable:,}"
    assert 16 * trainable == 134_217_728 and m["Adapter training states"] == "134 MB"  # 16 bytes per parameter
    assert m["Scale s"] == "2"  # alpha / r = 16 / 8
    assert out.notices == []


def test_rank_readout_against_numpys_svd(svd_calls):
    state = view_of.SPEC.defaults().replace(rows=96, cols=80, profile="power_law", seed=7, rank=12)
    out = view_of.figures(state, _opts("rank"))
    sigma = np.linalg.svd(lora.make_target(96, 80, "power_law", 7), compute_uv=False)  # numpy, float64, LAPACK
    err = np.sqrt(np.sum(sigma[12:] ** 2) / np.sum(sigma**2))
    energy = np.sum(sigma[:12] ** 2) / np.sum(sigma**2)
    m = _readouts(out)
    assert _pct(m["Relative error"]) == pytest.approx(err, abs=6e-4)  # printed to 0.1% or 0.01%
    assert _pct(m["Energy captured"]) == pytest.approx(energy, abs=6e-4)
    assert m["Trainable r(d + k)"] == f"{12 * (96 + 80):,}" and _pct(m["Share of dk"]) == pytest.approx(
        12 * 176 / (96 * 80), abs=6e-4
    )
    assert out.facts["ranks"][0] == 0 and 12 in out.facts["ranks"] and out.facts["ranks"][-1] == 80
    heat = out.figures["heatmaps"]
    assert heat.layout.sliders[0].steps[heat.layout.sliders[0].active].label == "12"
    assert np.asarray(out.figures["heatmaps"].data[0].z).shape == (64, 64)  # 96 x 80 in 64 x 64 block averages
    assert out.facts["averaged"] and (out.facts["d"], out.facts["k"]) == (96, 80)
    assert out.tables["Singular values"]()["sigma"].to_numpy() == pytest.approx(sigma, rel=1e-9, abs=1e-12)


def test_the_svd_runs_once_when_only_r_or_the_look_changes(svd_calls):
    state = view_of.SPEC.defaults().replace(rows=128, cols=48, seed=3)
    seen = []
    for changes, presenter in [({}, False), ({"rank": 2}, False), ({"rank": 40}, True), ({"logr": True}, False)]:
        out = view_of.figures(state.replace(**changes), _opts("rank", "cost", presenter=presenter))
        seen.append(_readouts(out)["Relative error"])
    assert svd_calls == [(128, 48)]
    assert len(set(seen[:3])) == 3  # r did move the readout
    view_of.figures(state.replace(seed=4), _opts("rank"))
    assert svd_calls == [(128, 48), (128, 48)]  # a new matrix: one more SVD


def test_a_clamped_rank_gives_a_note():
    out = view_of.figures(view_of.SPEC.defaults().replace(rows=16, cols=32, rank=100), _opts("rank"))
    assert out.notices == [("info", "r = 100 must lie between 0 and 16; using 16.")]
    assert _readouts(out)["Energy captured"] == "100.0%"
    out = view_of.figures(view_of.SPEC.defaults().replace(mats=()), _opts("cost"))
    assert ("info", "Choose at least one matrix to adapt; showing q, k, v, o.") in out.notices


def test_an_upload_replaces_the_generated_matrix(svd_calls):
    a = np.outer(np.arange(1, 41), np.arange(1, 31)).astype(float) + np.eye(40, 30)
    out = view_of.figures(view_of.SPEC.defaults(), _opts("rank"), a, "delta.npy")
    assert np.asarray(out.figures["heatmaps"].data[0].z).shape == (40, 30) and svd_calls == [(40, 30)]
    assert _readouts(out)["Trainable r(d + k)"] == f"{8 * 70:,}"
    sigma = np.linalg.svd(a, compute_uv=False)
    assert _pct(_readouts(out)["Energy captured"]) == pytest.approx(np.sum(sigma[:8] ** 2) / np.sum(sigma**2), abs=6e-4)
    cached = view_of.analyse(a)  # a caller that caches the upload's analysis passes it in: no second SVD
    svd_calls.clear()
    again = view_of.figures(view_of.SPEC.defaults().replace(rank=3), _opts("rank"), a, "delta.npy", analysis=cached)
    assert svd_calls == [] and _readouts(again)["Trainable r(d + k)"] == f"{3 * 70:,}"


def test_a_bad_upload_array_falls_back_with_a_warning():
    bad = np.array([[1.0, np.nan], [3.0, 4.0]])
    out = view_of.figures(view_of.SPEC.defaults(), _opts("rank"), bad, "nan.npy")
    (kind, text), *_ = out.notices
    assert kind == "warning" and text.startswith("The upload `nan.npy` was not used") and "non-finite" in text
    assert _readouts(out) == _readouts(view_of.figures(view_of.SPEC.defaults(), _opts("rank")))


def test_presenter_mode_makes_room_for_larger_type():
    state = view_of.SPEC.defaults()
    plain, big = (view_of.figures(state, _opts("rank", presenter=p)).figures for p in (False, True))
    # presenter mode spends the height on the square panels (viz.lora): a smaller top margin and slider pad
    assert (plain["heatmaps"].layout.margin.t, big["heatmaps"].layout.margin.t) == (125, 100)
    assert (plain["heatmaps"].layout.sliders[0].pad.t, big["heatmaps"].layout.sliders[0].pad.t) == (62, 40)
    assert (plain["heatmaps"].layout.annotations[-1].yshift, big["heatmaps"].layout.annotations[-1].yshift) == (28, 30)
    # at least 150; viz.style grows it further where the title and presenter-size legend need more
    assert plain["curves"].layout.margin.t == 131 and big["curves"].layout.margin.t >= 150
    assert plain["heatmaps"].layout.annotations[-1].text == big["heatmaps"].layout.annotations[-1].text


def test_relevant_keeps_only_the_fields_the_parts_read():
    state = view_of.SPEC.defaults().replace(model=lora_memory.LLAMA3_8B.name, rows=200, lora_view=COST)
    rank_only = view_of.relevant(state, _opts("rank"))
    assert rank_only.rows == 200 and rank_only.model == view_of.SPEC["model"].default
    assert rank_only.lora_view == view_of.SPEC["lora_view"].default
    assert view_of.relevant(state, _opts("main")) == view_of.SPEC.defaults().replace(
        model=lora_memory.LLAMA3_8B.name, lora_view=COST
    )
    assert _readouts(view_of.figures(rank_only, _opts("rank"))) == _readouts(view_of.figures(state, _opts("rank")))


def test_initialisation_traps_train_once_and_report_progress(quick_training):
    fractions = []
    state = view_of.SPEC.defaults().replace(rank=100, alpha=4.0)
    out = view_of.figures(state, _opts("init"), progress=fractions.append)
    assert set(out.figures) == {"training"} and list(out.tables) == ["Training"]
    assert out.notices == [("info", "r = 100 must lie between 1 and 64; using 64.")]
    assert fractions and fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    m = _readouts(out)
    assert m["∂L/∂A at step 0, B = 0"] == "0 exactly"  # s Bᵀ g xᵀ with B = 0
    assert m["Step-0 output change, B = 0"] == "0.0 exactly"
    before, after = m["Loss with A = B = 0"].split(" → ")
    assert before == after  # both gradients stay 0
    assert out.facts["config"].r == 64 and out.facts["config"].steps == 5
    assert len(out.tables["Training"]()) == 6  # the state before each of the 5 steps, and the end
    fractions.clear()
    view_of.figures(state, _opts("init", presenter=True), progress=fractions.append)
    assert fractions == []  # the same configuration: no second training


def test_the_tab_captions_and_qlora_numbers_are_facts(quick_training):
    state = view_of.SPEC.defaults().replace(model="Llama-2-7B", mats=("q", "v"), rank=8)
    out = view_of.figures(state, _opts("cost", "init"))
    assert out.facts["memory_caption"] == (
        "Llama-2-7B: N = 7B as the page counts it (the nominal size, not the exact parameter count); per layer "
        "q: 65,536, v: 65,536 trainable."
    )  # r (d_out + d_in) = 8 (4096 + 4096) per adapted matrix
    runs = out.facts["runs"]
    assert out.facts["training_caption"].startswith(
        f"A {view_of.TRAIN.d} × {view_of.TRAIN.k} layer fitted to a rank-{view_of.TRAIN.target_rank} target on "
        f"{runs['B0'].device}, 5 Adam steps per initialisation ("
    )
    qlora = out.facts["qlora"]
    assert qlora == view_of.figures(state, _opts()).facts["qlora"]  # whatever the tabs
    assert (round(qlora["nf4_bits"], 3), round(qlora["nf4_bytes"], 3)) == (4.127, 0.516)  # 4 + 8/64 + 32/(64·256)
    assert qlora["total_gb"] + qlora["spare_gb"] == pytest.approx(48 * 2**30 / 1e9)  # a "48 GB" GPU holds 48 GiB
    assert qlora["total_gib"] + qlora["spare_gib"] == pytest.approx(48.0)
    assert (round(qlora["spare_gib"], 1), round(qlora["spare_gb"], 1)) == (4.9, 5.2)
    assert view_of.profile_caption("flat") == "flat (no low-rank structure)"
