"""The floor page plus a chosen mix of Streamlit elements: what each kind of element adds to a control step.

``MIX`` (environment) lists kinds and counts, for example ``MIX=metric:12+link:16``. Every element is sent again on
each rerun, as the lesson pages' are; ``figure`` swaps the floor's small chart for the scaling page's main figure
(its view cached, as on the page); ``live`` draws that figure with the frame's live chart (pages/frame/charts.py)
instead of ``st.plotly_chart``; ``grid`` and ``strip`` draw that many readouts in rows of 4 ``st.columns`` or in one
wrapping horizontal container. Run by bench/bench_elements.py as its own ``streamlit run`` server.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import plotly.graph_objects as go
import streamlit as st

MIX = {k: int(v) for k, v in (x.split(":") for x in os.environ.get("MIX", "").split("+") if x)}


@st.cache_data(max_entries=16, show_spinner=False)
def _scaling_figure(gpus: int) -> go.Figure:
    from views import Options, scaling
    from views.state import State

    return scaling.figures(State(dict(scaling.SPEC.defaults()) | {"gpus": gpus}), Options()).figures["main"]


n = st.sidebar.slider("n", 1, 100, 50, key="n")
if MIX.get("live"):
    from pages.frame.charts import live_chart, live_chart_ready

    assert live_chart_ready()
    live_chart(_scaling_figure(n), "floor", {"displaylogo": False})
elif MIX.get("figure"):
    st.plotly_chart(_scaling_figure(n), key="floor")
else:
    st.plotly_chart(go.Figure(go.Scatter(x=list(range(n)), y=[i * i for i in range(n)])), key="floor")
for i in range(MIX.get("number", 0)):
    st.sidebar.number_input(f"number {i}", 0.0, 1e9, float(i), key=f"num{i}")
for i in range(MIX.get("select", 0)):
    st.sidebar.selectbox(f"select {i}", ["a", "b", "c"], key=f"sel{i}")
for i in range(MIX.get("toggle", 0)):
    st.sidebar.toggle(f"toggle {i}", key=f"tog{i}")
for i in range(MIX.get("link", 0)):
    st.sidebar.page_link("bench/floor_mix_app.py", label=f"page {i}", icon=":material/home:")
for i in range(MIX.get("metric", 0)):
    st.metric(f"readout {i}", f"{n * i}", help="a help text")
if MIX.get("grid"):  # the readouts as they were: rows of 4 st.columns, a metric in each
    for start in range(0, MIX["grid"], 4):
        for j, col in enumerate(st.columns(4)):
            if start + j < MIX["grid"]:
                col.metric(f"grid {start + j}", f"{n * (start + j)}", help="a help text")
if MIX.get("strip"):  # the readouts as they are: one wrapping horizontal container of metrics
    with st.container(horizontal=True, gap="small"):
        for i in range(MIX["strip"]):
            st.metric(f"strip {i}", f"{n * i}", help="a help text", width=180)
for i in range(MIX.get("markdown", 0)):
    st.markdown(f"Paragraph {i}: **static** text that is the same on every rerun, several lines long. " * 6)
for i in range(MIX.get("latex", 0)):
    st.latex(r"L(N, D) = E + \frac{A}{N^{\alpha}} + \frac{B}{D^{\beta}}, \quad D = \frac{C}{6N}" + "+" * i)
for i in range(MIX.get("expander", 0)):
    with st.expander(f"expander {i}"):
        st.markdown("folded text " * 20)
for i in range(MIX.get("download", 0)):
    st.download_button(f"download {i}", "a,b\n1,2", file_name="x.csv", key=f"dl{i}")
