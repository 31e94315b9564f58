"""The floor under a control change: a bare page whose fragment holds one slider and one heatmap.

`streamlit run bench/fragment_app.py`. Sentence A as in bench/bare_app.py; below it a fragment
(as the app runs a page's open tab, components/sections.py) with a "Layer" slider and the
picture it picks, drawn as the app draws its large heatmaps (components/heatmap_image.py). Moving
the slider reruns the fragment alone: the least a control that changes a picture can cost.
"""

import numpy as np
import streamlit as st

from components.heatmap_image import HeatmapImage, Scale, heatmap_html

text = st.text_input("Sentence A", "This is a test sentence")
st.write(text)


@st.fragment
def section() -> None:
    layer = st.slider("Layer", 0, 6, 6)
    values = np.random.default_rng(layer).standard_normal((16, 64)).astype(np.float32)
    rows = [f"{i}: token" for i in range(16)]
    image = HeatmapImage(values, rows, list(range(64)), Scale("RdBu_r", -3.0, 3.0), "", "")
    st.html(heatmap_html(image, "fragment"))


section()
