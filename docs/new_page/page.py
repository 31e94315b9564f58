"""New page: one line on what this page shows (the template of "Adding a page" in the README)."""

from __future__ import annotations

import streamlit as st

from components.analysis_view import analysis_of, model_of, stop_on_input_error
from components.explain import explain, page_header
from components.i18n import N_, _
from components.inputs import shared_inputs
from components.sections import Section, draw_sections
from pages.new_page import cache
from pages.new_page import figures as figs
from pages.new_page.records import Context

TITLE = N_("New page")
EXPLANATION = N_(
    "Two or three sentences on what this page shows and how to read it, for a student who has "
    "never seen it. Every number on it is computed live from the model named in the sidebar."
)

# URL keys (shared links must keep working: names and values stay as they are).
SECTION_KEY = "new_page_section"
SPECIAL_KEY = "new_page_special"


def draw_tokens(ctx: Context) -> None:
    explain(_("One row per token: what the tokenizer gave the model."))
    # A page's own control is bound to the URL, so a shared link opens the same view.
    special = st.toggle(_("Show [CLS] and [SEP]"), value=True, key=SPECIAL_KEY,
                        bind="query-params")
    st.dataframe(figs.tokens_frame(ctx.result.encoding, special), hide_index=True)


def draw_check(ctx: Context) -> None:
    explain(_("LayerNorm of the sum of the three lookups, by hand, against the model's own "
              "embedding layer."))
    with stop_on_input_error():
        check = cache.get_layernorm_check(ctx.key)
    st.markdown(figs.check_line(check, ctx.bundle.name))


SECTIONS = (
    Section(label=N_("Tokens"), draw=draw_tokens),
    Section(label=N_("Check"), draw=draw_check),
)


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    draw_sections(SECTIONS, SECTION_KEY, Context(key, model_of(key), analysis_of(key)))


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
