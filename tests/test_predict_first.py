"""Predict first: on each lesson figure the answer is absent from everything the page sends until a guess is committed
(figure JSON with its slider steps, readouts, markdown, CSV tables); then the truth, the guess and the error appear,
and the guess round-trips through the link. Truths are checked against independent computations."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from core import lora, scaling
from tests.apptest import decode, figures, metrics, no_exception, open_page
from views import Options
from views import attention as attention_view
from views import calibration as calibration_view
from views import distillation as distillation_view
from views import evaluation as evaluation_view
from views import flash_attention as flash_attention_view
from views import grpo as grpo_view
from views import kl_leash as kl_leash_view
from views import lora as lora_view
from views import moe as moe_view
from views import number_formats as number_formats_view
from views import optimizers as optimizers_view
from views import policy_gradient as policy_gradient_view
from views import positions as positions_view
from views import scaling as scaling_view
from views import test_time_compute as ttc_view
from views import training_lab as training_lab_view
from viz.predict import GUESS_NAME


def _numbers(obj) -> list[float]:
    """Every number in a figure's data and layout (annotations and slider steps included), not in its template."""
    if isinstance(obj, dict):
        return [x for k, v in obj.items() if k != "template" for x in _numbers(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in _numbers(v)]
    if isinstance(obj, bool):
        return []
    return [float(obj)] if isinstance(obj, int | float) else []


def _text(at) -> str:
    """What the page sent, as text: figures (without plotly's template), metrics with their help, markdown, captions,
    infos, and the CSV downloads."""
    figs = [
        {k: v for k, v in f.items() if k != "layout"} | {"layout": {**f["layout"], "template": None}}
        for f in figures(at)
    ]
    parts = [json.dumps(figs, ensure_ascii=False)]
    parts += [f"{m.label} {m.value} {m.proto.help}" for m in at.metric]
    parts += [e.value for kind in ("markdown", "caption", "info", "warning", "latex") for e in at.get(kind)]
    parts += [str(b.proto) for b in at.get("download_button")]
    return "\n".join(parts)


def _near(numbers: list[float], value: float, rel: float = 2e-3) -> list[float]:
    return [x for x in numbers if math.isfinite(x) and abs(x - value) <= rel * abs(value)]


# page, predict switch, guess field, a committed guess, extra link values, what must stay hidden (text), the value
CASES = {
    "scaling": ("pages/1_Scaling_laws.py", "predict_scaling", "guess_N", "5e9", {}),
    "kl": ("pages/2_KL_leash.py", "predict_kl", "guess_pi", "0.7", {"beta": "0.5"}),
    "grpo": ("pages/4_GRPO.py", "predict_grpo", "guess_adv", "1", {}),
    "evaluation": ("pages/5_Evaluation.py", "predict_eval", "guess_pass", "0.8", {}),
    "lora": ("pages/3_LoRA.py", "predict_lora", "guess_rank", "10", {}),
    "attention": ("pages/6_Attention.py", "predict_attn", "guess_head", "1", {}),
    "positions": ("pages/16_Positions.py", "predict_pos", "guess_pairs", "10", {}),
    "flash_attention": ("pages/17_FlashAttention.py", "predict_fa", "guess_skipped", "4", {}),
    "moe": ("pages/18_MoE.py", "predict_moe", "guess_dropped", "100", {}),
    "test_time_compute": ("pages/24_Test_time_compute.py", "predict_ttc", "guess_ttc_peak", "100", {}),
    "calibration": ("pages/25_Calibration.py", "predict_cal", "guess_cal_acc", "0.8", {}),
    "training_lab": ("pages/19_Training_lab.py", "predict_lab", "guess_lab_bits", "4", {}),
    "number_formats": ("pages/20_Number_formats.py", "predict_fmt", "guess_fmt_err", "0.4", {}),
    "optimizers": ("pages/21_Optimizers.py", "predict_opt", "guess_opt_lr", "0.5", {"opt_kappa": "16"}),
    "policy_gradient": ("pages/22_Policy_gradient.py", "predict_pg", "guess_pg_scale", "0.5", {}),
    "distillation": ("pages/23_Distillation.py", "predict_dist", "guess_dist_mean", "2", {}),
}


def _truths() -> dict[str, tuple[list[str], float | None]]:
    """Independent answers: the strings the page would write and the number a figure would hold."""
    # Chinchilla approach 3 (Hoffmann et al. 2022): N_opt = G (C/6)^(β/(α+β)), G = (αA/(βB))^(1/(α+β))
    A, B, a, b = 406.4, 410.7, 0.34, 0.28
    n_opt = (a * A / (b * B)) ** (1 / (a + b)) * (1.2e21 / 6) ** (b / (a + b))
    assert n_opt == pytest.approx(scaling.chinchilla_optimum(1.2e21)[0], rel=1e-3)
    # π*(y1) at β = 0.5 for π_ref = (½, ½), r = (1, 0): e² / (e² + 1)
    pi = math.exp(2) / (math.exp(2) + 1)
    # worked example C: rewards 1,0,0,1,1,0,0,0 -> (1 - 3/8) / population std
    r = np.array([1, 0, 0, 1, 1, 0, 0, 0], float)
    adv = (1 - r.mean()) / r.std()
    # pass@5 from n = 10, c = 3: 1 - C(7,5)/C(10,5) = 1 - 21/252
    pass5 = 1 - math.comb(7, 5) / math.comb(10, 5)
    # RoPE at d = 128, base 10,000: pairs i = 0..63 whose wavelength 2π·10000^(2i/128) exceeds 8,192 tokens
    beyond = sum(2 * math.pi * 10000 ** (2 * i / 128) > 8192 for i in range(64))
    # causal tiles of T = 16 in 4 x 4 blocks skipped outright: those whose first key comes after their last query
    skipped = sum(c0 > r0 + 3 for r0 in range(0, 16, 4) for c0 in range(0, 16, 4))
    # the training lab's good run: its last held-out loss read from the shipped file itself, nats / ln 2
    with np.load(Path(__file__).resolve().parents[1] / "core/data/training_lab.npz", allow_pickle=False) as z:
        index = json.loads(bytes(z["index"]).decode("utf-8"))["curves"]
        (i,) = [i for i, e in enumerate(index) if e["settings"]["lr"] == 3e-3 and e["settings"]["layers"] == 2
                and e["settings"]["warmup"] == 20 and e["settings"]["clip"] == 1.0]  # fmt: skip
        lab_bits = float(z[f"c{i}/val_loss"][-1]) / math.log(2)
    # 0.1 in bf16 (8 significant bits): 0.1 = 1.6 · 2⁻⁴, the significand 1.6 · 2⁷ = 204.8 rounds to 205
    bf16_tenth = 205 / 2**7 * 2**-4
    # best-of-n's gold score d (1 - d/4), d = sqrt(log n - (n - 1)/n), highest over whole n by a plain search
    gold = lambda n: math.sqrt(math.log(n) - (n - 1) / n) * (1 - 0.25 * math.sqrt(math.log(n) - (n - 1) / n))  # noqa: E731
    n_peak = max(range(1, 5000), key=gold)
    cal_acc = 1 / (1 + 9 ** (-1 / 2.5))
    return {
        "scaling": ([f"{n_opt / 1e9:.2f}B"], n_opt),
        "kl": ([f"{pi:.3f}"], pi),
        "grpo": ([f"+{adv:.2f}"], adv),
        "evaluation": ([f"{pass5:.3f}", f"{pass5:.4f}"], pass5),
        "lora": (["Rank for 90% energy"], None),
        "attention": ([": previous token", "Previous-token head"], None),  # a panel named, the readout
        "positions": ([f"{beyond} of 64"], None),  # a small count: the figures hold 14 px font sizes
        "flash_attention": ([f"{skipped} of 16"], None),  # a small count, as for positions
        "moe": (["245 of 1,024"], None),
        "test_time_compute": (
            [f"n* = {n_peak}"],
            None,
        ),  # a whole n: the figures hold many small numbers  # tests/test_views_moe.py counts the 245 with a plain loop
        "training_lab": ([f"{lab_bits:.2f} bits/byte"], None),  # a 2-digit loss: the figures hold small font sizes
        "number_formats": ([f"{100 * abs(bf16_tenth - 0.1) / 0.1:.3g}%"], None),  # "0.0977%": a small number
        # SGD on f = ½(κx² + y²) at κ = 16: stable for η < 2/κ (the Hessian's largest eigenvalue is κ); the formula
        # 2/λ_max is the answer too: it is in the readout's help, never in its label
        "optimizers": ([f"{2 / 16:.3g}", "stable limit (the answer)", "2/λ_max", "2 / λ_max"], None),
        # the group mean's E[g] over ∇J at G = 4: E[(r_i − mean) s_i] = (1 − 1/G) ∇J (a_j independent, E[s] = 0)
        "policy_gradient": ([f"{(4 - 1) / 4:.3f}"], (4 - 1) / 4),
        # the reverse-KL Gaussian at d = 4 sits in the middle (tests/test_views_distillation.py checks its 0.00
        # against scipy): a distance of 0 is a number every figure holds, so the readout's label is the truth here
        "distillation": (["midpoint (the answer)"], None),
        # the toy's accuracy at a stated 0.9 after tuning with κ = 2.5: 1 / (1 + 9^(-1/2.5)), logit(0.9) = ln 9
        "calibration": ([f"{cal_acc:.3f}"], cal_acc),
    }


TRUTHS = _truths()


@pytest.mark.parametrize("name", list(CASES))
def test_the_answer_is_absent_until_a_guess_then_truth_guess_and_error_appear(name: str) -> None:
    page, switch, guess, value, extra = CASES[name]
    strings, number = TRUTHS[name]
    hidden = open_page(page, {**extra, switch: "true"})
    assert no_exception(hidden)
    text = _text(hidden)
    for s in strings:
        assert s not in text, (name, s)
    if number is not None:
        assert _near([x for f in figures(hidden) for x in _numbers(f)], number) == [], name
    assert "previous token" not in json.dumps(figures(hidden))  # no panel is named after its head
    assert any("Predict first" in i.value for i in hidden.info)
    assert hidden.get("download_button") == [] or all(
        "U-curve" not in str(b.proto) and "pass@k" not in str(b.proto) for b in hidden.get("download_button")
    )
    assert hidden.query_params.get(switch) in ("true", ["true"])

    shown = open_page(page, {**extra, switch: "true", guess: value})
    assert no_exception(shown)
    m = metrics(shown)
    assert "Your guess" in m and "Error" in m, m
    text = _text(shown)
    assert any(s in text for s in strings), name
    assert shown.query_params.get(guess) in (value, [value])  # the guess is in the link


def test_the_errors_are_the_guess_against_the_truth() -> None:
    """The readouts' numbers: the guess minus (or over) the independent truth."""
    s = scaling_view.figures(scaling_view.SPEC.state({"predict_scaling": True, "guess_N": 5e9}))
    r = {x.label: x.value for x in s.readouts}
    assert r["The bottom: N_opt"] == "1.98B" and r["Error"] == f"× {5e9 / TRUTHS['scaling'][1]:.3g} too large"
    k = kl_leash_view.figures(kl_leash_view.SPEC.state({"predict_kl": True, "guess_pi": 0.7, "beta": "0.5"}))
    assert {x.label: x.value for x in k.readouts}["Error"] == f"{0.7 - TRUTHS['kl'][1]:+.3f}" == "-0.181"
    g = grpo_view.figures(grpo_view.SPEC.state({"predict_grpo": True, "guess_adv": 1.0}))
    assert {x.label: x.value for x in g.readouts}["Error"] == "-0.29"
    e = evaluation_view.figures(evaluation_view.SPEC.state({"predict_eval": True, "guess_pass": 0.8}))
    assert {x.label: x.value for x in e.readouts}["Error"] == f"{0.8 - 231 / 252:+.4f}"
    lo = lora_view.figures(lora_view.SPEC.state({"predict_lora": True, "guess_rank": 10}))
    svd = lo.facts["svd"]
    sigma2 = np.sort(np.linalg.svd(lora.make_target(64, 64, "exponential", 0), compute_uv=False))[::-1] ** 2
    r90 = int(np.argmax(np.cumsum(sigma2) / sigma2.sum() >= 0.9)) + 1  # a plain numpy SVD, not core's
    assert svd.d == 64
    ro = {x.label: x.value for x in lo.readouts}
    assert ro["Rank for 90% energy"] == str(r90) and ro["Error"] == f"{10 - r90:+,}"


def test_the_attention_truth_is_the_panel_whose_rows_look_one_back() -> None:
    state = attention_view.SPEC.state({"predict_attn": True, "guess_head": 1})
    view = attention_view.figures(state)
    res = view.facts["toy"]
    order = np.random.default_rng(0).permutation(len(res.head_names))
    # an independent check from the weights: the panel whose rows put most weight on key t - 1
    W = res.weights[order]  # (panels, T, T)
    T = W.shape[1]
    one_back = [float(np.mean([W[p, t, t - 1] for t in range(1, T)])) for p in range(len(order))]
    truth = int(np.argmax(one_back)) + 1
    assert {x.label: x.value for x in view.readouts}["Previous-token head"] == f"panel {truth}"
    assert attention_view.previous_token_panel(res, state) == truth


VIEWS = {
    "scaling": scaling_view,
    "kl": kl_leash_view,
    "grpo": grpo_view,
    "evaluation": evaluation_view,
    "lora": lora_view,
    "attention": attention_view,
    "positions": positions_view,
    "flash_attention": flash_attention_view,
    "moe": moe_view,
    "test_time_compute": ttc_view,
    "calibration": calibration_view,
    "training_lab": training_lab_view,
    "number_formats": number_formats_view,
    "optimizers": optimizers_view,
    "policy_gradient": policy_gradient_view,
    "distillation": distillation_view,
}


def _traces(fig, named: bool = True) -> list[str]:
    """Each trace's name (unless ``named`` is false), type and data arrays, as text (NaN included)."""
    return [
        json.dumps(
            {"name": tr.get("name") if named else None, "type": tr.get("type")}
            | {k: np.asarray(decode(tr[k])).tolist() for k in ("x", "y", "z", "text", "customdata") if k in tr}
        )
        for tr in json.loads(fig.to_json())["data"]
    ]


def _marks(fig) -> dict:
    """A figure's annotations' texts, its shapes and its slider steps' labels."""
    layout = json.loads(fig.to_json())["layout"]
    return {
        "annotations": [a.get("text") for a in layout.get("annotations", [])],
        "shapes": layout.get("shapes", []),
        "sliders": [[step.get("label") for step in s.get("steps", [])] for s in layout.get("sliders", [])],
    }


def test_predict_first_covers_every_page_that_has_the_switch() -> None:
    import pkgutil

    import views

    with_switch = set()
    for info in pkgutil.iter_modules(views.__path__):
        module = __import__(f"views.{info.name}", fromlist=["SPEC"])
        spec = getattr(module, "SPEC", None)
        if spec is not None and any(f.name.startswith("predict_") for f in spec.fields):
            with_switch.add(module.__name__)
    assert with_switch == {m.__name__ for m in VIEWS.values()}
    assert set(VIEWS) == set(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_predict_off_leaves_the_views_unchanged(name: str) -> None:
    """Predict off, with a guess in the link, draws exactly the view of a link without predict (every figure of the
    page, its readouts and tables); predict on with the guess draws the same traces and adds only the guess (a
    dashed line; on the attention page, the panel it names)."""
    from decks import parts_for

    _, switch, guess, value, extra = CASES[name]
    mod = VIEWS[name]
    plain, problems = mod.SPEC.parse(extra)
    with_guess, more = mod.SPEC.parse({**extra, guess: value})
    on, most = mod.SPEC.parse({**extra, guess: value, switch: "true"})
    assert problems == more == most == [] and with_guess[guess] is not None and not with_guess[switch]
    tabs = [choice for f in mod.SPEC.fields if f.widget == "tabs" for choice in f.choices]
    options = Options(parts=parts_for(mod.SPEC.page, plain, tabs))  # every figure of the page
    a, b, c = mod.figures(plain, options), mod.figures(with_guess, options), mod.figures(on, options)
    assert a.facts["predict"] == b.facts["predict"] == "off" and c.facts["predict"] == "revealed"
    assert "Predict first" not in str(a.notices) + str(b.notices)
    assert set(a.figures) == set(b.figures) and a.figures
    for part in a.figures:
        assert _traces(a.figures[part]) == _traces(b.figures[part]), (name, part)
        assert _marks(a.figures[part]) == _marks(b.figures[part]), (name, part)
    assert [(x.label, x.value) for x in a.readouts] == [(x.label, x.value) for x in b.readouts]
    assert set(a.tables) == set(b.tables)
    # revealed: the truth, the guess and the error first among the readouts, then the readouts of predict off
    assert [(x.label, x.value) for x in c.readouts[3:]] == [(x.label, x.value) for x in a.readouts]
    # one figure carries the guess (a dashed line, or the attention panel it names); every figure keeps its traces
    # (attention's panels come shuffled and renamed under Predict first, so there as a set of unnamed traces)
    guessed = [p for p in a.figures if _marks(c.figures[p]) != _marks(a.figures[p])]
    assert len({id(c.figures[p]) for p in guessed}) == 1, (name, guessed)  # one figure may be filed under two names
    for part in a.figures:
        named = name != "attention"
        assert sorted(_traces(c.figures[part], named)) == sorted(_traces(a.figures[part], named)), (name, part)
    if name in ("moe", "number_formats", "optimizers"):
        # a count of dropped assignments has no height on the per-expert axis, a relative error none on the spacing
        # axis, a learning rate none on the loss surface: the guess is a line of the readout panel, at every step
        # of the drag
        off, on = _marks(a.figures[guessed[0]]), _marks(c.figures[guessed[0]])
        line = {"moe": f"<br><i>your guess: {value} dropped</i>",
                "number_formats": f"<br><i>your guess: bf16 error {value}%</i>",
                "optimizers": f"<br><i>your guess: η = {value}</i>"}[name]  # fmt: skip
        assert on["annotations"] == [off["annotations"][0] + line] and on["shapes"] == off["shapes"]
        steps = c.figures[guessed[0]].layout.sliders[0].steps
        assert steps and all(s.args[1]["annotations[0].text"].endswith(line) for s in steps)
    elif name != "attention":
        off, on = _marks(a.figures[guessed[0]]), _marks(c.figures[guessed[0]])
        assert on["annotations"] == off["annotations"] and on["shapes"][: len(off["shapes"])] == off["shapes"]
        assert [s.get("name") for s in on["shapes"][len(off["shapes"]) :]] == [GUESS_NAME]
    else:
        assert sum("(your guess)" in (t or "") for t in _marks(c.figures[guessed[0]])["annotations"]) == 1


ZERO_ERROR = re.compile(r"[+−-]?0(\.0+)?( points)?|spot on|right")  # the forms each page prints for no error


@pytest.mark.parametrize("name", list(CASES))
def test_the_truth_is_a_number_in_the_guess_fields_unit(name: str) -> None:
    """``facts["truth"]`` (what class mode compares a class's guesses with) is a finite number, and a guess equal to
    it reads as no error: it is in the guess field's unit (parameters, not billions; %, not a fraction; a panel, a
    count or a whole n where the field takes whole numbers)."""
    from decks import parts_for

    _, switch, guess, value, extra = CASES[name]
    mod = VIEWS[name]
    field = mod.SPEC.by_name[guess]

    def revealed(text: str):
        state, problems = mod.SPEC.parse({**extra, switch: "true", guess: text})
        assert problems == [] and state[guess] is not None, (name, problems)
        tabs = [choice for f in mod.SPEC.fields if f.widget == "tabs" for choice in f.choices]
        view = mod.figures(state, Options(parts=parts_for(mod.SPEC.page, state, tabs)))
        assert view.facts["predict"] == "revealed", name
        return view

    truth = revealed(value).facts["truth"]
    assert type(truth) is float and math.isfinite(truth), (name, truth)
    assert field.lo <= truth <= field.hi, (name, truth)
    if TRUTHS[name][1] is not None:
        assert truth == pytest.approx(TRUTHS[name][1], rel=2e-3), name
    if field.kind == "int":  # a discrete field (a count, a rank, a panel, a whole n): the truth is one of its values
        assert truth.is_integer(), (name, truth)
        text = str(int(truth))
    else:  # the exact float, as a link may carry it: no page rounds the guess it reads
        text = repr(truth)
    error = {r.label: r.value for r in revealed(text).readouts}["Error"]
    assert ZERO_ERROR.fullmatch(error), (name, truth, error)


def test_the_grpo_difficulty_tab_places_no_group_marker_before_the_guess() -> None:
    """The "Which prompts teach?" curves carry markers at this group's success rate: while the guess is open they
    would show the answer (the group's advantages, and whether it has any signal), so they wait for the guess."""
    parts = Options(parts=frozenset({grpo_view.DIFFICULTY}))

    def marker_names(query: dict) -> list[str]:
        fig = grpo_view.figures(grpo_view.SPEC.state(query), parts).figures[grpo_view.DIFFICULTY]
        return [t.get("name", "") for t in fig.to_dict()["data"] if "this group" in (t.get("name") or "")]

    assert marker_names({"predict_grpo": True}) == []  # the guess is still open
    assert marker_names({"predict_grpo": True, "guess_adv": 1.0}) == ["this group: P(signal)", "this group: E mean |A|"]
    assert marker_names({}) == ["this group: P(signal)", "this group: E mean |A|"]  # no prediction asked
