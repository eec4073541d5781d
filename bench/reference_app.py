"""The reference pages for bench/bench_app.py: a title, a metric and one Plotly chart; with
``?chart=no``, the title and the metric alone (Streamlit's own share of the time)."""

import plotly.graph_objects as go
import streamlit as st

st.title("Reference")
st.metric("x", 1)
if st.query_params.get("chart") != "no":
    st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2])))
