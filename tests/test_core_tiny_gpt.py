"""The tiny GPT (core/tiny_gpt.py) against independent references: a loop-over-heads-and-positions forward written
here, RMSNorm and RoPE from their formulas, FlopCounterMode's counts, seeded runs, the shipped checkpoint."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from core import tiny_gpt as tg

ROOT = Path(__file__).resolve().parents[1]
SMALL = tg.GPTConfig(n_layer=2, d_model=32, n_head=4, ctx=16, mlp_mult=4)


def _random_params(cfg: tg.GPTConfig, seed: int) -> dict[str, np.ndarray]:
    """init_params with norm gains away from 1, so that the gains are exercised."""
    rng = np.random.default_rng(seed)
    p = tg.init_params(cfg, seed)
    for k, v in p.items():
        if v.ndim == 1:
            p[k] = (1.0 + 0.3 * rng.standard_normal(v.shape)).astype(np.float32)
        else:
            p[k] = (v * 5).astype(np.float32)  # larger weights: sharper attention, a stricter comparison
    return p


# --------------------------------------------------------------------------------------------------------------
# the reference: float64, one head and one position at a time, every formula written out


def _ref_rms(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    return x / torch.sqrt((x * x).mean() + 1e-5) * g


def _ref_rope(v: torch.Tensor, m: int) -> torch.Tensor:
    """Interleaved pairs (2i, 2i+1) turned by m·θ_i, θ_i = 10000^(-2i/d)."""
    d = v.shape[0]
    out = v.clone()
    for i in range(d // 2):
        th = m * 10000.0 ** (-2 * i / d)
        a, b = v[2 * i], v[2 * i + 1]
        out[2 * i] = a * math.cos(th) - b * math.sin(th)
        out[2 * i + 1] = a * math.sin(th) + b * math.cos(th)
    return out


def _ref_gelu(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _ref_forward(p: dict[str, np.ndarray], cfg: tg.GPTConfig, ids: list[int]) -> tuple[torch.Tensor, list]:
    """Logits (T, 256) and attention weights [layer][head] (T, T), float64."""
    P = {k: torch.tensor(v, dtype=torch.float64) for k, v in p.items()}
    T, H, dh = len(ids), cfg.n_head, cfg.d_model // cfg.n_head
    xs = [P["wte"][i].clone() for i in ids]
    maps = []

    def attend(hs: list[torch.Tensor], layer: int) -> tuple[list[torch.Tensor], list]:
        outs = [torch.zeros(cfg.d_model, dtype=torch.float64) for _ in range(T)]
        weights = []
        for h in range(H):
            sl = slice(h * dh, (h + 1) * dh)
            q = [_ref_rope((hs[t] @ P[f"h{layer}.wq"])[sl], t) for t in range(T)]
            k = [_ref_rope((hs[t] @ P[f"h{layer}.wk"])[sl], t) for t in range(T)]
            v = [(hs[t] @ P[f"h{layer}.wv"])[sl] for t in range(T)]
            A = torch.zeros(T, T, dtype=torch.float64)
            for t in range(T):
                scores = torch.stack([q[t] @ k[s] / math.sqrt(dh) for s in range(t + 1)])
                w = torch.exp(scores - scores.max())
                w = w / w.sum()
                A[t, : t + 1] = w
                outs[t][sl] = sum(w[s] * v[s] for s in range(t + 1))
            weights.append(A)
        return [o @ P[f"h{layer}.wo"] for o in outs], weights

    for i in range(cfg.n_layer):
        g1, g2, w1, w2 = P[f"h{i}.norm1"], P[f"h{i}.norm2"], P[f"h{i}.w1"], P[f"h{i}.w2"]
        if cfg.norm == "pre":
            att, A = attend([_ref_rms(x, g1) for x in xs], i)
            xs = [x + a for x, a in zip(xs, att, strict=True)]
            xs = [x + _ref_gelu(_ref_rms(x, g2) @ w1) @ w2 for x in xs]
        else:
            att, A = attend(xs, i)
            xs = [_ref_rms(x + a, g1) for x, a in zip(xs, att, strict=True)]
            xs = [_ref_rms(x + _ref_gelu(x @ w1) @ w2, g2) for x in xs]
        maps.append(A)
    logits = torch.stack([_ref_rms(x, P["norm_f"]) @ P["wte"].T for x in xs])
    return logits, maps


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_forward_matches_the_loop_reference(norm: str) -> None:
    cfg = dataclasses.replace(SMALL, norm=norm)
    p = _random_params(cfg, 1)
    ids = [72, 101, 108, 108, 111, 32, 0, 255, 87, 111, 114, 108, 100]
    ref, ref_maps = _ref_forward(p, cfg, ids)
    with torch.no_grad():
        out = tg.torch_model(cfg, p, device="cpu")(torch.tensor([ids]))[0].double()
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(tg.logits_numpy(p, cfg, ids), ref.numpy(), atol=1e-5, rtol=1e-5)
    maps = tg.attention_numpy(p, cfg, ids)  # (L, H, T, T)
    for layer in range(cfg.n_layer):
        for h in range(cfg.n_head):
            np.testing.assert_allclose(maps[layer, h], ref_maps[layer][h].numpy(), atol=1e-6)


def test_rms_norm_and_rope_formulas() -> None:
    model = tg.torch_model(SMALL, _random_params(SMALL, 2), device="cpu")
    x = torch.randn(3, 5, SMALL.d_model)
    g = model.blocks[0].norm1.weight.detach()
    want = x / torch.sqrt((x**2).mean(-1, keepdim=True) + 1e-5) * g
    torch.testing.assert_close(model.blocks[0].norm1(x).detach(), want, atol=1e-6, rtol=1e-6)
    # the model's RoPE: interleaved pairs, base 10000, checked on one vector at position 5
    v = torch.randn(8, dtype=torch.float64)
    got = tg.apply_rope(v[None].numpy(), [5.0], tg.rope_inv_freq(8, tg.ROPE_BASE)[0])[0]
    np.testing.assert_allclose(got, _ref_rope(v, 5).numpy(), atol=1e-12)


def test_causality() -> None:
    p = _random_params(SMALL, 3)
    a = np.array([10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
    b = a.copy()
    b[6] = 200
    la, lb = tg.logits_numpy(p, SMALL, a), tg.logits_numpy(p, SMALL, b)
    np.testing.assert_array_equal(la[:6], lb[:6])
    assert np.abs(la[6:] - lb[6:]).max() > 1e-3
    with torch.no_grad():
        m = tg.torch_model(SMALL, p, device="cpu")
        ta, tb = m(torch.tensor(a)[None])[0], m(torch.tensor(b)[None])[0]
    torch.testing.assert_close(ta[:6], tb[:6], atol=0, rtol=0)


# --------------------------------------------------------------------------------------------------------------
# FLOPs: FlopCounterMode on the CPU (attention written as matmuls; fused SDPA would count 0 on CPU in torch 2.13)


@pytest.mark.parametrize(
    ("cfg", "B", "T"),
    [(SMALL, 3, 16), (tg.GPTConfig(n_layer=3, d_model=48, n_head=2, ctx=24, mlp_mult=2, norm="post"), 2, 20)],
)
def test_flop_counter_forward_2n_lin_backward_twice(cfg: tg.GPTConfig, B: int, T: int) -> None:
    model = tg.torch_model(cfg, device="cpu")
    ids = torch.randint(0, 256, (B, T + 1))
    # N_lin: every matrix that multiplies activations; the tied table once (as the head; the lookup is a gather)
    n_lin = sum(p.numel() for p in model.parameters() if p.ndim == 2)
    attention = cfg.n_layer * 2 * (2 * B * cfg.n_head * T * T * (cfg.d_model // cfg.n_head))  # QK^T and AV
    with FlopCounterMode(display=False) as fwd:
        loss = torch.nn.functional.cross_entropy(model(ids[:, :-1]).reshape(-1, 256), ids[:, 1:].reshape(-1))
    with FlopCounterMode(display=False) as bwd:
        loss.backward()
    forward = fwd.get_total_flops()
    assert forward == 2 * n_lin * B * T + attention
    assert forward == tg.matmul_flops_per_token(cfg, T) * B * T
    assert bwd.get_total_flops() == 2 * forward  # the embedding is trained, so the first dX is computed too
    assert forward + bwd.get_total_flops() == 6 * n_lin * B * T + 3 * attention
    assert n_lin == tg.n_linear_params(cfg)


# --------------------------------------------------------------------------------------------------------------
# training

TINY = tg.GPTConfig(n_layer=1, d_model=32, n_head=2, ctx=32)


def test_same_curve_twice_and_threads_restored() -> None:
    tcfg = tg.TrainConfig(steps=8, batch=4, lr=3e-3, warmup=2, eval_every=4, val_windows=2, seed=5, threads=1)
    before = torch.get_num_threads()
    seen: list[int] = []
    a = tg.train(TINY, tcfg, on_step=lambda s, rec: seen.append(s))
    b = tg.train(TINY, tcfg)
    assert torch.get_num_threads() == before
    assert seen == list(range(1, 9))
    assert a.loss == b.loss and a.grad_norm == b.grad_norm and a.val_loss == b.val_loss
    assert a.val_steps == [4, 8] and len(a.layer_grad_norm[0]) == 1
    assert a.loss[0] == pytest.approx(math.log(256), abs=0.1)  # near uniform at initialisation
    assert a.loss[-1] < a.loss[0]
    np.testing.assert_allclose(a.lr, tg.lr_curve(tcfg))
    assert not a.diverged and not a.stopped and a.tokens_per_s > 0


def test_divergence_is_recorded_not_raised() -> None:
    tcfg = tg.TrainConfig(steps=20, batch=4, lr=50.0, warmup=0, optimizer="sgd", grad_clip=None, eval_every=100)
    r = tg.train(TINY, tcfg)
    assert r.diverged or max(r.loss) > math.log(256)
    assert all(np.isfinite(v).all() for v in r.params.values())


def test_should_stop_ends_early() -> None:
    calls = iter(range(100))
    r = tg.train(TINY, tg.TrainConfig(steps=50, batch=2, warmup=1), should_stop=lambda: next(calls) >= 3)
    assert r.stopped and r.steps_done == 3


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: tg.GPTConfig(d_model=30, n_head=4), "even width"),
        (lambda: tg.GPTConfig(norm="mid"), "norm"),
        (lambda: tg.GPTConfig(vocab=100), "bytes"),
        (lambda: tg.TrainConfig(schedule="step"), "schedule"),
        (lambda: tg.TrainConfig(optimizer="lion"), "optimizer"),
        (lambda: tg.TrainConfig(steps=10, warmup=10), "warmup"),
        (lambda: tg.TrainConfig(lr=-1.0), "lr"),
        (lambda: tg.logits_numpy(tg.init_params(SMALL), SMALL, [1, 300]), "0..255"),
        (lambda: tg.logits_numpy(tg.init_params(SMALL), SMALL, list(range(17))), "ctx"),
        (lambda: tg.matmul_flops_per_token(SMALL, 17), "seq_len"),
        (lambda: tg.logits_numpy(tg.init_params(TINY), SMALL, [1]), "params"),
    ],
)
def test_bad_arguments(make, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make()


# --------------------------------------------------------------------------------------------------------------
# corpus, split, checkpoint


def test_split_rule() -> None:
    data = np.arange(100_000, dtype=np.int64).astype(np.uint8)
    train, val = tg.split_bytes(data)
    held = [data[i * 4096 : (i + 1) * 4096] for i in range(25) if i % 10 == 9]
    np.testing.assert_array_equal(val, np.concatenate(held))
    assert len(train) + len(val) == len(data)


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    p = tg.init_params(SMALL, 7)
    size = tg.save_checkpoint(tmp_path / "c.npz", p, SMALL, {"steps": 3})
    q, cfg, meta = tg.load_checkpoint(tmp_path / "c.npz")
    assert cfg == SMALL and meta == {"steps": 3} and size == (tmp_path / "c.npz").stat().st_size
    assert all(np.array_equal(p[k], q[k]) and q[k].dtype == np.float32 for k in p)


def test_shipped_checkpoint() -> None:
    path = ROOT / "core" / "data" / "tiny_gpt.npz"
    assert path.stat().st_size <= 5 * 1024 * 1024
    with np.load(path, allow_pickle=False) as z:  # no object arrays anywhere
        assert all(z[k].dtype != object for k in z.files)
    params, cfg, meta = tg.load_checkpoint(path)
    assert cfg == tg.SHIPPED_CONFIG
    assert meta["corpus_sha256"] == tg.corpus_sha256()
    val = tg.val_loss_numpy(params, cfg)
    assert val == pytest.approx(tg.SHIPPED_VAL_LOSS, abs=0.02)
    assert val == pytest.approx(meta["val_loss"], abs=1e-4)
    # the numpy and torch forwards agree on the trained weights
    ids = tg.corpus_bytes()[: cfg.ctx].astype(np.int64)
    with torch.no_grad():
        want = tg.torch_model(cfg, params, device="cpu")(torch.from_numpy(ids)[None])[0].numpy()
    np.testing.assert_allclose(tg.logits_numpy(params, cfg, ids), want, atol=1e-4, rtol=1e-5)


def test_corpus_snapshot_is_the_projects_text() -> None:
    text = (ROOT / "core" / "data" / "tiny_corpus.txt").read_text(encoding="utf-8")
    assert text.startswith("Walk Q, K, V and the scaled dot-product.")
    # README's opening (the snapshot is frozen, so later README edits, a new page's row, are not in it), then
    # docs/using.md
    readme = (ROOT / "README.md").read_text(encoding="utf-8").strip().split("\n\n", 2)
    opening = "\n\n".join(readme[:2])
    assert opening in text and text.index(opening) < text.index("# Using the app")
    assert "[[card.checks]]" not in text and "\\operatorname" not in text  # no TOML structure, no equations


def test_numpy_path_never_imports_torch() -> None:
    probe = (
        "import sys, json\n"
        "import core.tiny_gpt as tg\n"
        "params, cfg, meta = tg.load_checkpoint()\n"
        "out = tg.logits_numpy(params, cfg, list(b'The tiny GPT'))\n"
        "a = tg.attention_numpy(params, cfg, list(b'abc'))\n"
        "print(json.dumps([out.shape, a.shape, 'torch' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    shape, att, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert shape == [12, 256] and att[:2] == [tg.SHIPPED_CONFIG.n_layer, tg.SHIPPED_CONFIG.n_head]
    assert not loaded
