"""Reusable Streamlit pieces: the caching layer, the router, shared inputs and drawing helpers."""
