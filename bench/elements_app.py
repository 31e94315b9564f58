"""The floor under a control change (bench/fragment_app.py) with more elements in its fragment:
``ELEMENTS_KIND`` names the kind, ``ELEMENTS_COUNT`` how many, each redrawn on every move.

`ELEMENTS_KIND=markdown ELEMENTS_COUNT=8 streamlit run bench/elements_app.py`. The kinds are the
elements a page's section is made of (components/sections.py runs the open section as a
fragment): an explanation, a picker, a download button, a slider, an image heatmap, two
columns of text. bench/element_costs.py moves the slider and prints what each kind adds.
"""

import os

import numpy as np
import streamlit as st

from components.heatmap_image import HeatmapImage, Scale, heatmap_html

KIND = os.environ.get("ELEMENTS_KIND", "none")
COUNT = int(os.environ.get("ELEMENTS_COUNT", "0"))

text = st.text_input("Sentence A", "This is a test sentence")
st.write(text)


def picture(layer: int, name: str) -> None:
    """One heatmap as the app draws it (components.heatmap_image), 16 tokens by 64."""
    values = np.random.default_rng(layer).standard_normal((16, 64)).astype(np.float32)
    rows = [f"{i}: token" for i in range(16)]
    image = HeatmapImage(values, rows, list(range(64)), Scale("RdBu_r", -3.0, 3.0), "", "")
    st.html(heatmap_html(image, name))


def element(kind: str, i: int, layer: int) -> None:
    """The ``i``-th extra element of ``kind``; its text changes with the layer, as a page's."""
    if kind == "markdown":
        st.markdown(f"Line {i} of layer {layer}: the **words** a teacher reads out.")
    elif kind == "selectbox":
        st.selectbox(f"Pick {i}", [1, 2, 3, 4, 5, 6], key=f"pick{i}")
    elif kind == "download":
        st.download_button(f"CSV {i}", data=lambda: "a,b\n", file_name=f"layer{i}.csv",
                           key=f"download{i}", on_click="ignore")
    elif kind == "select_slider":
        st.select_slider(f"Step {i}", ["query", "key", "value", "output"], key=f"step{i}")
    elif kind == "picture":
        picture(layer + i, f"picture{i}")
    elif kind == "columns":
        left, right = st.columns(2)
        left.markdown(f"Left {i} of layer {layer}")
        right.markdown(f"Right {i}")


@st.fragment
def section() -> None:
    layer = st.slider("Layer", 0, 6, 6)
    picture(layer, "fragment")
    for i in range(COUNT):
        element(KIND, i, layer)


section()
