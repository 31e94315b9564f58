"""The app's frame alone: language switch, top navigation, the shared inputs in the sidebar, and
a page that only echoes sentence A. What every page of the app costs before its own content.

`streamlit run bench/frame_app.py`. It reads the URL (?a=...) and is driven like the app's
pages (Ctrl+Enter in the sidebar's "Sentence A" box). bench/frame_model_app.py is the same
frame around a page that also runs the model on the sentence.
"""

from collections.abc import Callable

import streamlit as st

from components.i18n import _
from components.inputs import draw_language_switch, draw_shared_inputs, shared_inputs
from frame.page_list import HOME, PAGES


def echo() -> None:
    st.write(shared_inputs().text_a)


def run_frame(page: Callable[[], None]) -> None:
    """The app's frame (frame/router.py) around ``page``, with as many entries in the top
    navigation as the app has, each showing ``page``."""
    st.set_page_config(layout="wide")
    draw_language_switch()
    pages = [st.Page(page, title=_(HOME.title), default=True),
             *(st.Page(page, title=_(spec.title), url_path=spec.url_path) for spec in PAGES)]
    chosen = st.navigation(pages, position="top")
    draw_shared_inputs()
    chosen.run()


if __name__ == "__main__":   # Streamlit runs the script as __main__
    run_frame(echo)
