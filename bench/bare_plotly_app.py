"""A bare Streamlit page that draws one plotly heatmap: the floor for a page with a figure.

`streamlit run bench/bare_plotly_app.py`. Like bench/bare_app.py, with the sentence's words as the
rows of a 64-column heatmap instead of echoed text, so a rerun is done when plotly has drawn the
new words, as on the app's pages.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

text = st.text_input("Sentence A", "This is a test sentence")
words = text.split() or ["(empty)"]
values = np.random.default_rng(len(text)).standard_normal((len(words), 64)).astype(np.float32)
rows = [f"{i}: {word}" for i, word in enumerate(words)]
st.plotly_chart(go.Figure(go.Heatmap(z=values, y=rows, colorscale="RdBu_r")), width="stretch")
