"""The reference page for bench/bench_app.py: a title, a metric and one Plotly chart."""

import plotly.graph_objects as go
import streamlit as st

st.title("Reference")
st.metric("x", 1)
st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2])))
