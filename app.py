"""BERT Embedding Explorer: `streamlit run app.py`. The router lives in components/router.py."""

from components.router import run_app

run_app()
