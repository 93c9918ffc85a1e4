"""core.optimizers: the trajectories against torch.optim's SGD (momentum), Adam and AdamW stepping the same surface
with torch autograd's gradient; Adam without bias correction against the update written out here; the bias
correction and the second moment's effective sample size against loops; rms_norm and layer_norm against torch.nn;
pre-LN vs post-LN at initialisation (Xiong et al. 2020's direction); no torch behind the 2-D figures."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from core import optimizers as opt

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def one_thread():
    """torch on one thread for the small models (oversubscribed threads cost 10x here), restored afterwards."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


SURFACES = {"bowl": opt.quadratic(condition=10.0), "valley": opt.rosenbrock(a=1.0, b=10.0)}


def _torch_loss(s: opt.Surface, p: torch.Tensor) -> torch.Tensor:
    x, y = p[0], p[1]
    if s.kind == "quadratic":
        return 0.5 * (s.a * x**2 + s.b * y**2)
    return (s.a - x) ** 2 + s.b * (y - x**2) ** 2


def _torch_run(s: opt.Surface, make, start, steps: int) -> np.ndarray:
    p = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    o = make([p])
    out = [p.detach().clone().numpy()]
    for _ in range(steps):
        o.zero_grad()
        _torch_loss(s, p).backward()
        o.step()
        out.append(p.detach().clone().numpy())
    return np.array(out)  # (steps + 1, 2)


# two settings per optimizer: (surface, start, lrs, extra options)
CASES = [
    ("sgd", "bowl", (1.0, 1.0), (0.01, 0.15), {}),
    ("sgd", "valley", (-1.2, 1.0), (0.005, 0.02), {"weight_decay": 0.05}),
    ("momentum", "bowl", (1.0, 1.0), (0.01, 0.1), {"momentum": 0.9}),
    ("momentum", "valley", (-1.2, 1.0), (0.002, 0.01), {"momentum": 0.5, "weight_decay": 0.01}),
    ("adam", "bowl", (1.0, 1.0), (0.01, 0.3), {}),
    ("adam", "valley", (-1.2, 1.0), (0.003, 0.05), {"betas": (0.8, 0.95), "eps": 1e-6}),
    ("adam_l2", "bowl", (1.0, 1.0), (0.01, 0.3), {"weight_decay": 0.5}),
    ("adam_l2", "valley", (-1.2, 1.0), (0.01,), {"weight_decay": 0.1, "betas": (0.9, 0.95)}),
    ("adamw", "bowl", (1.0, 1.0), (0.01, 0.3), {"weight_decay": 0.5}),
    ("adamw", "valley", (-1.2, 1.0), (0.003, 0.05), {"weight_decay": 0.1, "betas": (0.9, 0.95)}),
]


def _maker(name: str, lr: float, kw: dict):
    wd = kw.get("weight_decay", 0.0)
    if name in ("sgd", "momentum"):
        mu = kw.get("momentum", 0.9) if name == "momentum" else 0.0
        return lambda ps: torch.optim.SGD(ps, lr=lr, momentum=mu, weight_decay=wd)
    betas, eps = kw.get("betas", (0.9, 0.999)), kw.get("eps", 1e-8)
    cls = torch.optim.AdamW if name == "adamw" else torch.optim.Adam
    return lambda ps: cls(ps, lr=lr, betas=betas, eps=eps, weight_decay=wd)


@pytest.mark.parametrize(("name", "surface", "start", "lrs", "kw"), CASES)
def test_trajectories_equal_torch_optim(name, surface, start, lrs, kw) -> None:
    s, steps = SURFACES[surface], 60
    tr = opt.trajectory(s, name, lrs, steps, start, **kw)
    assert tr.positions.shape == (len(lrs), steps + 1, 2) and tr.losses.shape == (len(lrs), steps + 1)
    for i, lr in enumerate(lrs):
        ref = _torch_run(s, _maker(name, lr, kw), start, steps)
        assert np.all(np.isfinite(ref))
        np.testing.assert_allclose(tr.positions[i], ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tr.losses, s.loss(tr.positions))


def test_adam_without_bias_correction_follows_the_update_written_out() -> None:
    s, lr, b1, b2, eps, steps = SURFACES["valley"], 0.02, 0.9, 0.99, 1e-8, 40
    tr = opt.trajectory(s, "adam", [lr], steps, (-1.2, 1.0), betas=(b1, b2), eps=eps, bias_correction=False)
    # scalar loop: m_t = β1 m + (1-β1) g, v_t = β2 v + (1-β2) g², θ -= lr m / (sqrt(v) + eps), per coordinate
    x, y = -1.2, 1.0
    m, v = [0.0, 0.0], [0.0, 0.0]
    ref = [(x, y)]
    for _ in range(steps):
        g = [-2 * (1.0 - x) - 40.0 * x * (y - x * x), 20.0 * (y - x * x)]  # ∇ of (1-x)² + 10 (y-x²)²
        m = [b1 * m[k] + (1 - b1) * g[k] for k in range(2)]
        v = [b2 * v[k] + (1 - b2) * g[k] ** 2 for k in range(2)]
        x, y = (x - lr * m[0] / (math.sqrt(v[0]) + eps), y - lr * m[1] / (math.sqrt(v[1]) + eps))
        ref.append((x, y))
    np.testing.assert_allclose(tr.positions[0], np.array(ref), rtol=1e-12, atol=1e-14)
    # it differs from the corrected run from step 2 on (at t = 1 both steps are η sign(g): 0.1 / √0.01 = 1)
    corrected = opt.trajectory(s, "adam", [lr], steps, (-1.2, 1.0), betas=(b1, b2), eps=eps)
    np.testing.assert_allclose(corrected.positions[0, 1], tr.positions[0, 1], atol=1e-9)  # ε acts on √v vs √v̂
    assert not np.allclose(corrected.positions[0, 2], tr.positions[0, 2])


def test_surface_gradients_equal_central_differences() -> None:
    rng = np.random.default_rng(0)
    p, h = rng.uniform(-2, 2, size=(50, 2)), 1e-6
    for s in SURFACES.values():
        num = np.stack([(s.loss(p + h * e) - s.loss(p - h * e)) / (2 * h) for e in np.eye(2)], axis=-1)  # (50, 2)
        np.testing.assert_allclose(s.grad(p), num, rtol=1e-6, atol=1e-6)
        assert s.loss(s.minimum) == 0.0 and np.allclose(s.grad(s.minimum), 0.0)


def test_loss_grid_layout_and_sweep() -> None:
    s = SURFACES["bowl"]
    xs, ys, Z = opt.loss_grid(s, (-2, 2), (-1, 1), n=5)
    assert Z.shape == (5, 5) and Z[1, 3] == pytest.approx(0.5 * (10 * xs[3] ** 2 + ys[1] ** 2))
    lrs = opt.lr_sweep(1e-3, 1e-1, 5)
    np.testing.assert_allclose(lrs, [1e-3, 10**-2.5, 1e-2, 10**-1.5, 1e-1])
    # SGD on the bowl diverges above 2 / a (the large curvature), below it converges
    tr = opt.trajectory(s, "sgd", [0.19, 0.21], 200, (1.0, 1.0))
    assert tr.losses[0, -1] < 1e-3 and not tr.losses[1, -1] < 1e3


def test_bias_correction_step_sizes_against_a_constant_gradient_loop() -> None:
    b1, b2, steps = 0.9, 0.999, 30
    bc = opt.bias_correction_steps(steps, b1, b2)
    m = v = 0.0
    g = 3.0
    for t in range(1, steps + 1):
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        assert bc.uncorrected[t - 1] == pytest.approx(m / math.sqrt(v), rel=1e-12)
        assert bc.corrected[t - 1] == pytest.approx((m / (1 - b1**t)) / math.sqrt(v / (1 - b2**t)), rel=1e-12)
    assert bc.uncorrected[0] == pytest.approx(0.1 / math.sqrt(1e-3))  # 3.16: larger than η, not smaller
    assert opt.bias_correction_steps(1, 0.9, 0.95).uncorrected[0] == pytest.approx(0.1 / math.sqrt(0.05))


def test_second_moment_effective_samples_and_noise() -> None:
    b2 = 0.999
    n_eff = opt.second_moment_effective_samples(300, b2)
    for t in (1, 7, 300):
        w = b2 ** np.arange(t)
        assert n_eff[t - 1] == pytest.approx(w.sum() ** 2 / (w * w).sum(), rel=1e-9)
    assert n_eff[0] == pytest.approx(1.0)
    assert opt.second_moment_effective_samples(20000, b2)[-1] == pytest.approx((1 + b2) / (1 - b2), rel=1e-6)
    sim = opt.second_moment_noise(steps=30, beta2=b2, runs=4000, seed=0)
    # the simulated relative spread of v̂ matches √(2 / n_eff) for zero-mean Gaussian gradients
    np.testing.assert_allclose(sim.rel_std_simulated, sim.rel_std_closed_form, rtol=0.08)
    assert sim.step[-1, 0] > sim.step[-1, -1]  # the 95th-percentile step is largest at the first steps
    again = opt.second_moment_noise(steps=30, beta2=b2, runs=4000, seed=0)
    np.testing.assert_array_equal(again.v_ratio, sim.v_ratio)  # seeded


@pytest.mark.parametrize(("dtype", "eps"), [(torch.float32, None), (torch.float64, 1e-6), (torch.float32, 1e-5)])
def test_rms_norm_equals_torch(dtype, eps) -> None:
    x = torch.randn(3, 5, 16, dtype=dtype, generator=torch.Generator().manual_seed(0)) * 3 + 1
    ref = torch.nn.RMSNorm(16, eps=eps, dtype=dtype)(x).detach().numpy()
    tol = 1e-6 if dtype == torch.float32 else 1e-13
    np.testing.assert_allclose(opt.rms_norm(x.numpy(), eps), ref, rtol=tol, atol=tol)
    g = torch.linspace(0.5, 2.0, 16, dtype=dtype)
    ref_g = torch.nn.functional.rms_norm(x, (16,), weight=g, eps=eps).numpy()
    np.testing.assert_allclose(opt.rms_norm(x.numpy(), eps, gain=g.numpy()), ref_g, rtol=tol, atol=tol)
    # eps=None is the dtype's machine epsilon; a tiny input shows it
    tiny = torch.full((1, 16), 1e-4, dtype=dtype)
    np.testing.assert_allclose(
        opt.rms_norm(tiny.numpy()), torch.nn.RMSNorm(16, dtype=dtype)(tiny).detach().numpy(), rtol=tol
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_layer_norm_equals_torch(dtype) -> None:
    x = torch.randn(4, 32, dtype=dtype, generator=torch.Generator().manual_seed(1)) * 5 + 7
    tol = 2e-6 if dtype == torch.float32 else 1e-12
    ref = torch.nn.LayerNorm(32, elementwise_affine=False, dtype=dtype)(x).numpy()
    np.testing.assert_allclose(opt.layer_norm(x.numpy()), ref, rtol=tol, atol=tol)
    g, b = torch.linspace(0.5, 2.0, 32, dtype=dtype), torch.linspace(-1, 1, 32, dtype=dtype)
    ref_gb = torch.nn.functional.layer_norm(x, (32,), g, b, eps=1e-3).numpy()
    np.testing.assert_allclose(opt.layer_norm(x.numpy(), 1e-3, g.numpy(), b.numpy()), ref_gb, rtol=tol, atol=tol)
    # what each removes: LayerNorm's output has mean 0 and unit variance; RMSNorm keeps the mean direction
    y, r = opt.layer_norm(x.numpy().astype(np.float64)), opt.rms_norm(x.numpy().astype(np.float64), 0.0)
    np.testing.assert_allclose(y.mean(-1), 0.0, atol=1e-12)
    np.testing.assert_allclose((r * r).mean(-1), 1.0, rtol=1e-12)
    assert np.all(r.mean(-1) > 0.5)  # the +7 offset survives RMSNorm


def test_post_ln_last_layer_gradient_exceeds_pre_ln_at_depth(one_thread) -> None:
    pre, post = (opt.grad_norm_by_depth(12, norm, init="xavier", device="cpu") for norm in ("pre", "post"))
    assert pre.shape == post.shape == (12,)
    assert post[-1] > 3 * pre[-1]  # Xiong et al. 2020, Theorem 1's direction (5.3x with seed 0)
    pre4, post4 = (opt.grad_norm_by_depth(4, norm, init="xavier", device="cpu") for norm in ("pre", "post"))
    assert post[-1] / pre[-1] > post4[-1] / pre4[-1]  # the gap widens with depth
    np.testing.assert_array_equal(opt.grad_norm_by_depth(12, "pre", init="xavier", device="cpu"), pre)  # seeded
    # under the tiny GPT's own GPT-2 init the direction reverses (module docstring): the init scale decides
    gpt_pre, gpt_post = (opt.grad_norm_by_depth(12, norm, init="gpt2", device="cpu") for norm in ("pre", "post"))
    assert gpt_pre[-1] > 10 * gpt_post[-1]


_PROBE = """
import json, sys
from core import optimizers as opt
for s in (opt.quadratic(25.0), opt.rosenbrock()):
    opt.loss_grid(s, (-2, 2), (-1, 3), 41)
    for name in opt.OPTIMIZERS:
        opt.trajectory(s, name, opt.lr_sweep(1e-3, 1e-1, 9), 100, weight_decay=0.0 if name == 'adam' else 0.1)
opt.bias_correction_steps(100)
opt.second_moment_noise(steps=50, runs=200)
opt.layer_norm([[1.0, 2.0, 3.0]]); opt.rms_norm([[1.0, 2.0, 3.0]])
print(json.dumps("torch" in sys.modules))
"""


def test_two_d_figures_need_no_torch() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) is False


def test_mup_coordinate_check_is_flat_across_widths_and_sp_is_not(one_thread) -> None:
    widths = (32, 64, 128, 256)
    mup = opt.mup_coord_check(widths, "mup", lr=0.01, steps=5)[:, -1, :]  # (widths, 3) after the last step
    sp = opt.mup_coord_check(widths, "sp", lr=0.01, steps=5)[:, -1, :]
    np.testing.assert_array_equal(mup[0], sp[0])  # at the base width the two parameterisations coincide
    hidden = mup[:, :2]
    assert np.all(hidden.max(0) / hidden.min(0) < 1.3)  # muP: flat up to seed noise (1.05, 1.24 measured)
    assert mup[:, 2].max() / mup[:, 2].min() < 2.0
    assert sp[-1, 2] / sp[0, 2] > 3.0  # SP with Adam: the output grows with width
