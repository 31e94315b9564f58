"""A bare Streamlit page with the elements of the Stages page's Heatmaps tab, and nothing of the
app: no frame, no model, a fixed random picture.

`python3 bench/browser_profile.py --enter --script bench/stages_elements_app.py` measures what
these elements alone cost a rerun in the browser (bench/HISTORY.md: the floor under Stages
that is not the frame's and not the model's). The labels and layout follow pages/stages/page.py.
"""

import base64
import io

import numpy as np
import streamlit as st
from PIL import Image

STAGES = ["word_embeddings", "token_type_embeddings", "position_embeddings", "sum",
          "LayerNorm", "dropout", *(f"layer_{k}" for k in range(1, 7))]
TABS = ["Heatmaps", "Printouts", "LayerNorm", "One-hot lookup", "Broadcasting",
        "Parts of the sum"]


@st.cache_resource
def picture(seed: int) -> str:
    """A 7-token x 384-dimension heatmap's size as a PNG, base64 (drawn once per seed)."""
    cells = (np.random.default_rng(seed).random((56, 384)) * 255).astype("uint8")
    buffer = io.BytesIO()
    Image.fromarray(cells).convert("RGB").save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


text = st.text_input("Sentence A", "This is a test sentence")
st.write(text)
st.title("Stages")
st.markdown("How the three lookups become the model's input, stage by stage. " * 3)
with st.tabs(TABS)[0]:
    st.markdown("Each heatmap has one row per token and one column per hidden dimension. " * 2)
    with st.container(border=True):
        layout_col, pick_col = st.columns([1, 3])
        layout_col.radio("Show", ["One at a time", "Stacked"])
        pick_col.select_slider("Stage", STAGES)
        scale_col, mode_col, size_col = st.columns([4, 4, 3])
        scale_col.radio("Colour scale", ["Shared", "Per stage"], horizontal=True, help="Why.")
        mode_col.radio("Dimensions", ["A window", "All"], horizontal=True)
        size_col.slider("Window", 0, 384, (0, 64))
        clip_col, exact_col = st.columns(2)
        clip_col.toggle("Clip colours at the 99th percentile", value=True, help="Why.")
        exact_col.toggle("Exact values on hover")
    st.markdown("One colour range for every stage: ±2.5.")
    with st.container(border=True):
        st.markdown("word_embeddings: each token's row. Shape torch.Size([1, 7, 384]).")
        st.html(f'<img src="data:image/png;base64,{picture(len(text))}" '
                'style="width:100%;height:300px">')
        row = st.container(horizontal=True)
        row.download_button("Download CSV", "a,b\n1,2", "stage.csv")
        row.download_button("Download NumPy", b"\x93NUMPY", "stage.npy")
