"""core.flop_count: torch's FLOP counter on the lesson's stack of bias-free linear layers, against the matmul FLOPs
written out here layer by layer (an m×k by k×n product costs 2·m·n·k FLOPs; GELU and the loss cost nothing in the
count), at two widths; and the module imports no torch until it counts."""

import subprocess
import sys
from pathlib import Path

import pytest

from core.flop_count import FlopCount, count_training_flops

ROOT = Path(__file__).resolve().parents[1]


def _layers(d: int, pairs: int) -> list[tuple[int, int]]:
    """(fan_in, fan_out) of each linear layer, in order: d -> 4d -> d, ``pairs`` times."""
    return [(d, 4 * d), (4 * d, d)] * pairs


def _matmul(m: int, k: int, n: int) -> int:
    """FLOPs of an (m × k) by (k × n) product: m·n dot products of length k, a multiply and an add per term."""
    return 2 * m * n * k


def _expected(d: int, T: int, pairs: int, input_requires_grad: bool) -> tuple[int, int, int]:
    """(N, forward, backward) by hand. Forward: Y = X·Wᵀ per layer, (T × a) by (a × b). Backward per layer: the
    weight gradient dW = dYᵀ·X, (b × T) by (T × a), and the input gradient dX = dY·W, (T × b) by (b × a); the
    first layer skips dX when the batch needs no gradient (no later layer needs it either)."""
    layers = _layers(d, pairs)
    n_params = sum(a * b for a, b in layers)
    forward = sum(_matmul(T, a, b) for a, b in layers)
    weight_grads = sum(_matmul(b, T, a) for a, b in layers)
    input_grads = sum(_matmul(T, b, a) for i, (a, b) in enumerate(layers) if i > 0 or input_requires_grad)
    return n_params, forward, weight_grads + input_grads


@pytest.mark.parametrize(("d", "T", "pairs"), [(64, 128, 2), (24, 40, 3)])
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_counts_are_the_matmuls_written_out(d, T, pairs, input_requires_grad):
    got = count_training_flops(d, T, pairs, input_requires_grad=input_requires_grad)
    n_params, forward, backward = _expected(d, T, pairs, input_requires_grad)
    assert got == FlopCount(n_params, T, forward, backward)
    assert all(type(v) is int for v in (got.n_params, got.tokens, got.forward, got.backward))


@pytest.mark.parametrize(("d", "T", "pairs"), [(64, 128, 2), (24, 40, 3)])
def test_forward_is_2N_and_backward_4N_per_token(d, T, pairs):
    """Bias-free linears: forward = 2·T·N, backward = 4·T·N; without the input's gradient the first layer's dX
    (2·T·d·4d = 2·T·(its parameters)) is not computed: backward = (4N − 2·d·4d)·T."""
    N = 8 * pairs * d * d
    full = count_training_flops(d, T, pairs)
    frozen = count_training_flops(d, T, pairs, input_requires_grad=False)
    assert (full.n_params, full.forward, full.backward) == (N, 2 * T * N, 4 * T * N)
    assert (frozen.forward, frozen.backward) == (2 * T * N, (4 * N - 2 * d * 4 * d) * T)
    assert full.ratios == (2.0, 4.0)
    assert frozen.ratios == (2.0, 4.0 - 2 * 4 * d * d / N)  # 4 - 1/pairs: 3.5 for the lesson's two blocks


def test_the_lessons_numbers():
    """Lesson 001, section 5: N = 65,536, forward 2.0 and backward 4.0 per token in units of N; 3.5 without the
    input's gradient."""
    full = count_training_flops()
    frozen = count_training_flops(input_requires_grad=False)
    assert full.n_params == 4 * 64 * 256 == 65_536 and full.tokens == 128
    assert full.ratios == (2.0, 4.0) and frozen.ratios == (2.0, 3.5)


def test_the_device_and_the_seed_do_not_change_the_counts():
    assert count_training_flops(16, 8, 1, device="cpu", seed=3) == count_training_flops(16, 8, 1)


def test_bad_sizes_are_refused():
    for bad in ({"d": 0}, {"tokens": 0}, {"pairs": 0}):
        with pytest.raises(ValueError):
            count_training_flops(**bad)


def test_importing_the_module_does_not_import_torch():
    code = "import sys, core.flop_count; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "False"
