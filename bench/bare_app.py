"""The bare Streamlit page the app's reruns are compared with: one text input, its text echoed.

`streamlit run bench/bare_app.py`. The label matches the app's sentence box so the benchmark
drives both the same way (type, press Enter, wait for the echo).
"""

import streamlit as st

text = st.text_input("Sentence A", "This is a test sentence")
st.write(text)
