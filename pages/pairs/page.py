"""Pairs: which token pairs make two sentences alike, and many pairs compared at once.

Two sections shown as tabs; only the open one runs (components.sections).
"""

from __future__ import annotations

from components.analysis_view import encoding_or_none, model_of
from components.explain import page_header
from components.i18n import N_
from components.inputs import shared_inputs
from components.sections import Section, draw_sections
from pages.pairs.many_pairs import draw_many_pairs
from pages.pairs.one_pair import draw_one_pair
from pages.pairs.records import Context

TITLE = N_("Pairs")
EXPLANATION = N_(
    "How alike are two sentences for an embedding model, and which words make them so? "
    "all-MiniLM-L6-v2's sentence vector is the mean of its token vectors, normalised, so the "
    "cosine of two sentences is exactly a sum of one small term per pair of tokens: the picture "
    "shows every term. Many pairs paste in at once, with your own scores to compare against."
)
# URL keys (values of a shared link).
SECTION_KEY = "pr_section"

# Tab labels are the values of ?pr_section= in a shared link.
SECTIONS = (
    Section(label=N_("One pair"), draw=draw_one_pair),
    Section(label=N_("Many pairs"), draw=draw_many_pairs),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    # The sidebar's text, with the notices every page gives (empty text, B without A, what
    # was cut); the Many pairs tab needs none of it, so a refused text does not stop the page.
    encoding = encoding_or_none(key)
    draw_sections(SECTIONS, SECTION_KEY, Context(key, model_of(key), encoding))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
