"""Every number a card quotes, against an independent computation at the precision the card prints it.

For each [[card.checks]] entry of every card: the reference in tests/card_references.py (the formula from the paper,
scipy, fractions, torch autograd or an exact enumeration; never core) computed from the check's args must round to
the check's ``shown`` text: within half a unit in the last digit shown (card_references.parse_shown documents how
"2,460", "8.4e22", "0.39%", "1.5B" or "24 GB" are read). tests/test_cards.py compares core with the same printed
numbers; together they catch an error that a card and core share, and a card that rounds wrongly (2.476 for
2.47545).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch

from study.cards import Check, load_cards
from tests.card_references import (
    CHINCHILLA_FITS,
    GPU_SHEETS,
    KV_CONFIGS,
    LENGTH_TOY_COEF,
    LENGTH_TOY_LENGTHS,
    LENGTH_TOY_PI_REF,
    LENGTH_TOY_QUALITY,
    LORA_SHAPES,
    LOSS_MODEL,
    REFERENCES,
    _beta_grid,
    _lr,
    isoflop_loss,
    n_opt,
    n_opt_numerical,
    parse_shown,
    printed_in,
    unit_of,
)

ROOT = Path(__file__).resolve().parents[1]
CARDS, PROBLEMS = load_cards(ROOT / "cards")
CHECKS = [(card, i, check) for card in CARDS for i, check in enumerate(card.checks)]
IDS = [f"{card.id}[{i}]-{check.what}" for card, i, check in CHECKS]


def _describe(card, i, check) -> str:
    return f"{card.id} ({card.file}) check {i}: {check.what}({', '.join(f'{k}={v!r}' for k, v in check.args)})"


def _interval(printed, unit) -> str:
    lo, hi = printed.value(unit) - printed.half(unit), printed.value(unit) + printed.half(unit)
    return f"[{float(lo):.10g}, {float(hi):.10g}]"


def _reference(card, i, check) -> float:
    if check.what not in REFERENCES:
        pytest.fail(
            f"{_describe(card, i, check)}: no independent reference for {check.what!r}; add one to "
            "tests/card_references.py below its marker line (a formula written out, not core)"
        )
    try:
        return float(REFERENCES[check.what](**check.kwargs))
    except NotImplementedError as e:
        pytest.fail(f"{_describe(card, i, check)}: {e}")


@pytest.mark.parametrize(("card", "i", "check"), CHECKS, ids=IDS)
def test_card_number_matches_an_independent_reference_at_its_printed_precision(card, i, check):
    printed = parse_shown(check.shown)  # the loader requires shown (tests/test_cards.py)
    unit = unit_of(check.what, check.kwargs)
    ref = _reference(card, i, check)
    assert printed.matches(ref, unit), (
        f"{_describe(card, i, check)}: the card prints {check.shown!r} (allowed {_interval(printed, unit)}), "
        f"the independent reference gives {ref!r}"
    )


@pytest.mark.parametrize(("card", "i", "check"), CHECKS, ids=IDS)
def test_check_value_and_shown_agree_and_shown_is_a_number_of_the_text(card, i, check):
    assert printed_in(card.text, check.shown), (
        f"{_describe(card, i, check)}: {check.shown!r} is not in the card's text as a whole number"
    )
    printed = parse_shown(check.shown)
    unit = unit_of(check.what, check.kwargs)
    assert printed.matches(check.value, unit), (
        f"{_describe(card, i, check)}: value = {check.value!r} does not print as {check.shown!r} "
        f"(allowed {_interval(printed, unit)})"
    )


def test_cards_load_and_every_what_in_the_cards_has_a_reference():
    assert PROBLEMS == []
    missing = sorted({check.what for _, _, check in CHECKS} - set(REFERENCES))
    assert missing == [], f"no independent reference in tests/card_references.py for {missing}"


# ------------------------------------------------------------------------------------------------ the parser


@pytest.mark.parametrize(
    ("shown", "number", "half", "scale"),
    [
        ("2.475", "2.475", "0.0005", None),
        ("8.4e22", "8.4e22", "5e20", None),
        ("6e20", "6e20", "5e19", None),
        ("1.016e9", "1.016e9", "5e5", None),
        ("2,460", "2460", "5", None),  # trailing zeros of a separated integer are not significant
        ("131,072", "131072", "0.5", None),
        ("8,388,608", "8388608", "0.5", None),
        ("50,000", "50000", "5000", None),
        ("128", "128", "0.5", None),  # a plain integer counts every digit
        ("90 days", "90", "0.5", None),
        ("0.39%", "0.39", "0.005", "0.01"),
        ("+0.54%", "0.54", "0.005", "0.01"),
        ("-0.77", "-0.77", "0.005", None),
        ("1.5B", "1.5", "0.05", "1e9"),
        ("30B tokens", "30", "0.5", "1e9"),
        ("24 GB", "24", "0.5", "1e9"),
        ("134 MB", "134", "0.5", "1e6"),
        ("40 GiB", "40", "0.5", str(2**30)),
        ("2,560 KiB", "2560", "5", str(2**10)),
        ("3.0 GFLOP", "3.0", "0.05", "1e9"),
        ("1.4 percentage points", "1.4", "0.05", "0.01"),
        ("3.9 points", "3.9", "0.05", "0.01"),
        ("295 FLOP/byte", "295", "0.5", None),  # a label, not a scale
        ("800-token answer", "800", "0.5", None),
        ("at beta = 0.3", "0.3", "0.05", None),
        ("(4 sequences)", "4", "0.5", None),
        ("about four times", "4", "0.5", None),
        ("44 tokens per parameter at 2.7e20", "44", "0.5", None),  # the first number is the one checked
    ],
)
def test_parse_shown_reads_the_number_and_half_a_unit_of_its_last_digit(shown, number, half, scale):
    printed = parse_shown(shown)
    assert printed.number == Fraction(number)
    assert printed.half_unit == Fraction(half)
    assert printed.scale == (None if scale is None else Fraction(scale))
    assert not printed.exact


def test_parse_shown_units_convert_to_the_quantity_s_unit():
    pct = parse_shown("0.39%")
    assert pct.half(Fraction(1)) == Fraction(5, 100000)  # as a fraction: 0.0039 +- 0.00005
    assert pct.half(Fraction(1, 100)) == Fraction(5, 1000)  # in percent: 0.39 +- 0.005
    assert pct.matches(0.0039, Fraction(1)) and pct.matches(0.39, Fraction(1, 100))
    assert not pct.matches(0.39, Fraction(1))  # 0.39 as a fraction is 39%
    bare = parse_shown("40")  # a bare number is in the quantity's own unit (KiB here)
    assert bare.matches(40.0, Fraction(1024)) and not bare.matches(40.0 / 1024, Fraction(1024))


def test_parse_shown_edges():
    exact = parse_shown("exactly 0.0")
    assert exact.exact and exact.matches(0.0) and not exact.matches(1e-9)
    assert parse_shown("0.0312").matches(0.03125)  # a tie may print either way
    assert not parse_shown("0.0312").matches(0.03126)
    with pytest.raises(ValueError, match="holds no number"):
        parse_shown("log t")


def test_printed_in_wants_a_whole_number():
    assert printed_in("margin 0.3, loss", "0.3")
    assert not printed_in("margin 0.35, loss", "0.3")
    assert not printed_in("it is 140 KiB", "40")
    assert not printed_in("it is 40,960 KiB", "40")
    assert printed_in("40 with MQA", "40")


# ---------------------------------------------------------------- the test catches the slips the reviews found


def test_the_old_2_476_card_fails_and_2_475_passes():
    """scaling-12 printed 2.476 for the 1.5B plan at 2.73e20 FLOPs; the fit gives 2.47545, which prints 2.475. The
    old test's tol = 0.0015 let it pass."""
    loss = isoflop_loss(2.73e20, 1.5e9)
    assert 2.4754 < loss < 2.4755
    old = Check("isoflop_loss", (("C", 2.73e20), ("N", 1.5e9)), 2.476, "2.476")
    assert abs(old.value - loss) <= 0.0015  # the old check's tol: what passed before
    assert not parse_shown(old.shown).matches(REFERENCES[old.what](**old.kwargs))
    assert parse_shown("2.475").matches(REFERENCES["isoflop_loss"](C=2.73e20, N=1.5e9))


def test_the_old_over_training_percentage_fails():
    """The over-training example's +0.6% came from rounded losses (2.489 / 2.476); from unrounded ones it is +0.54%."""
    rise = 100 * (isoflop_loss(2.73e20, 0.5e9) / isoflop_loss(2.73e20, 1.5e9) - 1)
    assert not parse_shown("+0.6%").matches(rise, Fraction(1, 100))
    assert parse_shown("+0.54%").matches(rise, Fraction(1, 100))


# ------------------------------------------------------------------- the references against a second route


@pytest.mark.parametrize("fit", sorted(CHINCHILLA_FITS))
@pytest.mark.parametrize("C", [1e20, 2.73e20, 1.2e21, 5.88e23])
def test_closed_form_optimum_equals_scipy_minimiser(fit, C):
    assert n_opt(C, fit) == pytest.approx(n_opt_numerical(C, fit), rel=1e-6)


def test_second_routes_agree():
    for p, G in ((0.95, 16), (0.5, 8), (0.05, 8), (0.01, 64)):
        assert REFERENCES["grpo_signal_probability"](p, G) == pytest.approx(1 - p**G - (1 - p) ** G, rel=1e-12)
    for p, m in ((8, 8), (4, 16), (1, 3)):
        assert REFERENCES["pipeline_bubble_pct"](p, m) == pytest.approx(100 * (p - 1) / (m + p - 1), rel=1e-12)
    args = {"logp_w": -10.0, "logp_l": -15.0, "ref_w": -12.0, "ref_l": -14.0, "beta": 0.1}
    margin = REFERENCES["dpo"]("margin", **args)
    assert REFERENCES["dpo"]("weight", **args) == pytest.approx(1 / (1 + math.exp(margin)), rel=1e-12)
    assert REFERENCES["dpo"]("grad_logp_w", **args) == pytest.approx(-0.1 / (1 + math.exp(margin)), rel=1e-12)
    pi = [REFERENCES["kl_policy"]((0.5, 0.5), (1.0, 0.0), 1.0, j) for j in range(2)]
    objective = pi[0] * 1.0 - REFERENCES["kl_divergence"](tuple(pi), (0.5, 0.5))
    assert REFERENCES["kl_max_objective"]((0.5, 0.5), (1.0, 0.0), 1.0) == pytest.approx(objective, rel=1e-12)
    assert REFERENCES["compare_se"](0.71, 0.725, 1000, only_a=40, only_b=55) == pytest.approx(
        math.sqrt(95 - 15**2 / 1000) / 1000, rel=1e-12
    )


def test_cosine_reference_matches_torch_cosine_annealing():
    """The cosine part of the schedule reference against torch's CosineAnnealingLR (a second, public definition)."""
    steps, W, f = 1000, 10, 0.1
    lr = _lr("cosine", steps, W, f, None, "linear")
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps - W, eta_min=f)
    torch_lr = []
    for _ in range(steps - W):
        torch_lr.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    torch_lr.append(opt.param_groups[0]["lr"])
    # step W + j of ours is j steps into the cosine: torch's value after j scheduler steps
    np.testing.assert_allclose(lr[W - 1 :], torch_lr, rtol=1e-9, atol=1e-12)


# ----------------------------------------------- the data copied into the references still equal the lesson's


def test_copied_toy_data_equal_core_s():
    """The references copy a toy's data, never its code; when core's toy changes, this names what to update."""
    from core import hardware, kl_leash, lora_memory, model_spec, reward_model, scaling, schedules

    toy = reward_model.LENGTH_TOY
    assert (toy.lengths, toy.pi_ref, toy.quality, toy.length_coef) == (
        LENGTH_TOY_LENGTHS,
        LENGTH_TOY_PI_REF,
        LENGTH_TOY_QUALITY,
        LENGTH_TOY_COEF,
    )
    assert {k: getattr(schedules.DEFAULT_LOSS_MODEL, k) for k in LOSS_MODEL} == LOSS_MODEL
    assert _beta_grid() == list(kl_leash.beta_choices())
    for key, (E, A, B, alpha, beta) in CHINCHILLA_FITS.items():
        f = scaling.FITS[key]
        assert (f.E, f.A, f.B, f.alpha, f.beta) == (E, A, B, alpha, beta)
    for name, (peak, bandwidth) in GPU_SHEETS.items():
        gpu = hardware.get_gpu(name)
        assert (gpu.peak_flops, gpu.bandwidth) == (peak, bandwidth)
    for name, (layers, kv_heads, head_dim) in KV_CONFIGS.items():
        spec = model_spec.get_spec(name)
        assert (spec.layers, spec.n_kv_heads, spec.d_model // spec.n_heads) == (layers, kv_heads, head_dim), name
    for name, shape in LORA_SHAPES.items():
        core_shape = lora_memory.MODEL_PRESETS[name]
        assert dataclasses.astuple(shape) == (
            core_shape.hidden,
            core_shape.layers,
            core_shape.intermediate,
            core_shape.kv_width,
            core_shape.vocab,
            core_shape.n_params,
        ), name


def test_the_references_import_no_project_module():
    """Independence, enforced: tests/card_references.py may use the standard library, numpy, scipy and torch only."""
    import ast

    tree = ast.parse((ROOT / "tests" / "card_references.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0] if node.level == 0 else ".")
    project = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert imported & (project | {"core", "pages", "viz", "study", "decks", "tests", "."}) == set(), imported
