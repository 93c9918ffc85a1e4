"""The sections of a page that hold answers and data: Quick check, Say it in an interview, Common mistakes and the
CSV downloads. With answers hidden (``?hide=true``) an answer is not sent to the browser at all."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import streamlit as st

from views import QuickCheck

if TYPE_CHECKING:  # pandas takes 0.6 s to import: a page imports it when it builds a table, not before
    import pandas as pd


@dataclass(frozen=True)
class InterviewAnswer:
    """A 60-90 second answer: one sentence, one equation, one number, one trade-off."""

    sentence: str
    equation: str  # LaTeX
    number: str
    trade_off: str


class AnswerSections:
    """The answer and data sections of :class:`pages.frame.page.Page` (which holds ``hide`` and the slots)."""

    hide: bool
    _slots: dict[str, Any]
    hidden_caption: str  # why an answer is held back (hide=true, or Predict first before a guess)
    title: str

    def quick_check(self, question: str | QuickCheck, answer: str = "") -> None:
        """A question with its answer hidden until revealed (not sent at all when answers are hidden). A
        :class:`~views.QuickCheck` (multiple choice) shows its options to pick from first (A, B, ...); the revealed
        answer names the right one, then works it out."""
        check = question if isinstance(question, QuickCheck) else None
        with self._slots["checks"]:
            st.subheader("Quick check")
            st.markdown(check.question if check else question)
            # Predict first before a guess: the options wait too (one of them may be the figure's held-back answer,
            # as KL leash's 0.881 at β = 0.5 is)
            if check is not None and not getattr(self, "_predicting", False):
                letters = [f"{chr(65 + i)}. {o}" for i, o in enumerate(check.options)]
                st.radio("Your answer", letters, index=None, key=f"quick-check-{self.title}",
                         label_visibility="collapsed")  # fmt: skip
            if self.hide:
                st.caption(self.hidden_caption)
                return
            with st.expander("Reveal the answer", expanded=False):
                if check is not None:
                    st.markdown(f"**{chr(65 + check.right)}. {check.options[check.right]}**")
                st.markdown(check.answer if check else answer)

    def interview(self, prompt: str, answer: InterviewAnswer) -> None:
        """'Say it in an interview': a prompt (the page's question, its view's ``QUESTION``, shown in quotes), and a
        model answer hidden until revealed (not sent at all when answers are hidden)."""
        with self._slots["checks"]:
            st.subheader("Say it in an interview")
            st.markdown(f"*“{prompt.strip('“”')}”*")
            if self.hide:
                st.caption(self.hidden_caption)
                return
            with st.expander("Reveal a 60-90 second answer", expanded=False):
                st.markdown(f"**In one sentence.** {answer.sentence}")
                st.markdown("**One equation.**")
                st.latex(answer.equation)
                st.markdown(f"**One number.** {answer.number}")
                st.markdown(f"**One trade-off.** {answer.trade_off}")

    def mistakes(self, items: Sequence[str]) -> None:
        """Common mistakes, as a list (not sent when answers are hidden: each names the right answer beside the
        wrong one)."""
        with self._slots["checks"]:
            st.subheader("Common mistakes")
            if self.hide:
                st.caption(f"{self.hidden_caption}: each mistake names the right answer.")
                return
            st.markdown("\n".join(f"- {item}" for item in items))

    def download(self, frames: dict[str, pd.DataFrame | Callable[[], pd.DataFrame]], filename_stem: str) -> None:
        """CSV downloads of the plotted data, one button per table.

        A table may be given as a function: it is then built only when its button is clicked (large tables).
        """
        with self._slots["data"]:
            st.subheader("The data behind the figure")
            with st.container(horizontal=True, gap="small"):  # one row of buttons, wrapping on a narrow screen
                for name, df in frames.items():
                    st.download_button(
                        f"{name} (CSV)",
                        (lambda make=df: make().to_csv(index=False)) if callable(df) else df.to_csv(index=False),
                        file_name=f"{filename_stem}-{name.lower().replace(' ', '-')}.csv",
                        mime="text/csv",
                        icon=":material/download:",
                        key=f"csv-{filename_stem}-{name}",
                    )
