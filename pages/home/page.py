"""Home: the whole pipeline at a glance, with the live shapes of the current input."""

import streamlit as st

from components.analysis_view import encoding_of, model_of, stop_on_input_error
from components.cache import get_tokenizer_files, parameter_count
from components.explain import page_header
from components.i18n import N_, _
from components.inputs import shared_inputs
from components.labels import markdown_text
from components.unk_note import draw_unk_note
from frame.page_list import available_pages
from pages.home.figures import PAGE_BLURBS, model_line, pipeline_dot

TITLE = N_("BERT Embedding Explorer")
EXPLANATION = N_(
    "Type a sentence (or two) in the sidebar and follow it through the model: the tokenizer "
    "turns it into IDs, three lookup tables turn each ID into vectors that are added and "
    "normalised, and the encoder layers mix the tokens together. Every number on every page is "
    "computed live from the model named in the sidebar."
)


def draw_pages() -> None:
    """A card per page: its link and what it shows."""
    st.subheader(_("Pages"))
    specs = available_pages()
    columns = st.columns(min(3, len(specs)) or 1)
    for i, spec in enumerate(specs):
        with columns[i % len(columns)].container(border=True):
            st.page_link(spec.path, label=_(spec.title), icon=spec.icon)
            st.markdown(_(PAGE_BLURBS.get(spec.folder, "")))


def main() -> None:
    key = shared_inputs()
    page_header(TITLE, EXPLANATION)
    with stop_on_input_error():
        files = get_tokenizer_files(key.model)
    enc = encoding_of(key)   # Home shows shapes, which need no model run
    # The shapes come from the tokenizer and config.json: on a fresh server they show while the
    # model loads, and the lines below wait for it (components.cache).
    st.graphviz_chart(pipeline_dot(files.config, enc), width="stretch")
    bundle = model_of(key)
    st.markdown(markdown_text(model_line(bundle.label, bundle.config,
                                         parameter_count(key.model), len(enc.tokens))))
    draw_unk_note(enc, bundle, _("On every page those tokens show as one and the same vector, "
                                 "so what the figures show for them says little."))
    draw_pages()


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
