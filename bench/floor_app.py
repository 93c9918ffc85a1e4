"""The floor page: the smallest Streamlit page with one sidebar slider and one small plotly chart.

Every browser timing in bench/ is reported as a ratio to this page measured in the same run, so that the noise of
a small shared machine cancels. Run by bench/bench_controls.py as its own ``streamlit run`` server.
"""

import plotly.graph_objects as go
import streamlit as st

n = st.sidebar.slider("n", 1, 100, 50, key="n")
st.plotly_chart(go.Figure(go.Scatter(x=list(range(n)), y=[i * i for i in range(n)])), key="floor")
