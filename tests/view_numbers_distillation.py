"""The tables of tests/test_view_numbers.py for the distillation page: per view (tests/page_numbers.py ``views``), a
list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts and figure texts show.

The references are tests/distillation_reference.py's, never core/distillation.py's: scipy's normal pdf and entropy
on the page's grid, the mixture's closed-form moments, scipy.optimize for the reverse fit, scipy's softmax for the soft
targets, direct sums over the toy's four sequences.
"""

from __future__ import annotations

import math

from tests import distillation_reference as ref
from tests.page_numbers import Ref
from tests.test_page_numbers import GIVEN, _preset
from views import distillation as v_dist

SPEC = v_dist.SPEC
CLASS = "a class's number, a name"


def kl(p: dict) -> list[Ref]:
    d, w = float(p["dist_d"]), float(p["dist_w"])
    fm, fs = ref.forward_fit(d, w)
    two = p["dist_k"] == "2"
    rm, rs = (fm, fs) if two else ref.reverse_fit(d, w)
    ff, fr = ref.forward_kls(d, w)
    rf, rr = ref.reverse_kls(d, w)
    if two:  # two components represent the teacher: both fits are the teacher (its overall mean and sd), KL 0
        ff = fr = rf = rr = 0.0
    sign = lambda x: f"{round(x, 2) + 0.0:.2f}"  # noqa: E731
    return [
        Ref(f"Forward fit: mean, sd: {sign(fm)}, {fs:.2f}", fm, fs),
        Ref(f"Forward fit: KL(p‖q), KL(q‖p): {ff:.3f}, {fr:.3f}", ff, fr),
        Ref(f"Reverse fit: mean, sd: {sign(rm)}, {rs:.2f}", rm, rs),
        Ref(f"Reverse fit: KL(p‖q), KL(q‖p): {rf:.3f}, {rr:.3f}", rf, rr),
        Ref(f"modes d = {d:g} widths apart forward fit: mean {sign(fm)}, sd {fs:.2f} KL(p‖q) {ff:.3f}, KL(q‖p) "
            f"{fr:.3f} reverse fit: mean {sign(rm)}, sd {rs:.2f} KL(p‖q) {rf:.3f}, KL(q‖p) {rr:.3f}", GIVEN, fm,
            fs, ff, fr, rm, rs, rf, rr),
        *([Ref("forward KL(p‖q) fit, 2 Gaussians", GIVEN), Ref("reverse KL(q‖p) fit, 2 Gaussians", GIVEN)] if two
          else []),
    ]  # fmt: skip


def temperature(p: dict) -> list[Ref]:
    T = float(p["dist_T"])
    lim = ref.limit_norm()
    return [
        Ref(f"Soft targets: the top class's probability: {ref.soft(ref.V, T).max():.3f}", ref.soft(ref.V, T).max()),
        Ref(f"at T = {T:g}, of the teacher's logits v", GIVEN),
        Ref(f"Soft targets' entropy H(p_T): {ref.entropy(T):.3f}", ref.entropy(T)),
        Ref(f"nats; log 5 = {math.log(5):.3f} is the most five classes", len(ref.V), math.log(len(ref.V))),
        Ref(f"Soft loss gradient |∇ KL|, without T²: {ref.grad_norm(T, False):.4f}", ref.grad_norm(T, False)),
        Ref("falls about as 1/T² once T is large", "the 1 of 1/T², a power law's form"),
        Ref(f"Soft loss gradient |∇ T² KL|, with T²: {ref.grad_norm(T, True):.4f}", ref.grad_norm(T, True)),
        Ref(f"tends to |z - v| / N = {lim:.4f}", lim),
        *(Ref(f"class {i}", CLASS) for i in range(1, 6)),
    ]


def sequence(p: dict) -> list[Ref]:
    eps = float(p["dist_smooth"])
    st = ref.students(eps)
    teacher = ref.TEACHER
    refs = [Ref(f"smoothing ε = {eps:g}", GIVEN), Ref(f"sequence-level (ε = {eps:g})", GIVEN)]
    for m in v_dist.METHODS:
        s, name = st[m], v_dist.LABELS[m]
        refs += [
            Ref(f"{name}: KL(p‖q), KL(q‖p): {s['forward']:.3f}, {s['reverse']:.3f}", s["forward"], s["reverse"]),
            Ref(f"{name}: q(A A), q(A A or B B): {s['mode']:.3f}, {s['coherent']:.3f}", s["mode"], s["coherent"]),
        ]
    refs.append(
        Ref("the teacher gives its mode A A 0.50 and the two consistent answers 0.90", teacher[0, 0],
            teacher[0, 0] + teacher[1, 1])
    )  # fmt: skip
    return refs


_SEQ_CAPTION = [
    Ref("its fixed point here keeps q(y1) at the teacher's marginal and puts 0.32 on A A", ref.gkd_fixed_point()[0, 0]),
    Ref("with a small smoothing ε, since at ε = 0 the student gives every other sequence probability 0", "ε = 0: no "
        "smoothing", "a probability of zero"),
]  # fmt: skip
_TEMP_CAPTION = [
    Ref("Middle: their entropy rises toward log 5, the most five classes", len(ref.V)),
    Ref("and falls about as 1/T² once T is large", "the 1 of 1/T², a power law's form"),
    Ref("Hinton, Vinyals and Dean 2015, §2.1", "a section of the paper"),
]

P0 = SPEC.defaults()
_FAR = _preset(SPEC, "A1.9.2 / A6.10: forward vs reverse KL, modes far apart")
_PEAKS = _preset(SPEC, "Two clear peaks (d = 5): where does the reverse fit sit?")
_HEAVY = _preset(SPEC, "Reverse KL picks the heavier mode")
_TWO = _preset(SPEC, "Capacity: a two-component student fits both ways")
_TEMP = _preset(SPEC, "A6.10: the temperature and the T² factor")
_SEQ = _preset(SPEC, "A6.10: sequence-level vs on-policy distillation")

DISTILLATION: dict[str, list[Ref]] = {
    "defaults": kl(P0),
    "tab Temperature": [*temperature(P0), *_TEMP_CAPTION],
    "tab Sequence vs on-policy": [*sequence(P0), *_SEQ_CAPTION],
    "preset A1.9.2 / A6.10: forward vs reverse KL, modes far apart": kl(_FAR),
    "preset Two clear peaks (d = 5): where does the reverse fit sit?": kl(_PEAKS),
    "preset Reverse KL picks the heavier mode": kl(_HEAVY),
    "preset Capacity: a two-component student fits both ways": kl(_TWO),
    "preset A6.10: the temperature and the T² factor": [*temperature(_TEMP), *_TEMP_CAPTION],
}

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/23_Distillation.py": DISTILLATION}
