"""Class mode's student page state: the link fields of pages/26_Class.py (the class, the student, a code to join
with, whether the screen follows the teacher). The questions a deck asks a class are decks/class_questions.py's.
"""

from __future__ import annotations

from views.state import Field, Spec

SPEC = Spec(
    "Class",
    (
        Field("class_id", "Class", "text", "", max_chars=22, help="the class this link joins (set when you join)"),
        Field("student", "Student", "text", "", max_chars=22, help="you, in this class (set when you join)"),
        Field("code", "Class code", "text", "", max_chars=12, help="the code on the projector, e.g. K7M2-PQ9X"),
        Field("follow", "Follow the teacher", "bool", True,
              help="your screen shows the teacher's slide; turn off to browse this slide's controls"),
    ),
)  # fmt: skip
