"""The floor under a control change: a bare page whose fragment holds one slider and one heatmap,
and, when asked, more elements of one kind redrawn with them on every move.

`streamlit run bench/fragment_app.py`. Sentence A as in bench/bare_app.py; below it a fragment
(as the app runs a page's open tab, components/sections.py) with a "Layer" slider and the
picture it picks, drawn as the app draws its large heatmaps (components/heatmap_image.py). Moving
the slider reruns the fragment alone: the least a control that changes a picture can cost.

With ``ELEMENTS_KIND`` and ``ELEMENTS_COUNT`` (e.g. `ELEMENTS_KIND=markdown ELEMENTS_COUNT=8`)
the fragment also holds that many elements of that kind, the ones a page's section is made of:
an explanation, a picker, a download button, a slider, an image heatmap, two columns of text.
bench/element_costs.py moves the slider and prints what each kind adds.
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
