"""The app's frame around a page that runs the model on sentence A and prints one line.

`streamlit run bench/frame_model_app.py`. A new sentence costs what the app's frame costs
(bench/frame_app.py), plus the model's run on it through the app's own cache
(components.cache.get_analysis: the same analysis every page shares), and no figure: the floor
under a page that shows the model's numbers for a sentence the server has not seen. Its model
runs on the app's threads (frame.startup.set_compute_threads, one unless configured), as
the app's warm-up sets them: on torch's default of a thread per core its rerun took 190.6 ms
against 128.5 ms in Chromium on 2 cores (median of 7), more than some of the app's pages, so
it was no floor under them.
"""

import streamlit as st

from bench.frame_app import run_frame
from components.cache import get_analysis
from components.inputs import shared_inputs
from frame.startup import set_compute_threads


def echo_after_model_run() -> None:
    key = shared_inputs()
    analysis = get_analysis(key)
    st.write(key.text_a)
    last = list(analysis.stages)[-1]
    st.write(f"{len(analysis.tokens)} tokens; {last}: {analysis.stages[last].shape}")


@st.cache_resource(show_spinner=False)
def compute_threads() -> int:
    """Once per process, as the app's warm-up does (threadpoolctl looks through the loaded
    libraries each time it is asked)."""
    return set_compute_threads()


compute_threads()
run_frame(echo_after_model_run)
