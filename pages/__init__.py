"""Pages of the explorer (Streamlit's file-based navigation lists the ``*.py`` files of this folder).

The subpackage :mod:`pages.frame` is not a page: it is the shared frame every page calls.
"""
