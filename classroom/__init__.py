"""Class mode: a teacher's lecture followed by students on their own devices, with the class's guesses collected live.

``store`` keeps the shared state (SQLite by default, Redis when ``LESSON_CLASS_STORE`` names one); ``classes`` says
what a class is and what each side may do. Neither imports Streamlit: the pages call them.
"""
