"""BERT Embedding Explorer: `streamlit run app.py`.

Streamlit runs this file twice over. At start-up it imports it and finds ``app``, an ``st.App``
whose lifespan warms the model before the first visitor (frame/startup.py) and whose
middleware puts a loading card into every page's HTML (frame/boot_screen.py); then every
session runs it as its script, and the router (frame/router.py) draws the page.
"""

import streamlit as st

if __name__ == "__main__":   # a session's script run
    from frame.router import run_app

    run_app()
else:                        # imported by the server: the app it serves, with its start-up
    from starlette.middleware import Middleware

    from frame.boot_screen import BootScreen
    from frame.file_requests import FileRequestClock
    from frame.startup import lifespan
    from serving.streamlit_private import skip_installed_component_scan

    skip_installed_component_scan()   # before st.App builds the runtime (the module says why)
    app = st.App(__file__, lifespan=lifespan, middleware=[Middleware(BootScreen),
                                                              Middleware(FileRequestClock)])
