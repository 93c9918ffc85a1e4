"""The tables of tests/test_view_numbers.py for the pages of group 'prefs': per page, per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and
(outside the defaults) new texts show.

The references are written here or in tests/card_references.py: the KL-regularised optimum π* ∝ π_ref·exp(r/β) and
its KL, entropy and β·log Z in closed form; DPO's implicit rewards and loss (autograd for the weight); the reward
model's Bradley-Terry fit redone with scipy on the page's sampling protocol (numpy's seeded generator, written out
below); the length toy's optimum by logsumexp; ln V, the SFT prompt share, the packing mask's cross-document pairs
and the padding waste of the page's seeded lengths by counting. Only input data is read from the project (the
SPECs' defaults and presets, the bundled held-out text, the DPO pairs' log-probabilities).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy import optimize, special

from core.dpo import DPO_PRESETS  # input data only: the pairs' log-probabilities and β
from tests import card_references as ref
from tests.page_numbers import Ref
from tests.test_page_numbers import BIGRAMS, FORMULA, GIVEN, NAME, PAD_LENGTHS, _padding_waste_pct, _preset
from views import kl_leash as v_kl_leash
from views import loss_units as v_loss_units
from views import reward_model as v_reward_model

KLS, RMS, LU = v_kl_leash.SPEC, v_reward_model.SPEC, v_loss_units.SPEC


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(","))


# fmt: off
# ============================================================================ 2. KL leash
def _pi_star(pi_ref: tuple[float, ...], r: tuple[float, ...], beta: float) -> tuple[float, ...]:
    return tuple(ref.kl_policy(pi_ref, r, beta, k) for k in range(len(pi_ref)))


def _entropy(p: tuple[float, ...]) -> float:
    return float(-sum(x * math.log(x) for x in p if x > 0))


def _refs_kl(values: dict) -> list[Ref]:
    """The readouts of the leash at the view's β and answers, and the figure's legend of π*(answer)."""
    pi_ref, r, beta = _floats(values["pi_ref"]), _floats(values["r"]), float(values["beta"])
    r_true = _floats(values["r_true"]) if values.get("r_true", "").strip() else None
    pi = _pi_star(pi_ref, r, beta)
    kl = ref.kl_divergence(pi, pi_ref)
    reward = sum(p * x for p, x in zip(pi, r, strict=True))
    out = [
        Ref("KL(π* ‖ π_ref): 0.111 nats", kl),
        Ref("E_π*[r]: 0.731", reward),
        Ref("E[r] − β·KL: 0.620", reward - beta * kl),
        Ref("β·log Z: 0.620", ref.kl_max_objective(pi_ref, r, beta)),
        Ref("Entropy H(π*): 0.582 nats", _entropy(pi)),
        Ref("Entropy H(π*) help: π_ref has 0.693 nats", _entropy(pi_ref)),
    ]
    summary = ["β = 1 KL(π* ‖ π_ref) = 0.111 nats E π* [r] = 0.731", GIVEN, kl, reward]
    if r_true is not None:
        true = sum(p * x for p, x in zip(pi, r_true, strict=True))
        out.append(Ref("True E_π*[r_true]: 0.740", true))
        summary = [summary[0] + " true E π* [r] = 0.740", GIVEN, kl, reward, true]
    summary[0] += " E[r] − β·KL = 0.620 β·log Z = 0.620 H(π*) = 0.582 nats"
    out.append(Ref(*summary, reward - beta * kl, ref.kl_max_objective(pi_ref, r, beta), _entropy(pi)))
    return [*out, Ref("β = 1", GIVEN)]


KL_DEFAULTS = [
    *_refs_kl(KLS.defaults()),
    Ref("π_ref (reference, the SFT model)", NAME),
    Ref("← β → 0: all mass on the top reward", "the limit the annotation names"),
    Ref("π*(y1)", NAME),
    Ref("π*(y2)", NAME),
]


def _takeover_beta(pi_ref: tuple[float, ...], r: tuple[float, ...], share: float = 0.9) -> float:
    """The β below which π* gives the top-reward answer ``share`` of its mass (brentq on log β)."""
    top = int(np.argmax(r))
    return math.exp(optimize.brentq(lambda lb: ref.kl_policy(pi_ref, r, math.exp(lb), top) - share, -4.0, 4.0))


_TOY_REF, _TOY_R = _floats(KLS.defaults()["pi_ref"]), _floats(KLS.defaults()["r"])
_TAKEOVER = _takeover_beta(_TOY_REF, _TOY_R)

KL_HACKING = [
    Ref("π* gives **y1** (top proxy reward) 90% of its mass only once β < **0.455**; the KL from π_ref is then "
        "**0.37 nats**.", "the share the sentence asks about (its input)", _TAKEOVER,
        ref.kl_divergence(_pi_star(_TOY_REF, _TOY_R, _TAKEOVER), _TOY_REF)),
]

KL_THEOREM = [
    Ref("20,000 policies drawn with torch on cpu", KLS["policies"].default),
    Ref("20,000 random policies: none beats π* best random J = 0.6201, 4.7e−13 below β·log Z = 0.6201",
        KLS["policies"].default,
        # the best of the seeded random policies: below β·log Z by the gap beside it, far under the printed digit
        ref.kl_max_objective(_TOY_REF, _TOY_R, 1.0),
        "the seeded sample's gap (a sample; its sign: test_core_kl.py::test_no_random_policy_beats_pi_star)",
        ref.kl_max_objective(_TOY_REF, _TOY_R, 1.0)),
    Ref("random policies (4,000 of 20,000 shown)", "the figure's cap on points drawn (a count)",
        KLS["policies"].default),
    Ref("E[r] − β·KL = β·log Z (slope β = 1)", GIVEN),
]


def _refs_dpo(logp_w: float, logp_l: float, ref_w: float, ref_l: float, beta: float) -> dict[str, float]:
    return {f: ref.dpo(f, logp_w, logp_l, ref_w, ref_l, beta) for f in ("reward_w", "reward_l", "margin", "loss",
                                                                         "weight")}


_KL_DPO = _refs_dpo(*(float(KLS.defaults()[k]) for k in ("logp_w", "logp_l", "ref_w", "ref_l", "dpo_beta")))
DPO_FIGURE = "π_θ = π_ref: loss log 2"

KL_DPO = [
    Ref("r̂_w: 0.200", _KL_DPO["reward_w"]),
    Ref("r̂_l: −0.100", _KL_DPO["reward_l"]),
    Ref("Margin: 0.300", _KL_DPO["margin"]),
    Ref("DPO loss: 0.554", _KL_DPO["loss"]),
    Ref("DPO loss help: −log σ(margin) in nats; log 2 = 0.693 at π_θ = π_ref", FORMULA, math.log(2)),
    Ref("Weight: 0.426", _KL_DPO["weight"]),
    Ref("margin 0.300 loss 0.554, weight 0.426", _KL_DPO["margin"], _KL_DPO["loss"], _KL_DPO["weight"]),
    Ref(DPO_FIGURE, FORMULA),
]


def _kl_preset(name: str) -> list[Ref]:
    values = _preset(KLS, name)
    names = [n.strip() for n in values["names"].split(",")]
    swap = {"β = 1": f"β = {float(values['beta']):g}"}
    out = []
    for row in _refs_kl(values):
        snippet = row.snippet
        for old, new in swap.items():
            snippet = snippet.replace(old, new)
        out.append(Ref(snippet, *row.values))
    return out + [Ref(f"π*({n})", NAME) for n in names if any(c.isdigit() for c in n)]


TABLES: dict[str, dict[str, list[Ref]]] = {
    "pages/2_KL_leash.py": {
        "defaults": KL_DEFAULTS,
        "tab Reward hacking": KL_HACKING,
        "tab Theorem check": KL_THEOREM,
        "tab DPO": KL_DPO,
        "preset Lesson's toy (two answers)": [],  # only the legend's answer names change
        "preset Reward hack": _kl_preset("Reward hack"),
        "preset Five answers": _kl_preset("Five answers"),
        "preset DPO: Start of training (pi = pi_ref)": [],  # sets the DPO tab's inputs; the tab is not open
        "preset DPO: Both answers less likely": [],
    },
}
# ============================================================================ 10. Reward model
def _sample_pairs(r: np.ndarray, n: int, flip: float, rng: np.random.Generator) -> np.ndarray:
    """The page's labels (its stated protocol): n pairs of distinct random answers i, j (j = i + U{1..K-1} mod K),
    i wins with probability σ(r_i - r_j), then each label flipped with probability ``flip``; (winner, loser) rows."""
    i = rng.integers(0, r.size, n)
    j = (i + rng.integers(1, r.size, n)) % r.size
    i_wins = rng.random(n) < special.expit(r[i] - r[j])
    i_wins ^= rng.random(n) < flip
    return np.stack([np.where(i_wins, i, j), np.where(i_wins, j, i)], axis=1)


def _bt_fit(pairs: np.ndarray, n: int, l2: float = 1e-3) -> np.ndarray:
    """The Bradley-Terry maximum likelihood with the page's small ridge, by scipy's BFGS (not the page's Newton)."""
    def f(r: np.ndarray) -> float:
        return float(np.sum(np.logaddexp(0.0, r[pairs[:, 1]] - r[pairs[:, 0]])) + l2 / 2 * np.sum(r**2))

    return optimize.minimize(f, np.zeros(n), method="BFGS", options={"gtol": 1e-10}).x


def _nll(r: np.ndarray, pairs: np.ndarray) -> float:
    return float(np.mean(np.logaddexp(0.0, r[pairs[:, 1]] - r[pairs[:, 0]])))


def _right(r: np.ndarray, pairs: np.ndarray) -> float:
    return 100 * float(np.mean(r[pairs[:, 0]] > r[pairs[:, 1]]))


_RM = RMS.defaults()
_RM_TRUE = np.linspace(-1.5, 1.5, int(_RM["rm_items"]))  # the fit's answers: true rewards evenly spread (the help)
_RM_PAIRS = _sample_pairs(_RM_TRUE, int(_RM["rm_pairs"]), 0.0, np.random.default_rng(int(_RM["rm_seed"])))
_RM_FIT = _bt_fit(_RM_PAIRS, _RM_TRUE.size)
RM_NEWTON = ("the page's Newton iterations (a count of its solver; "
             "test_core_reward_model.py::test_fit_recovers_known_rewards_up_to_a_constant bounds it)")


def _noise_study(flip_index: int) -> dict[str, float]:
    """The label-noise tab: for each flip rate in turn, 400 training then 2,000 held-out pairs from one generator
    (seed 0) over twelve answers spread from -3 to 3; the fit's held-out and true-order accuracy and the ceiling."""
    r = np.linspace(-3.0, 3.0, 12)
    rng = np.random.default_rng(0)
    for k, flip in enumerate(v_reward_model.FLIPS):
        train = _sample_pairs(r, int(_RM["train_pairs"]), flip, rng)
        test = _sample_pairs(r, 2000, flip, rng)
        if k == flip_index:
            fit = _bt_fit(train, r.size)
            order = [(a, b) if r[a] > r[b] else (b, a) for a in range(r.size) for b in range(a + 1, r.size)]
            return {"heldout": _right(fit, test), "ceiling": _right(r, test), "order": _right(fit, np.array(order))}
    raise KeyError(flip_index)


_NOISE = _noise_study(v_reward_model.FLIP_TEXT.index(_RM["flip"]))
RM_RANGE = "the seed's range for held-out agreement (seed 003, Q7; Llama 2's 63-65%, Touvron et al. 2023)"


def _refs_rm_fit(shift: float) -> list[Ref]:
    nll = _nll(_RM_FIT, _RM_PAIRS)
    return [
        Ref("Mean −log σ(r_w − r_l): 0.5062 nats", nll),
        Ref("… after adding c = 0: 0.5062 nats", shift, _nll(_RM_FIT + shift, _RM_PAIRS)),
        Ref("… after adding c = 0 help: the same", shift),
        Ref("Mean fitted reward: 0.000", float(np.mean(_RM_FIT)) + shift),  # the ridge centres the fit; then + c
        Ref("mean −log σ(r_w − r_l) = 0.5062 nats training pairs ranked right: 78.0% after adding 0 to every reward: "
            "0.5062 nats", nll, _right(_RM_FIT, _RM_PAIRS), shift, _nll(_RM_FIT + shift, _RM_PAIRS)),
    ]


RM_DEFAULTS = [
    *_refs_rm_fit(float(_RM["rm_shift"])),
    Ref("Training pairs ranked right: 78.0%", _right(_RM_FIT, _RM_PAIRS)),
    Ref("Largest error vs the truth: 0.207", float(np.max(np.abs(_RM_FIT - (_RM_TRUE - _RM_TRUE.mean()))))),
    Ref("Newton steps: 6", RM_NEWTON),
    Ref("Held-out accuracy at flip 0.2: 68.2%", float(_RM["flip"]), _NOISE["heldout"]),
    Ref("Held-out accuracy at flip 0.2 help", float(_RM["flip"])),
    Ref("Ceiling: the true rewards: 71.1%", _NOISE["ceiling"]),
    Ref("Fitted order vs the true order: 89.4%", _NOISE["order"]),
    Ref("real reward models: about 60-75% held-out", RM_RANGE),
    Ref("labelers' flip rate (400 training pairs)", int(_RM["train_pairs"])),
    # the label-noise figure's readout panel at the page's flip rate (the drag's active step)
    Ref("flip rate 0.2 held-out accuracy 68.2% true rewards (the ceiling, up to sampling noise) 71.1% "
        "fitted order vs the true order 89.4%", float(_RM["flip"]),
        _NOISE["heldout"], _NOISE["ceiling"], _NOISE["order"]),
]


def _refs_length(beta: float) -> list[Ref]:
    """The length-bias tab at β: its caption (the same at every β) and readouts, by logsumexp over the five answers."""
    lengths = ref.LENGTH_TOY_LENGTHS
    large = max(ref._beta_grid())  # the slider's largest β: π* is π_ref to three digits
    at = {f: ref.length_bias(beta, f) for f in ("mean_length", "true_reward", "proxy_reward", "kl")}
    return [
        Ref("over five answers of 50 to 800 tokens. At a large β the policy stays with the SFT model (178 tokens on "
            "average, quality 0.555). As β falls the answers grow; the true quality peaks at 0.683 near β = 0.3, and "
            "at β = 0.01 the policy writes the 800-token answer, whose quality 0.50 is below where it started",
            min(lengths), max(lengths), ref.length_bias(large, "mean_length"), ref.length_bias(large, "true_reward"),
            ref.length_bias_best("true_reward"), ref.length_bias_best("best_beta"), GIVEN,
            ref.length_bias(0.01, "mean_length"), ref.length_bias(0.01, "true_reward")),
        Ref('a 6B "gold" reward model', "Gao et al. 2022's gold reward model (their 6B model; a source's number)"),
        Ref("Mean length under π*: 245 tokens", at["mean_length"]),
        Ref("True quality: 0.635", at["true_reward"]),
        Ref("Proxy reward: 2.884", at["proxy_reward"]),
        Ref("KL(π* ‖ π_ref): 0.110 nats", at["kl"]),
        Ref("Best β for true quality: 0.3", ref.length_bias_best("best_beta")),
        Ref("Best β for true quality help: quality 0.683", ref.length_bias_best("true_reward")),
        Ref("SFT model: 178 tokens", sum(p * n for p, n in zip(ref.LENGTH_TOY_PI_REF, lengths, strict=True))),
        Ref("SFT model's quality 0.555", sum(p * q for p, q in zip(ref.LENGTH_TOY_PI_REF, ref.LENGTH_TOY_QUALITY,
                                                                   strict=True))),
        Ref("β = 1: 245 tokens, true quality 0.635, KL 0.110 nats", beta, at["mean_length"], at["true_reward"],
            at["kl"]),
    ]


_B = DPO_PRESETS["worked_b"]
_RM_DPO = _refs_dpo(_B.logp_w, _B.logp_l, _B.ref_logp_w, _B.ref_logp_l, _B.beta)

RM_DPO = [
    Ref("Worked example B: $\\hat r_w = 0.2$, $\\hat r_l = -0.1$, loss $-\\log\\sigma(0.3) = 0.554$",
        _RM_DPO["reward_w"], _RM_DPO["reward_l"], _RM_DPO["margin"], _RM_DPO["loss"]),
    Ref("Implicit reward r̂_w: +0.200", _RM_DPO["reward_w"]),
    Ref("Implicit reward r̂_l: −0.100", _RM_DPO["reward_l"]),
    # the Bradley-Terry loss of the two implicit rewards, written as the reward model's loss: -log σ(r_w - r_l)
    Ref("Bradley-Terry −log σ(r̂_w − r̂_l): 0.554",
        float(-np.log(special.expit(_RM_DPO["reward_w"] - _RM_DPO["reward_l"])))),
    Ref("DPO loss: 0.554", _RM_DPO["loss"]),
    Ref("margin 0.300 loss 0.554, weight 0.426", _RM_DPO["margin"], _RM_DPO["loss"], _RM_DPO["weight"]),
    Ref(DPO_FIGURE, FORMULA),
]

_C3 = float(_preset(RMS, "Add a constant: c = 3 changes nothing")["rm_shift"])

TABLES["pages/10_Reward_model.py"] = {
    "defaults": RM_DEFAULTS,
    "tab Length bias": _refs_length(float(_RM["rm_beta"])),
    "tab DPO": RM_DPO,
    "preset Add a constant: c = 3 changes nothing": [*_refs_rm_fit(_C3)[1:], Ref("fitted reward + 3", _C3)],
    "preset Length hacking: a loose leash, β = 0.01":
        _refs_length(float(_preset(RMS, "Length hacking: a loose leash, β = 0.01")["rm_beta"])),
    "preset Length bias: the best β, 0.3": _refs_length(float(_preset(RMS, "Length bias: the best β, 0.3")["rm_beta"])),
}
# ============================================================================ 12. Loss and units
_TRAIN_TEXT = (Path(__file__).resolve().parents[1] / "core" / "data" / "lesson_text.txt").read_text(encoding="utf-8")
_HELDOUT = v_loss_units.HELDOUT  # the page's default text to score (input data)


def _byte_model_bits_per_byte(train: str, text: str, order: int = 4) -> float:
    """Bits per byte of the page's byte model, written out: p(b | context) = 0.02/256 + Σ_o λ_o p_o(b), orders
    o = 0..3 with λ_o ∝ 2^o summing to 0.98, p_o the relative frequency after the last o bytes (1/256 where that
    context was never seen or is cut by the start of the text)."""
    data, seen = train.encode("utf-8"), {}
    for o in range(order):
        for j in range(o, len(data)):
            key = (o, data[j - o : j])
            seen.setdefault(key, [0] * 256)[data[j]] += 1
    lam = [0.98 * 2**o / (2**order - 1) for o in range(order)]
    bits, ev = 0.0, text.encode("utf-8")
    for j, b in enumerate(ev):
        p = 0.02 / 256
        for o in range(order):
            row = seen.get((o, ev[j - o : j])) if o <= j else None
            p += lam[o] * (row[b] / sum(row) if row else 1 / 256)
        bits -= math.log2(p)
    return bits / len(ev)


_BPB = _byte_model_bits_per_byte(_TRAIN_TEXT, _HELDOUT)
_N_BYTES = len(_HELDOUT.encode("utf-8"))


def _bpe_tokens(train: str, text: str, vocab_size: int = 800) -> int:
    """Tokens of ``text`` under a byte-level BPE of ``vocab_size`` entries trained on ``train`` with Hugging Face's
    tokenizers (its BpeTrainer over GPT-2's byte alphabet, no special tokens), the construction the page states."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[], show_progress=False)
    tok.train_from_iterator([train], trainer=trainer)
    return len(tok.encode(text).ids)


_N_BPE = _bpe_tokens(_TRAIN_TEXT, _HELDOUT)


def _refs_merges(k: int) -> list[Ref]:
    """The BPE merges figure's readout after k merges: the tokens of a BPE trained to 256 + k entries, and the one
    byte model's total T·L = bpb · n_bytes · ln 2 over them (perplexity per token 2^(bpb · n_bytes / T))."""
    T = _bpe_tokens(_TRAIN_TEXT, _HELDOUT, 256 + k)
    return [
        Ref(f"{k} merges (vocabulary {256 + k}) {T} tokens, {_N_BYTES / T:.2f} bytes each perplexity per token "
            f"{2 ** (_BPB * _N_BYTES / T):.2f} bits per byte {_BPB:.4f} (one byte-level model: the cut does not "
            f"change it) merge {k}:",
            GIVEN, 256 + k, T, _N_BYTES / T, 2 ** (_BPB * _N_BYTES / T), _BPB, GIVEN),
        Ref("BPE merges learned (vocabulary 256 + merges)", FORMULA),
    ]


def _refs_units(values: dict) -> list[Ref]:
    V, P, R = int(values["vocab_size"]), int(values["prompt_len"]), int(values["resp_len"])
    return [
        Ref("Uniform loss ln V: 10.82 nats", ref.uniform_loss(V)),
        Ref("Uniform loss ln V help: perplexity e^(ln V) = V = 50,000", V),
        Ref("Unmasked SFT loss weight on the prompt: 97.6%", ref.sft_prompt_share_pct(P, R, False)),
        Ref("Unmasked SFT loss weight on the prompt help: 2,000 / (2,000 + 50) tokens", P, P, R),
    ]


# the tiny GPT's held-out loss: recomputed with val_loss_numpy (1 s) once, by the test this names
_TINY_GPT = "test_page_loss_units.py::test_the_tiny_gpt_bits_per_byte_is_its_recomputed_held_out_loss"


def _tiny_gpt_heldout_bytes() -> int:
    """The held-out split's size, the split's rule written out: 4,096-byte chunks, every 10th (i % 10 == 9)."""
    n = (Path(__file__).resolve().parents[1] / "core" / "data" / "tiny_corpus.txt").stat().st_size
    return sum(min(4096, n - start) for start in range(9 * 4096, n, 10 * 4096))


LOSS_DEFAULTS = [
    *_refs_units(LU.defaults()),
    Ref("Bits per byte, one byte model: 2.3121", _BPB),
    # one total loss T·L = bpb · n_bytes · ln 2 over each tokenizer's T tokens: e^L = 2^(bpb · n_bytes / T)
    Ref("Perplexity, one byte model: 4.97 to 142.9", 2**_BPB, 2 ** (_BPB * _N_BYTES / _N_BPE)),
    Ref("Perplexity, one byte model help: 740 byte tokens to 239 bpe-800 tokens", _N_BYTES, _N_BPE, NAME),
    Ref("Perplexity, bigram models: 9.6 to 230", BIGRAMS),
    Ref("Perplexity, bigram models help: one bigram model per tokenizer: a factor of 24", 230 / 9.6),  # the readout's
    Ref("Bits per byte, bigram models: 2.36 to 3.29", BIGRAMS),
    Ref("Bits per byte, bigram models help: one bigram model per tokenizer: a factor of 1.4", 3.29 / 2.36),
    Ref("bits per byte, T·L / (n_bytes ln 2)", FORMULA),
    *_refs_merges(int(LU.defaults()["bpe_merges"])),
    Ref("Bits per byte, tiny GPT (its own held-out text): 2.262", _TINY_GPT),
    Ref("Bits per byte, tiny GPT (its own held-out text) help: 1.568 nats per byte / ln 2", _TINY_GPT, FORMULA),
    Ref("every 10th 4 KiB (4,096-byte) chunk of that corpus (16,384 bytes, each byte predicted from the bytes before "
        "it in its 128-byte window)", "the split's rule, chunk i held out when i % 10 == 9 (core.tiny_gpt.split_bytes)",
        "the chunk size, 4 KiB (core.tiny_gpt.CHUNK_BYTES)", "the chunk size, 4,096 bytes (core.tiny_gpt.CHUNK_BYTES)",
        _tiny_gpt_heldout_bytes(), "the tiny GPT's context (its config)"),
]


def _cross_document_pairs(lens: list[int]) -> int:
    """Causal query-key pairs (key ≤ query) of one packed row whose key lies in an earlier document."""
    n = sum(lens)
    return n * (n + 1) // 2 - sum(k * (k + 1) // 2 for k in lens)


_DOCS = [int(x) for x in LU.defaults()["doc_lens"].split(",")]


def _first_fit_waste_pct(lengths: np.ndarray, row: int) -> float:
    """Packing into rows of ``row`` tokens, each sequence into the first row with room (a longer one split into full
    rows first): the share of the slots left empty."""
    rows: list[int] = []  # tokens used per row
    for n in (int(x) for x in lengths):
        full, n = divmod(n, row) if n > row else (0, n)
        if full and n == 0:
            full, n = full - 1, row
        rows += [row] * full
        k = next((i for i, used in enumerate(rows) if used + n <= row), None)
        if k is None:
            rows.append(n)
        else:
            rows[k] += n
    return 100 * (1 - int(lengths.sum()) / (len(rows) * row))


_PAD = LU.defaults()

LOSS_PACKING = [
    Ref("Left: naive packing lets 74 query-key pairs cross a document boundary", _cross_document_pairs(_DOCS)),
    Ref("Positions restart per document: [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 0, 1, 2, 3, 4]",
        *[float(i) for k in _DOCS for i in range(k)]),
]
LOSS_PADDING = [
    Ref("512 seeded log-normal lengths (median 300 tokens). Padding to the longest of each batch of 16 wastes 68.5% of "
        "the slots; sorting by length first (bucketing) 6.3%; packing into rows of 2,048 tokens 1.4%.",
        len(PAD_LENGTHS), "the median of the page's log-normal (its input)", int(_PAD["pad_batch"]),
        _padding_waste_pct(PAD_LENGTHS, int(_PAD["pad_batch"])),
        _padding_waste_pct(np.sort(PAD_LENGTHS), int(_PAD["pad_batch"])), int(_PAD["pack_len"]),
        _first_fit_waste_pct(PAD_LENGTHS, int(_PAD["pack_len"]))),
]
_LESSON = _preset(LU, "Lesson: 2,000-token prompt, 50-token answer, unmasked")
_LLAMA3 = _preset(LU, "Llama 3's vocabulary: V = 128,256")

TABLES["pages/12_Loss_and_units.py"] = {
    "defaults": LOSS_DEFAULTS,
    "tab SFT mask": [Ref("0.0% of the loss on prompt tokens (equal per-token losses)",
                         ref.sft_prompt_share_pct(int(_PAD["prompt_len"]), int(_PAD["resp_len"]),
                                                  bool(_PAD["sft_mask"])))],
    "tab Packing": LOSS_PACKING,
    "tab Padding": LOSS_PADDING,
    "preset Lesson: 2,000-token prompt, 50-token answer, unmasked": [
        Ref("97.6% of the loss on prompt tokens (equal per-token losses)",
            ref.sft_prompt_share_pct(int(_LESSON["prompt_len"]), int(_LESSON["resp_len"]), bool(_LESSON["sft_mask"])))],
    "preset Llama 3's vocabulary: V = 128,256": _refs_units(_LLAMA3)[:2],
}
# fmt: on
