"""The optimizers page's view without Streamlit: its numbers against tests/optimizers_reference.py (each optimizer
stepped in plain floats, the Hessian's eigenvalues, the moment loops, the norms by their definitions, the shipped
npz read directly), not core.optimizers; the drag over the sweep; no torch imported."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests import optimizers_reference as ref
from views import Options
from views import optimizers as view_of

SPEC = view_of.SPEC
ALL = Options(parts=frozenset({"main", *view_of.VIEWS}))
SURFACE = {"bowl": view_of.SURFACES[0], "valley": view_of.SURFACES[1]}


def _readouts(state, options: Options = ALL) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state, options).readouts}


@pytest.mark.parametrize(
    ("surface", "kappa", "lr", "steps", "wd"),
    [("bowl", 10.0, "0.1", 60, 0.1), ("bowl", 50.0, "0.1", 60, 0.1), ("valley", 10.0, "0.1", 300, 0.5),
     ("bowl", 10.0, "0.316", 40, 0.0), ("valley", 10.0, "0.01", 100, 0.1)],
)  # fmt: skip
def test_the_panel_against_plain_loops(surface: str, kappa: float, lr: str, steps: int, wd: float) -> None:
    state = SPEC.defaults().replace(opt_surface=SURFACE[surface], opt_kappa=kappa, opt_lr=lr, opt_steps=steps,
                                    opt_wd=wd)  # fmt: skip
    view = view_of.figures(state, Options(parts=frozenset({"main"})))
    panel = view.figures["main"].layout.annotations[0].text
    exact = ref.LR_STEPS[view_of.LR_CHOICES.index(lr)]  # the label is rounded to 3 digits, the step is 10^(i/4 - 3)
    for name, key in zip(view_of.NAMES, view_of.OPTIMIZERS, strict=True):
        final = ref.run(surface, kappa, key, exact, steps, wd=wd if key in ("adam_l2", "adamw") else 0.0)[2]
        assert f"{name}: {ref.loss_text(final)}" in panel, (name, panel)
    limit, cond = ref.stable_limit(surface, kappa)
    r = {x.label: x.value for x in view.readouts}
    assert r["SGD's stable limit η_max"] == f"{limit:.3g}"
    assert r["Condition number κ"] == f"{cond:.3g}"


def test_sgd_converges_below_its_limit_and_diverges_above() -> None:
    state = SPEC.defaults()
    finals = {lr: view_of.figures(state.replace(opt_lr=lr)).facts["finals"][0] for lr in ("0.178", "0.316")}
    assert finals["0.178"] < 1e-3 and not (finals["0.316"] < 1e6)  # limit 2/10 = 0.2 between the two steps


def test_sgd_and_momentum_are_plain_whatever_the_weight_decay() -> None:
    """The weight-decay control reaches Adam + L2 and AdamW only: at κ = 11 the stated limit 2/11 = 0.182 holds for
    SGD at η = 0.178 even with λ = 1 (L2 would make the limit 2/(11 + 1) = 0.167 and SGD diverge)."""
    state = SPEC.defaults().replace(opt_kappa=11.0, opt_wd=1.0, opt_lr="0.178", opt_steps=300)
    out = view_of.figures(state)
    assert out.facts["limit"] == pytest.approx(2 / 11)
    sgd, momentum = out.facts["finals"][:2]
    assert sgd == pytest.approx(ref.run("bowl", 11.0, "sgd", ref.LR_STEPS[9], 300, wd=0.0)[2]) and sgd < 1e-3
    assert momentum == pytest.approx(ref.run("bowl", 11.0, "momentum", ref.LR_STEPS[9], 300, wd=0.0)[2])
    assert not ref.run("bowl", 11.0, "sgd", ref.LR_STEPS[9], 300, wd=1.0)[2] < 1e6  # what L2 would have done


def test_the_drag_covers_the_sweep() -> None:
    view = view_of.figures(SPEC.defaults(), Options(parts=frozenset({"main"})))
    drag = view.drags["main"]
    assert drag.field == "opt_lr" and drag.values == view_of.LR_CHOICES
    assert [float(v) for v in drag.values] == pytest.approx(ref.LR_STEPS, rel=2e-3)
    slider = view.figures["main"].layout.sliders[0]
    assert len(slider.steps) == 13 and slider.active == view_of.LR_CHOICES.index("0.1")
    for step, lr in zip(slider.steps, view_of.LR_CHOICES, strict=True):
        assert step.args[1]["annotations[0].text"].startswith(f"<b>η = {lr}</b>")


def test_bias_correction_and_warm_up() -> None:
    r = _readouts(SPEC.defaults())
    steps = ref.uncorrected_steps(5000, 0.9, 0.999)
    peak = int(np.argmax(steps))
    assert r["Uncorrected first step"] == f"{steps[0]:.2f} η" == "3.16 η"
    assert r["Largest uncorrected step"] == f"{steps[peak]:.2f} η at t = {peak + 1}"
    assert r["Relative std of v̂ at t = 1"] == f"{100 * np.sqrt(2 / ref.n_eff(1, 0.999)):.0f}%" == "141%"
    assert r["At t = 100"] == f"{100 * np.sqrt(2 / ref.n_eff(100, 0.999)):.0f}%"
    r2 = _readouts(SPEC.defaults().replace(opt_beta2=0.95))
    assert r2["Uncorrected first step"] == f"{0.1 / np.sqrt(0.05):.2f} η" == "0.45 η"


@pytest.mark.parametrize(
    ("b1", "b2", "expected"),
    [(0.9, 0.5, "never above η (rises toward η)"), (0.9, 0.9, "never above η (rises toward η)"),
     (0.5, 0.501, "at most 1.00 η (rises toward η)"), (0.9, 0.98, "1.55 η at t = 14")],
)  # fmt: skip
def test_the_largest_uncorrected_step_is_no_false_peak(b1: float, b2: float, expected: str) -> None:
    """With β2 ≤ β1 the uncorrected step (1 − β1^t)/√(1 − β2^t) stays below η for every t, so there is no peak to
    print (argmax over the computed steps would land where it has rounded to 1 in floats: 1.00 η at t = 356 for
    β2 = 0.5); just above β1 the excess is below what two decimals show. At β2 = 0.98 it peaks inside the range."""
    steps = ref.uncorrected_steps(5000, b1, b2)
    peak = int(np.argmax(steps))
    if b2 <= b1:
        assert max(steps) <= 1.0  # by the moment loop: never above η
    elif expected.startswith("at most"):
        assert 1.0 <= max(steps) < 1.005
    else:
        assert expected == f"{steps[peak]:.2f} η at t = {peak + 1}"
    bias = Options(parts=frozenset({view_of.BIAS}))
    r = _readouts(SPEC.defaults().replace(opt_beta1=b1, opt_beta2=b2), bias)
    assert r["Largest uncorrected step"] == expected


@pytest.mark.parametrize("shift", [2.0, -3.5, 0.0])
def test_the_norms(shift: float) -> None:
    r = _readouts(SPEC.defaults().replace(opt_shift=shift))
    s = ref.norm_stats(shift)
    for label, key in (
        ("Input x: mean, RMS", "x"),
        ("LayerNorm(x): mean, RMS", "ln"),
        ("RMSNorm(x): mean, RMS", "rms"),
    ):
        m, q = s[key]
        assert r[label] == f"{m:.2f}, {q:.2f}".replace("-0.00", "0.00"), label


@pytest.mark.parametrize(("init", "depth"), [("xavier", "12"), ("xavier", "4"), ("gpt2", "12")])
def test_pre_and_post_ln_from_the_shipped_file(init: str, depth: str) -> None:
    r = _readouts(SPEC.defaults().replace(opt_init=init, opt_depth=depth))
    pre, post = ref.shipped(f"grad/{init}/pre/L{depth}"), ref.shipped(f"grad/{init}/post/L{depth}")
    assert r["Last block: post-LN ÷ pre-LN"] == f"{post[-1] / pre[-1]:.2g}"
    assert (post[-1] > pre[-1]) == (init == "xavier")  # Xiong et al.'s direction under Xavier; reversed under GPT-2


def test_mup_best_learning_rates_from_the_shipped_file() -> None:
    r = _readouts(SPEC.defaults())
    lrs = ref.shipped("sweep/lrs")
    for p, label in (("sp", "Best η, SP"), ("mup", "Best η, muP")):
        best = [lrs[int(np.nanargmin(row))] for row in ref.shipped(f"sweep/{p}")]
        assert r[label] == f"{best[0]:.2g} → {best[-1]:.2g}"  # widths 32 and 512, neither at the sweep's edge
        assert lrs[0] < min(best) and max(best) < lrs[-1]
    assert r["Best η, SP"] == "0.018 → 0.0018"
    assert r["Best η, muP"] == "0.018 → 0.018"


def test_the_shipped_gradient_norms_rerun() -> None:
    """One configuration of the shipped file recomputed with core (torch, one thread)."""
    torch = pytest.importorskip("torch")
    from core import optimizers as opt

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        again = opt.grad_norm_by_depth(4, "post", "xavier")
    finally:
        torch.set_num_threads(n)
    np.testing.assert_allclose(again, ref.shipped("grad/xavier/post/L4"), rtol=1e-5)


def test_the_view_imports_no_torch() -> None:
    code = (
        "import sys\nfrom views import optimizers as v, Options\n"
        "v.figures(v.SPEC.defaults(), Options(parts=frozenset({'main', *v.VIEWS})))\n"
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(ref.SHIPPED.parents[2]))


def test_bad_input_gives_no_exception() -> None:
    state = SPEC.defaults().replace(opt_lr="7", opt_surface="nope", opt_depth="5", opt_init="he")
    view = view_of.figures(state, ALL)
    assert view.figures


def test_the_warm_up_quantile_by_a_loop() -> None:
    """The 95th percentile of Adam's step |m̂/√v̂| at t = 2 and 10 over the 2,000 seeded runs, by a loop over the
    first ten steps of the same gradients; and the Cauchy–Schwarz bound at t = 10 (tests/optimizers_reference)."""
    rng = np.random.default_rng(0)
    g = rng.standard_normal((2000, 200))[:, :10]
    m, v, step = np.zeros(2000), np.zeros(2000), {}
    for t in range(1, 11):
        m = 0.9 * m + 0.1 * g[:, t - 1]
        v = 0.999 * v + 0.001 * g[:, t - 1] ** 2
        step[t] = np.abs(m / (1 - 0.9**t)) / np.sqrt(v / (1 - 0.999**t))
    np.testing.assert_allclose(step[1], 1.0)  # exactly η at the first step
    r = _readouts(SPEC.defaults())
    want = f"{np.quantile(step[2], 0.95):.2f} η, {np.quantile(step[10], 0.95):.2f} η"
    assert r["Adam's step |m̂/√v̂|, 95th percentile at t = 2, 10"] == want == "1.00 η, 0.62 η"
    assert step[10].max() <= ref.step_bound(10, 0.9, 0.999)
    assert r["Largest possible step at t = 10"] == f"{ref.step_bound(10, 0.9, 0.999):.2f} η" == "1.04 η"
