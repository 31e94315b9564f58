"""The app's frame around a page that runs the model on sentence A and prints one line.

`streamlit run bench/frame_model_app.py`. A new sentence costs what the app's frame costs
(bench/frame_app.py), plus the model's run on it through the app's own cache
(components.cache.get_analysis: the same analysis every page shares), and no figure: the floor
under a page that shows the model's numbers for a sentence the server has not seen.
"""

import streamlit as st

from bench.frame_app import run_frame
from components.cache import get_analysis
from components.inputs import shared_inputs


def echo_after_model_run() -> None:
    key = shared_inputs()
    analysis = get_analysis(key)
    st.write(key.text_a)
    last = list(analysis.stages)[-1]
    st.write(f"{len(analysis.tokens)} tokens; {last}: {analysis.stages[last].shape}")


run_frame(echo_after_model_run)
