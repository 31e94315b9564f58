"""A bare Streamlit page that draws one image heatmap: the floor for a page with a picture.

`streamlit run bench/bare_image_app.py`. Like bench/bare_plotly_app.py (the same rows and
values), drawn as the app draws its large heatmaps (components/heatmap_image.py).
"""

import numpy as np
import streamlit as st

from components.heatmap_image import HeatmapImage, Scale, heatmap_html

text = st.text_input("Sentence A", "This is a test sentence")
words = text.split() or ["(empty)"]
values = np.random.default_rng(len(text)).standard_normal((len(words), 64)).astype(np.float32)
rows = [f"{i}: {word}" for i, word in enumerate(words)]
image = HeatmapImage(values, rows, list(range(64)), Scale("RdBu_r", -3.0, 3.0), "", "")
st.html(heatmap_html(image, "bare"))
