"""The app's frame alone: language switch, top navigation, the shared inputs in the sidebar, and
a page that only echoes sentence A. What every page of the app costs before its own content.

`streamlit run bench/frame_app.py`. It reads the URL (?a=...) and is driven like the app's
pages (Ctrl+Enter in the sidebar's "Sentence A" box).
"""

import streamlit as st

from components.i18n import _
from components.inputs import draw_language_switch, draw_shared_inputs, shared_inputs
from frame.page_list import HOME, PAGES


def echo() -> None:
    st.write(shared_inputs().text_a)


st.set_page_config(layout="wide")
draw_language_switch()
# As many entries in the top navigation as the app has, each showing the echo.
pages = [st.Page(echo, title=_(HOME.title), default=True),
         *(st.Page(echo, title=_(spec.title), url_path=spec.url_path) for spec in PAGES)]
page = st.navigation(pages, position="top")
draw_shared_inputs()
page.run()
