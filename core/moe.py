"""Mixture of experts: top-k routing with a capacity limit, the balance losses, DeepSeek-V3's bias balancing, and
what shared and fine-grained experts cost in parameters and in expert-parallel traffic.

The lesson context is seed 002, A2.8 (mixture of experts) and A3.3 (DeepSeek-V3): a router scores each token
against E experts and sends it to its top k; parameters grow with E while the FLOPs per token stay about fixed.

Softmax routing (Shazeer et al. 2017; Switch Transformer, Fedus, Zoph and Shazeer 2021/JMLR 2022; Mixtral, Jiang
et al. 2024)::

    p_t = softmax(z_t)                      z_t: the router logits of token t, (E,)
    S_t = the k experts with the largest p_{t,e}
    gate_{t,e} = p_{t,e}                    raw (Switch top-1)
               = p_{t,e} / sum_{j in S_t} p_{t,j}   renormalised over the selected experts (Mixtral's
                                            softmax over the top-k logits is the same thing; GShard's top-2 too)
    capacity C = ceil(capacity_factor · T · k / E)   slots per expert (Switch eq. 3 has T/E · factor for k = 1 and
                                            states no rounding; this module rounds up)

An expert that receives more than C assignments processes the first C in a priority order and drops the rest: the
token then gets nothing from that expert (its other experts and the residual stream still carry it). Two orders
are offered. ``"token"``: token by token, each token's choices best first (the order core/serving.py has used).
``"choice"``: every token's first choice in token order, then every second choice, and so on; this is how GShard's
top-2 algorithm fills the buffers as far as I recall its pseudo-code (Lepikhin et al. 2020, Algorithm 1/2), so
treat the attribution as unverified. For k = 1 both are Switch's token order. Other rules exist (V-MoE's batch
prioritised routing, Riquelme et al. 2021, orders by router score) and are not implemented here.

The balance loss (Switch eq. 4-6, alpha = 1e-2 there)::

    L_aux = E · sum_e f_e · P_e,   P_e = mean_t p_{t,e},   f_e = share of dispatches that go to expert e

For k = 1, f_e is the fraction of tokens sent to e, and L_aux = 1 when f and P are both uniform. For k > 1 two
normalisations are in use. ``form="switch"``: f_e = count_e / (T k) sums to 1, so L_aux = 1 at uniform routing
(core/serving.py's version; also DeepSeek-V3's eq. 18 normalisation, see below). ``form="hf_topk"``: Hugging
Face's ``load_balancing_loss_func`` (transformers, modeling_mixtral.py) averages the one-hot of the top-k
selections over tokens only, so f_e = count_e / T sums to k and L_aux = k at uniform routing (it also pools all
layers' router logits into one T before computing). The gradient reaches the router only through P: f comes from
an argmax. "Minimised at uniform routing" holds when f = P (then E sum f_e^2 >= 1); with f != P the value can fall
below 1 (the tests build such a case), so read 1 as the value at balance, not as a strict lower bound.

DeepSeek-V3's auxiliary-loss-free balancing (DeepSeek-AI 2024, arXiv 2412.19437, §2.1.2, eq. 12-20; the method is
Wang et al. 2024, arXiv 2408.15664)::

    s_{t,i} = sigmoid(u_t · e_i)                                         affinity (eq. 15)
    S_t     = the k experts with the largest s_{t,i} + b_i               the bias only selects (eq. 16)
    g_{t,i} = s_{t,i} / sum_{j in S_t} s_{t,j}   for i in S_t            gates from the UNBIASED affinities (eq. 13)
    after each step: b_i -= gamma if expert i is overloaded, b_i += gamma if underloaded
                     (here: b_i += gamma · sign(mean load - load_i), the rule of Wang et al. 2024)

with gamma = 0.001 for the first 14.3T training tokens and 0 for the last 500B (§4.2, as I recall it). The
complementary sequence-wise balance loss (eq. 17-20; alpha = 1e-4 in §4.2, which seed 002 also quotes)::

    L_Bal = alpha · sum_i f_i P_i
    f_i   = E / (k T) · sum_t 1[i in S_t]        (T: the tokens of one sequence)
    s'_{t,i} = s_{t,i} / sum_j s_{t,j},   P_i = mean_t s'_{t,i}

so L_Bal = alpha at uniform routing, and L_Bal / alpha is exactly the ``form="switch"`` loss with the normalised
affinities as probabilities. Uncertain: eq. 18 as I remember it writes the indicator with the top-k of
the affinities s; whether the training code counts the biased selection S_t is not stated in what I recall, so
:func:`sequence_balance_loss` takes the selection from the caller. The released inference code
(deepseek-ai/DeepSeek-V3, inference/model.py, class Gate) also limits each token to the best 4 of 8 expert groups
(group score: the sum of the two largest biased affinities in the group; it plays the part of the report's
node-limited routing, at most 4 nodes per token) and multiplies the gates by route_scale = 2.5 (config_671B.json);
both are options here. DeepSeek-V3 drops no tokens in training or inference (§2.1.2): :func:`bias_balanced_routing`
has no capacity limit, and a DeepSeek-like preset of :func:`route_tokens` needs ``capacity_factor=None``.

Shared and fine-grained experts (DeepSeekMoE, Dai et al. 2024, arXiv 2401.06066, §3): every token also passes
through n_shared always-on experts, and splitting each expert into m narrower ones (width d_expert / m, top m k)
keeps parameters and FLOPs while the number of expert combinations per token grows from C(E, k) to C(m E, m k).

Everything here is numpy (float64) and never imports torch: the toy sizes need no accelerator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.arrays import as_float_array

Priority = Literal["token", "choice"]
PRIORITIES: tuple[str, ...] = ("token", "choice")
AuxForm = Literal["switch", "hf_topk"]
AUX_FORMS: tuple[str, ...] = ("switch", "hf_topk")

# DeepSeek-V3's published MoE layer (DeepSeek-AI 2024 §4.2; the released inference/configs/config_671B.json:
# dim 7168, moe_inter_dim 2048, n_routed_experts 256, n_shared_experts 1, n_activated_experts 8, n_expert_groups 8,
# n_limited_groups 4, route_scale 2.5, score_func sigmoid; 58 of its 61 layers are MoE layers)
DEEPSEEK_V3_LAYER: dict[str, int | float] = {
    "d_model": 7168,
    "d_expert": 2048,
    "n_routed": 256,
    "n_shared": 1,
    "top_k": 8,
    "n_groups": 8,
    "top_groups": 4,
    "route_scale": 2.5,
}


# ---------------------------------------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------------------------------------


def _scores_2d(x: ArrayLike, name: str) -> NDArray[np.float64]:
    a = as_float_array(x, name)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"{name} must be a (tokens, experts) array with at least one of each; got shape {a.shape}")
    return a


def _check_top_k(top_k: int, n_experts: int) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int | np.integer) or not 1 <= top_k <= n_experts:
        raise ValueError(f"top_k must be a whole number between 1 and the {n_experts} experts, got {top_k!r}")
    return int(top_k)


def _check_positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def _check_nonneg_real(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return float(value)


def _expert_index(expert_index: ArrayLike, n_tokens: int, n_experts: int) -> NDArray[np.int64]:
    """(T, k) whole expert indices in [0, E), one row per token, no expert twice in a row."""
    idx = np.asarray(expert_index)
    if idx.ndim == 1:
        idx = idx[:, None]
    if idx.ndim != 2 or idx.shape[0] != n_tokens or idx.shape[1] < 1:
        raise ValueError(f"expert_index must have shape ({n_tokens}, k) (or ({n_tokens},) for top-1); got {idx.shape}")
    if not np.issubdtype(idx.dtype, np.integer):
        if not np.issubdtype(idx.dtype, np.floating) or np.any(idx != np.round(idx)):
            raise ValueError("expert_index must hold whole expert numbers")
    idx = idx.astype(np.int64)
    if idx.min() < 0 or idx.max() >= n_experts:
        raise ValueError(f"expert indices must lie in [0, {n_experts}), got {int(idx.min())}..{int(idx.max())}")
    s = np.sort(idx, axis=1)  # (T, k)
    if np.any(s[:, 1:] == s[:, :-1]):
        raise ValueError("a token selects each expert at most once (a row of expert_index repeats an expert)")
    return idx


# ---------------------------------------------------------------------------------------------------------------
# Softmax routing with a capacity limit
# ---------------------------------------------------------------------------------------------------------------


def softmax_router_probs(logits: ArrayLike) -> NDArray[np.float64]:
    """Router probabilities p_t = softmax(z_t) over the experts, row by row ((T, E) -> (T, E))."""
    z = _scores_2d(logits, "logits")
    # softmax shifted by the row maximum: exp never overflows
    e = np.exp(z - z.max(axis=1, keepdims=True))  # (T, E)
    return e / e.sum(axis=1, keepdims=True)


def expert_capacity(n_tokens: int, n_experts: int, top_k: int, capacity_factor: float | None) -> int:
    """Slots per expert: C = ceil(capacity_factor · T · k / E) (Switch eq. 3, with k assignments per token).

    ``None``: no limit (dropless routing, as in DeepSeek-V3, DeepSeek-AI 2024 §2.1.2): T slots, since a token
    picks an expert at most once. The same results as core/serving.py's version.
    """
    n_tokens = _check_positive_int("n_tokens", n_tokens)
    n_experts = _check_positive_int("n_experts", n_experts)
    top_k = _check_top_k(top_k, n_experts)
    if capacity_factor is None:
        return n_tokens
    if isinstance(capacity_factor, bool) or not isinstance(capacity_factor, int | float | np.number):
        raise ValueError(f"the capacity factor must be a number > 0 or None, got {capacity_factor!r}")
    if not math.isfinite(capacity_factor) or capacity_factor <= 0:
        raise ValueError(f"the capacity factor must be a finite number > 0, got {capacity_factor!r}")
    # C = ceil(cf T k / E); the 1e-9 keeps a product such as 1.1 · 100 / 11 = 10.000000000000002 at 10
    return math.ceil(capacity_factor * n_tokens * top_k / n_experts - 1e-9)


def _queue_positions(order: NDArray[np.int64]) -> NDArray[np.int64]:
    """For a sequence of expert ids (in priority order): how many earlier entries name the same expert."""
    ranked = np.argsort(order, kind="stable")  # entries grouped by expert, priority order kept inside a group
    grouped = order[ranked]  # (n,)
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])  # (groups,)
    sizes = np.diff(np.r_[starts, grouped.size])  # (groups,)
    within = np.arange(grouped.size) - np.repeat(starts, sizes)  # (n,) 0, 1, 2, ... inside each group
    position = np.empty_like(within)
    position[ranked] = within
    return position


@dataclass(frozen=True)
class Routing:
    """One batch through a top-k softmax router with a capacity limit."""

    probs: NDArray  # (T, E) router softmax
    experts: NDArray  # (T, k) chosen experts, best first
    load: NDArray  # (E,) assignments each expert received (before dropping)
    kept: NDArray  # (T, k) bool: assignment processed (False = over capacity, the token skips that expert)
    capacity: int  # slots per expert
    aux_loss: float  # Switch form: E sum_e f_e P_e, f normalised to sum 1 (1 at uniform routing)
    gates: NDArray  # (T, k) gate of each selected expert before dropping (raw or renormalised)
    renormalized: bool = False  # gates renormalised over the k selected experts
    priority: str = "token"  # the order in which experts fill their slots

    @property
    def dropped(self) -> int:
        """Assignments dropped for lack of capacity."""
        return int((~self.kept).sum())

    @property
    def processed(self) -> NDArray:
        """(E,) assignments each expert processed (at most ``capacity``)."""
        return np.bincount(self.experts[self.kept], minlength=self.load.size)

    @property
    def dropped_tokens(self) -> int:
        """Tokens that lost at least one of their k experts."""
        return int((~self.kept).any(axis=1).sum())

    @property
    def kept_gates(self) -> NDArray:
        """(T, k) the weights the expert outputs are combined with: the gate where kept, 0 where dropped (a
        dropped expert's share is not handed to the others)."""
        return np.where(self.kept, self.gates, 0.0)


def route_tokens(
    logits: ArrayLike,
    top_k: int = 1,
    capacity_factor: float | None = 1.25,
    *,
    renormalize: bool = False,
    priority: Priority = "token",
) -> Routing:
    """Route T tokens (rows of ``logits``, (T, E)) to their top-k experts under a capacity limit.

    Probabilities p = softmax(z); each token's k most probable experts (ties to the lower index); each expert
    keeps at most C = :func:`expert_capacity` assignments, taken in ``priority`` order ("token": token by token,
    each token's choices best first; "choice": all first choices in token order, then all second choices, ...);
    the rest are dropped. ``renormalize``: gates p_e / sum_{j in S_t} p_j (Mixtral, GShard top-2) instead of the
    raw p_e (Switch top-1). ``capacity_factor=None``: no limit, nothing dropped (DeepSeek-V3 is dropless).

    With the defaults the fields core/serving.py's ``Routing`` had are the same numbers as there.
    """
    probs = softmax_router_probs(logits)  # (T, E)
    T, E = probs.shape
    top_k = _check_top_k(top_k, E)
    if priority not in PRIORITIES:
        raise ValueError(f"priority {priority!r}: expected one of {', '.join(PRIORITIES)}")
    experts = np.argsort(-probs, axis=1, kind="stable")[:, :top_k]  # (T, k) best first
    chosen = np.take_along_axis(probs, experts, axis=1)  # (T, k)
    # gate = p_e, or p_e / sum_{j in S_t} p_j  (the sum is >= the largest probability >= 1/E: no division by 0)
    gates = chosen / chosen.sum(axis=1, keepdims=True) if renormalize else chosen  # (T, k)
    cap = expert_capacity(T, E, top_k, capacity_factor)
    if priority == "token":
        position = _queue_positions(experts.ravel()).reshape(T, top_k)  # (T, k) row-major: token, then rank
    else:
        position = _queue_positions(experts.T.ravel()).reshape(top_k, T).T  # (T, k) rank, then token
    return Routing(
        probs=probs,
        experts=experts,
        load=np.bincount(experts.ravel(), minlength=E),
        kept=position < cap,
        capacity=cap,
        aux_loss=switch_aux_loss(probs, experts),
        gates=gates,
        renormalized=bool(renormalize),
        priority=priority,
    )


def switch_aux_loss(
    router_probs: ArrayLike, expert_index: ArrayLike, n_experts: int | None = None, form: AuxForm = "switch"
) -> float:
    """The Switch Transformer balance loss E · sum_e f_e · P_e (Fedus et al. 2022, eq. 4-6), without its alpha.

    ``router_probs`` (T, E): each token's router probabilities (P_e is their mean over tokens); ``expert_index``
    (T, k) or (T,): the experts each token was dispatched to. ``form="switch"``: f_e = count_e / (T k) (sums to 1;
    the value is 1 at uniform routing for any k; the same as core/serving.py). ``form="hf_topk"``: f_e = count_e / T
    as in Hugging Face's ``load_balancing_loss_func`` (sums to k; the value is k at uniform routing). The two agree
    for k = 1. ``n_experts``, when given, must equal E (a check).
    """
    P = _scores_2d(router_probs, "router_probs")  # (T, E)
    T, E = P.shape
    if n_experts is not None and n_experts != E:
        raise ValueError(f"n_experts = {n_experts!r} but router_probs has {E} columns")
    if form not in AUX_FORMS:
        raise ValueError(f"form {form!r}: expected one of {', '.join(AUX_FORMS)}")
    idx = _expert_index(expert_index, T, E)  # (T, k)
    counts = np.bincount(idx.ravel(), minlength=E)  # (E,)
    # f_e = count_e / (T k)  (switch)   or   count_e / T  (hf_topk)
    f = counts / (idx.size if form == "switch" else T)  # (E,)
    # L = E sum_e f_e P_e,  P_e = mean_t p_{t,e}
    return float(E * np.sum(f * P.mean(axis=0)))


def toy_router_logits(n_tokens: int, n_experts: int, skew: float = 0.0, seed: int = 0) -> NDArray[np.float64]:
    """Seeded router logits (T, E): standard Gaussian noise plus ``skew`` · (E-1-e)/(E-1), which favours the low
    experts (skew 0: balanced in expectation; a large skew collapses the routing onto expert 0). The same numbers as
    core/serving.py's version."""
    n_tokens = _check_positive_int("n_tokens", n_tokens)
    if _check_positive_int("n_experts", n_experts) < 2:
        raise ValueError("need at least two experts")
    if not math.isfinite(skew):
        raise ValueError(f"skew must be a finite number, got {skew!r}")
    rng = np.random.default_rng(seed)
    offset = skew * (n_experts - 1 - np.arange(n_experts)) / (n_experts - 1)  # (E,)
    return rng.standard_normal((n_tokens, n_experts)) + offset


# ---------------------------------------------------------------------------------------------------------------
# DeepSeek-V3: sigmoid affinities, a selection-only bias, the bias update and the sequence-wise loss
# ---------------------------------------------------------------------------------------------------------------


def sigmoid_affinities(logits: ArrayLike) -> NDArray[np.float64]:
    """s = sigmoid(u · e_i) elementwise ((T, E) -> (T, E); DeepSeek-V3 eq. 15), computed without overflow."""
    z = _scores_2d(logits, "logits")
    # sigmoid(z) = exp(-logaddexp(0, -z)): no exp of a large positive number
    return np.exp(-np.logaddexp(0.0, -z))


@dataclass(frozen=True)
class BiasRouting:
    """One batch through DeepSeek-V3's router: the bias picks the experts, the affinities weight them."""

    affinities: NDArray  # (T, E) s_{t,i} in (0, 1)
    experts: NDArray  # (T, k) selected by s + b, best first
    gates: NDArray  # (T, k) s of the selected experts normalised over them, times route_scale
    load: NDArray  # (E,) tokens each expert received (dropless: all processed)


def bias_balanced_routing(
    affinities_or_logits: ArrayLike,
    bias: ArrayLike,
    top_k: int,
    *,
    inputs: Literal["logits", "affinities"] = "logits",
    n_groups: int = 1,
    top_groups: int | None = None,
    route_scale: float = 1.0,
) -> BiasRouting:
    """DeepSeek-V3's routing (DeepSeek-AI 2024 §2.1.2, eq. 13-16): select by s + b, gate by s.

    ``inputs="logits"``: the rows are router logits u_t · e_i and s = sigmoid of them; ``"affinities"``: the rows
    are s itself (each > 0). ``bias`` (E,): b_i, added only to choose the top-k. Gates g = s_sel / sum s_sel
    (normalised over the selected experts, from the UNBIASED affinities) times ``route_scale`` (2.5 in DeepSeek-V3's
    released config; 1 keeps the gates summing to 1). ``n_groups`` > 1: the E experts form n_groups equal groups
    of consecutive indices, a group scores the sum of its two largest s + b, and only the ``top_groups`` best
    groups are eligible (released inference code, class Gate; the report's node-limited routing).
    """
    if inputs == "logits":
        s = sigmoid_affinities(affinities_or_logits)  # (T, E)
    elif inputs == "affinities":
        s = _scores_2d(affinities_or_logits, "affinities")
        if np.any(s <= 0):
            raise ValueError("affinities must be > 0 (sigmoid outputs); pass inputs='logits' for raw scores")
    else:
        raise ValueError(f"inputs {inputs!r}: expected 'logits' or 'affinities'")
    T, E = s.shape
    b = as_float_array(bias, "bias")
    if b.shape != (E,):
        raise ValueError(f"bias must have one entry per expert, shape ({E},); got {b.shape}")
    top_k = _check_top_k(top_k, E)
    route_scale = _check_nonneg_real("route_scale", route_scale)
    if route_scale == 0:
        raise ValueError("route_scale must be > 0")
    n_groups = _check_positive_int("n_groups", n_groups)
    biased = s + b  # (T, E) used only to choose
    if n_groups > 1:
        if E % n_groups:
            raise ValueError(f"{E} experts do not split into {n_groups} equal groups")
        per = E // n_groups
        top_groups = n_groups if top_groups is None else _check_positive_int("top_groups", top_groups)
        if top_groups > n_groups or top_groups * per < top_k:
            raise ValueError(f"top_groups must be <= {n_groups} and leave at least top_k = {top_k} experts eligible")
        grouped = biased.reshape(T, n_groups, per)  # (T, G, E/G)
        # group score = the sum of the two largest s + b in the group (one when a group has a single expert)
        best_two = -np.sort(-grouped, axis=2)[:, :, : min(2, per)]  # (T, G, <=2)
        group_score = best_two.sum(axis=2)  # (T, G)
        keep = np.argsort(-group_score, axis=1, kind="stable")[:, :top_groups]  # (T, G_top)
        allowed = np.zeros((T, n_groups), dtype=bool)
        np.put_along_axis(allowed, keep, True, axis=1)
        biased = np.where(np.repeat(allowed, per, axis=1), biased, -np.inf)  # (T, E)
    elif top_groups is not None and top_groups != 1:
        raise ValueError("top_groups needs n_groups > 1")
    experts = np.argsort(-biased, axis=1, kind="stable")[:, :top_k]  # (T, k) best s + b first
    chosen = np.take_along_axis(s, experts, axis=1)  # (T, k) UNBIASED affinities
    # g_{t,i} = s_{t,i} / sum_{j in S_t} s_{t,j}  (eq. 13, 16), times route_scale
    gates = route_scale * chosen / chosen.sum(axis=1, keepdims=True)  # (T, k)
    return BiasRouting(affinities=s, experts=experts, gates=gates, load=np.bincount(experts.ravel(), minlength=E))


def update_bias(bias: ArrayLike, loads: ArrayLike, gamma: float) -> NDArray[np.float64]:
    """One step of the bias update: b_i + gamma · sign(mean load - load_i) (DeepSeek-AI 2024 §2.1.2: lower an
    overloaded expert's bias by gamma, raise an underloaded one's; the sign rule is Wang et al. 2024's). An expert
    exactly at the mean keeps its bias. Returns a new array."""
    b = as_float_array(bias, "bias")
    c = as_float_array(loads, "loads")
    if b.ndim != 1 or c.shape != b.shape:
        raise ValueError(f"bias and loads must be (E,) arrays of one shape; got {b.shape} and {c.shape}")
    if np.any(c < 0):
        raise ValueError("loads must be >= 0")
    gamma = _check_nonneg_real("gamma", gamma)
    # b_i <- b_i + gamma sign(mean_j c_j - c_i)
    return b + gamma * np.sign(c.mean() - c)


def load_imbalance(loads: ArrayLike) -> float:
    """max_i load_i / mean_i load_i: 1 when balanced, E when one expert gets everything. (Wang et al. 2024's MaxVio
    is this minus 1.)"""
    c = as_float_array(loads, "loads")
    if c.ndim != 1 or c.size < 1 or np.any(c < 0) or c.sum() <= 0:
        raise ValueError("loads must be a non-empty (E,) array of counts >= 0 with a positive total")
    return float(c.max() / c.mean())


def sequence_balance_loss(affinities: ArrayLike, expert_index: ArrayLike, alpha: float = 1e-4) -> float:
    """DeepSeek-V3's complementary sequence-wise balance loss (eq. 17-20 as recalled; see the module docstring):
    alpha · sum_i f_i P_i, f_i = E / (k T) · (times i was selected in the sequence), P_i = the mean over the
    sequence of s_{t,i} / sum_j s_{t,j}. Equals alpha at uniform routing.

    ``affinities`` (T, E) for one sequence or (B, T, E) for B sequences (the loss is then averaged over them);
    ``expert_index`` (T, k) or (B, T, k): the selection to count (the caller chooses biased or not). alpha 1e-4 is
    DeepSeek-V3's value (§4.2).
    """
    s = as_float_array(affinities, "affinities")
    idx = np.asarray(expert_index)
    if s.ndim == 2:
        s, idx = s[None], (idx[:, None] if idx.ndim == 1 else idx)[None]
    if s.ndim != 3 or s.shape[1] < 1 or s.shape[2] < 1:
        raise ValueError(f"affinities must be (T, E) or (B, T, E); got shape {np.shape(affinities)}")
    if np.any(s <= 0):
        raise ValueError("affinities must be > 0 (sigmoid outputs)")
    alpha = _check_nonneg_real("alpha", alpha)
    B, T, E = s.shape
    if idx.ndim != 3 or idx.shape[0] != B:
        raise ValueError(f"expert_index must be (T, k) or (B, T, k) matching affinities; got {np.shape(expert_index)}")
    losses = []
    for b in range(B):
        sel = _expert_index(idx[b], T, E)  # (T, k)
        # s'_{t,i} = s_{t,i} / sum_j s_{t,j};  P_i = mean_t s'_{t,i};  f_i = E / (k T) count_i
        # alpha sum_i f_i P_i  =  alpha · E sum_i (count_i / (k T)) P_i: the "switch" form with P from s'
        s_norm = s[b] / s[b].sum(axis=1, keepdims=True)  # (T, E)
        losses.append(switch_aux_loss(s_norm, sel, form="switch"))
    return alpha * float(np.mean(losses))


@dataclass(frozen=True)
class BalanceTrajectory:
    """The bias update run on a fixed skewed router (no training), one fresh batch per step."""

    imbalance: NDArray  # (n,) max/mean load with the bias of that step
    imbalance_without_bias: NDArray  # (n,) the same batch routed with b = 0
    aux_loss: NDArray  # (n,) the switch-form balance loss of the biased selection (1 at balance)
    aux_loss_without_bias: NDArray  # (n,) what an auxiliary loss would see for this router with no bias
    bias: NDArray  # (n + 1, E) the bias before each step, and after the last
    rerouted: NDArray  # (n,) share of the assignments outside the router's own top k (what the bias overrode)


def balance_trajectory(
    n_steps: int = 100,
    n_tokens: int = 512,
    n_experts: int = 16,
    top_k: int = 2,
    skew: float = 2.0,
    gamma: float = 0.01,
    seed: int = 0,
) -> BalanceTrajectory:
    """Run :func:`update_bias` for ``n_steps`` on a skewed sigmoid router and record the load imbalance per step.

    Each step draws a fresh batch of logits from :func:`toy_router_logits` (the same skew: low experts favoured),
    routes it with the current bias (:func:`bias_balanced_routing`), records max/mean load, and updates the bias from
    that step's loads. For comparison, the same batch routed without a bias, and the balance loss (switch form with
    the normalised affinities, i.e. DeepSeek's eq. 17 over the batch with alpha = 1) with and without the bias: the
    router itself never changes, only the bias does. DeepSeek-V3 used gamma = 0.001 over a long run; the default
    0.01 here suits a toy of 100 steps.
    """
    n_steps = _check_positive_int("n_steps", n_steps)
    n_tokens = _check_positive_int("n_tokens", n_tokens)
    n_experts = _check_positive_int("n_experts", n_experts)
    top_k = _check_top_k(top_k, n_experts)
    gamma = _check_nonneg_real("gamma", gamma)
    rng = np.random.default_rng(seed)
    bias = np.zeros(n_experts)
    zero = np.zeros(n_experts)
    history, imb, imb0, aux, aux0, moved = [bias], [], [], [], [], []
    for _ in range(n_steps):
        logits = toy_router_logits(n_tokens, n_experts, skew, seed=int(rng.integers(2**63 - 1)))  # (T, E)
        routed = bias_balanced_routing(logits, bias, top_k)
        plain = bias_balanced_routing(logits, zero, top_k)
        imb.append(load_imbalance(routed.load))
        imb0.append(load_imbalance(plain.load))
        moved.append(_rerouted_share(routed.experts, plain.experts, n_experts))
        s_norm = routed.affinities / routed.affinities.sum(axis=1, keepdims=True)  # (T, E)
        aux.append(switch_aux_loss(s_norm, routed.experts))
        aux0.append(switch_aux_loss(s_norm, plain.experts))
        bias = update_bias(bias, routed.load, gamma)
        history.append(bias)
    return BalanceTrajectory(
        imbalance=np.array(imb),
        imbalance_without_bias=np.array(imb0),
        aux_loss=np.array(aux),
        aux_loss_without_bias=np.array(aux0),
        bias=np.array(history),
        rerouted=np.array(moved),
    )


def _rerouted_share(experts: NDArray, own: NDArray, n_experts: int) -> float:
    """The share of the (T, k) assignments ``experts`` that are not among the same token's ``own`` top k."""
    T = experts.shape[0]
    chosen = np.zeros((T, n_experts), dtype=bool)
    chosen[np.arange(T)[:, None], own] = True  # (T, E) the router's own selection
    return float(1.0 - chosen[np.arange(T)[:, None], experts].mean())


def aux_loss_gradient(logits: ArrayLike, offset: ArrayLike, top_k: int) -> tuple[float, NDArray[np.float64]]:
    """The Switch balance loss of a softmax router with a learned per-expert logit offset c, and its gradient in c.

    p_t = softmax(z_t + c), the top-k of p_t selected, f_e = count_e / (T k) (no gradient: it comes from a top-k),
    P_e = mean_t p_{t,e}, L = E sum_e f_e P_e. The offset stands for the part of the router's weights that sets how
    popular each expert is; the loss trains it through P only, as in Switch (Fedus et al. 2022, eq. 4-6)::

        dL/dc_j = E · mean_t p_{t,j} (f_j - sum_e f_e p_{t,e})      (softmax Jacobian: dp_e/dc_j = p_e (1[e=j] - p_j))

    Returns (L, dL/dc (E,)).
    """
    z = _scores_2d(logits, "logits")  # (T, E)
    c = as_float_array(offset, "offset")
    if c.shape != (z.shape[1],):
        raise ValueError(f"offset must be an (E,) array with E = {z.shape[1]}; got shape {c.shape}")
    top_k = _check_top_k(top_k, z.shape[1])
    p = softmax_router_probs(z + c)  # (T, E)
    T, E = p.shape
    experts = np.argsort(-p, axis=1, kind="stable")[:, :top_k]  # (T, k)
    # f_e = count_e / (T k)
    f = np.bincount(experts.ravel(), minlength=E) / (T * top_k)  # (E,)
    # L = E sum_e f_e P_e
    loss = float(E * np.sum(f * p.mean(axis=0)))
    # dL/dc_j = E mean_t p_{t,j} (f_j - p_t . f)
    grad = E * np.mean(p * (f[None, :] - (p @ f)[:, None]), axis=0)  # (E,)
    return loss, grad


@dataclass(frozen=True)
class AuxLossTrajectory:
    """A softmax router's per-expert logit offset trained by the balance loss alone, one fresh batch per step."""

    imbalance: NDArray  # (n,) max/mean load of the top-k selection with that step's offset
    aux_loss: NDArray  # (n,) E sum f P of that selection (1 at balance)
    prob_shift: NDArray  # (n,) mean over tokens of the total variation between p(z + c) and the router's own p(z)
    offset: NDArray  # (n + 1, E) the offset before each step, and after the last
    rerouted: NDArray  # (n,) share of the assignments outside the router's own top k (of p(z))


def aux_loss_trajectory(
    n_steps: int = 100,
    n_tokens: int = 512,
    n_experts: int = 16,
    top_k: int = 2,
    skew: float = 2.0,
    step_size: float = 0.5,
    seed: int = 0,
) -> AuxLossTrajectory:
    """Balance the skewed toy router with the auxiliary loss instead of a bias: gradient descent on a per-expert
    logit offset c (c <- c - step_size · dL/dc, :func:`aux_loss_gradient`), on the same batches as
    :func:`balance_trajectory` with the same arguments (the same seeds drawn in the same order), so that the two
    runs compare one router. ``step_size`` stands for alpha times the learning rate (Switch: alpha = 1e-2); only the
    balance loss trains c here, no language-model loss pulls back.

    ``prob_shift`` is what the bias method leaves at 0: the aux loss balances by changing the router's
    probabilities, so the affinities the gates are made of change with them; the bias only changes which experts
    are selected (the gates are then the unbiased affinities normalised over that selection, so their values can
    change too). ``rerouted`` counts what both methods override: the assignments outside the router's own top k.
    Only the balance loss trains the toy, so neither number is a cost in quality; in real training the loss's
    gradient competes with the language-model loss's (DeepSeek-AI 2024 §2.1.2; Wang et al. 2024).
    """
    n_steps = _check_positive_int("n_steps", n_steps)
    n_tokens = _check_positive_int("n_tokens", n_tokens)
    n_experts = _check_positive_int("n_experts", n_experts)
    top_k = _check_top_k(top_k, n_experts)
    step_size = _check_nonneg_real("step_size", step_size)
    rng = np.random.default_rng(seed)
    c = np.zeros(n_experts)
    history, imb, aux, shift, moved = [c], [], [], [], []
    for _ in range(n_steps):
        logits = toy_router_logits(n_tokens, n_experts, skew, seed=int(rng.integers(2**63 - 1)))  # (T, E)
        loss, grad = aux_loss_gradient(logits, c, top_k)
        p, p0 = softmax_router_probs(logits + c), softmax_router_probs(logits)  # (T, E)
        experts = np.argsort(-p, axis=1, kind="stable")[:, :top_k]  # (T, k)
        own = np.argsort(-p0, axis=1, kind="stable")[:, :top_k]  # (T, k)
        moved.append(_rerouted_share(experts, own, n_experts))
        imb.append(load_imbalance(np.bincount(experts.ravel(), minlength=n_experts)))
        aux.append(loss)
        # TV(p, p0) = 1/2 sum_e |p_e - p0_e|, averaged over tokens
        shift.append(float(0.5 * np.abs(p - p0).sum(axis=1).mean()))
        c = c - step_size * grad
        history.append(c)
    return AuxLossTrajectory(
        imbalance=np.array(imb),
        aux_loss=np.array(aux),
        prob_shift=np.array(shift),
        offset=np.array(history),
        rerouted=np.array(moved),
    )


# ---------------------------------------------------------------------------------------------------------------
# Shared and fine-grained experts: parameters, and the expert-parallel all-to-all
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MoELayerParams:
    """Parameters of one MoE layer (exact ints)."""

    per_expert: int  # 3 D d_e (SwiGLU: gate, up, down) or 2 D d_e
    routed: int  # n_routed experts
    shared: int  # n_shared experts
    router: int  # D x n_routed (+ n_routed bias)
    total: int  # everything resident
    active: int  # what one token uses: top_k routed + shared + the router

    @property
    def active_share(self) -> float:
        """active / total."""
        return self.active / self.total


def moe_layer_params(
    d_model: int,
    d_expert: int,
    n_routed: int,
    top_k: int,
    n_shared: int = 0,
    *,
    gated: bool = True,
    router_bias: bool = False,
) -> MoELayerParams:
    """Parameters of one MoE FFN layer: n_routed routed and n_shared shared experts of width ``d_expert``.

    per expert  3 D d_e (gated, SwiGLU: W_gate, W_up, W_down; no biases) or 2 D d_e (plain two-matrix FFN)
    router      D n_routed (+ n_routed for DeepSeek-V3's selection bias, ``router_bias``)
    total       (n_routed + n_shared) per_expert + router
    active      (top_k + n_shared) per_expert + router    (every token uses the whole router matrix)

    The same count as core.model_spec's ``_moe_layer`` (which adds the bias whenever there are shared experts).
    """
    d_model = _check_positive_int("d_model", d_model)
    d_expert = _check_positive_int("d_expert", d_expert)
    n_routed = _check_positive_int("n_routed", n_routed)
    top_k = _check_top_k(top_k, n_routed)
    if isinstance(n_shared, bool) or not isinstance(n_shared, int | np.integer) or n_shared < 0:
        raise ValueError(f"n_shared must be a whole number >= 0, got {n_shared!r}")
    per = (3 if gated else 2) * d_model * d_expert
    router = d_model * n_routed + (n_routed if router_bias else 0)
    return MoELayerParams(
        per_expert=per,
        routed=n_routed * per,
        shared=int(n_shared) * per,
        router=router,
        total=(n_routed + int(n_shared)) * per + router,
        active=(top_k + int(n_shared)) * per + router,
    )


@dataclass(frozen=True)
class FineGrainedSplit:
    """Each expert cut into m narrower ones (DeepSeekMoE, Dai et al. 2024, §3.1)."""

    n_experts: int  # m E
    top_k: int  # m k
    d_expert: float  # d_e / m
    combinations_before: int  # C(E, k)
    combinations_after: int  # C(m E, m k)


def fine_grained_split(n_experts: int, top_k: int, d_expert: int, m: int) -> FineGrainedSplit:
    """Split each of E experts of width d_e into m of width d_e / m and route to m k of them: the same parameters
    (m E · 3 D d_e/m) and the same active FLOPs (m k · 3 D d_e/m) per token, but C(m E, m k) expert combinations
    instead of C(E, k). DeepSeekMoE's example (§3.1, as I recall it): E = 16, k = 2, m = 4 gives 120 -> 4,426,165,368.
    """
    n_experts = _check_positive_int("n_experts", n_experts)
    top_k = _check_top_k(top_k, n_experts)
    d_expert = _check_positive_int("d_expert", d_expert)
    m = _check_positive_int("m", m)
    return FineGrainedSplit(
        n_experts=m * n_experts,
        top_k=m * top_k,
        d_expert=d_expert / m,
        combinations_before=math.comb(n_experts, top_k),
        combinations_after=math.comb(m * n_experts, m * top_k),
    )


def all_to_all_bytes_per_token(
    d_model: int,
    top_k: int,
    bytes_per_value: float = 2.0,
    *,
    combine_bytes_per_value: float | None = None,
    ep_size: int | None = None,
    n_experts: int | None = None,
    dedup: bool = False,
) -> float:
    """Bytes one token sends over the expert-parallel all-to-all in one MoE layer, forward pass (dispatch + combine).

    The simple model: the token's hidden vector (D values) goes to each of its k experts and the k outputs come
    back, so 2 k D bytes_per_value (or k D (b_dispatch + b_combine): DeepSeek-V3 dispatches in FP8 and combines in
    BF16, DeepSeek-AI 2024 §3.3.3, and the DeepEP README). It counts payload only: no routing metadata, no padding,
    and a floor of traffic, not a time. The backward pass moves the same volume again.

    ``ep_size`` = P devices holding E/P experts each, routing uniform (each token's k distinct experts equally
    likely to be any k): an expert is local with probability 1/P, so the expected volume is scaled by (1 - 1/P).
    ``dedup``: a token is sent once per distinct remote device, however many of its experts live there (and one
    partial sum comes back); expected remote devices = (P - 1)(1 - C(E - E/P, k) / C(E, k)), which needs
    ``n_experts``. DeepSeek-V3 further caps a token at 4 nodes (node-limited routing); not modelled here.
    """
    d_model = _check_positive_int("d_model", d_model)
    top_k = _check_positive_int("top_k", top_k)
    b_in = _check_nonneg_real("bytes_per_value", bytes_per_value)
    b_out = b_in if combine_bytes_per_value is None else _check_nonneg_real("combine_bytes_per_value",
                                                                             combine_bytes_per_value)  # fmt: skip
    per_copy = d_model * (b_in + b_out)  # one vector out and one back
    if ep_size is None:
        if dedup:
            raise ValueError("dedup needs ep_size (and n_experts)")
        # 2 k D bytes: every selected expert is remote
        return top_k * per_copy
    P = _check_positive_int("ep_size", ep_size)
    if not dedup:
        # E[remote experts] = k (1 - 1/P)
        return top_k * (1.0 - 1.0 / P) * per_copy
    if n_experts is None:
        raise ValueError("dedup needs n_experts")
    E = _check_positive_int("n_experts", n_experts)
    _check_top_k(top_k, E)
    if E % P:
        raise ValueError(f"{E} experts do not split evenly over {P} devices")
    # E[distinct remote devices] = (P - 1) (1 - C(E - E/P, k) / C(E, k))
    miss = math.comb(E - E // P, top_k) / math.comb(E, top_k)
    return (P - 1) * (1.0 - miss) * per_copy


__all__ = [
    "AUX_FORMS",
    "DEEPSEEK_V3_LAYER",
    "PRIORITIES",
    "AuxLossTrajectory",
    "BalanceTrajectory",
    "BiasRouting",
    "FineGrainedSplit",
    "MoELayerParams",
    "Routing",
    "all_to_all_bytes_per_token",
    "aux_loss_gradient",
    "aux_loss_trajectory",
    "balance_trajectory",
    "bias_balanced_routing",
    "expert_capacity",
    "fine_grained_split",
    "load_imbalance",
    "moe_layer_params",
    "route_tokens",
    "sequence_balance_loss",
    "sigmoid_affinities",
    "softmax_router_probs",
    "switch_aux_loss",
    "toy_router_logits",
    "update_bias",
]
