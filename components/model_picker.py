"""What each model in the picker can do, and the offer of the model that fixes a notice.

For each name: on this machine (its size on disk) or to download (its size from the hub, or
unknown while the hub does not answer); whether it has the MLM and NSP heads; its vocabulary size
and how many Chinese characters it reads. Folders are named relative to their allowed root.
Read only when asked (a toggle), and kept a few minutes, so the sidebar never waits on the hub.
"""

from __future__ import annotations

import streamlit as st

from components.i18n import N_, _
from components.labels import markdown_template
from core.models import needs_download
from core.settings import HUB_TIMEOUT_S, allowed_name, folder_label
from serving.hub import megabytes
from serving.model_facts import ModelFacts, model_facts

# The command that prepares a machine (serving/download.py); shown where no click can fetch a model.
DOWNLOAD_COMMAND = "python3 -m serving.download {name}"
FACTS_KEY = "model_facts"


@st.cache_data(ttl=300, show_spinner=False, max_entries=64)
def _facts(name: str, on_machine: bool) -> ModelFacts:
    """Keyed on whether the model is here, so a finished download shows at once."""
    return model_facts(name, HUB_TIMEOUT_S)


def facts_line(facts: ModelFacts, shown: str) -> str:
    """One model's facts as one markdown line, in the reader's language."""
    unknown = _("unknown")
    if facts.on_machine:
        where = _("on this machine, {size} MB").format(size=megabytes(facts.size_bytes or 0))
    elif facts.size_bytes is not None:
        where = _("to download, {size} MB").format(size=megabytes(facts.size_bytes))
    else:
        where = _("to download, size unknown (the model hub does not answer)")

    def yes_no(value: bool | None) -> str:
        return unknown if value is None else _("yes") if value else _("no")

    vocab = unknown if facts.vocab_size is None else f"{facts.vocab_size:,}"
    cjk = unknown if facts.cjk_characters is None else f"{facts.cjk_characters:,}"
    line = markdown_template(
        _("{name}: {where}; MLM head {mlm}, NSP head {nsp}; vocabulary {vocab} tokens, "
          "{cjk} of them Chinese characters"),
        name=shown, where=where, mlm=yes_no(facts.mlm_head), nsp=yes_no(facts.nsp_head),
        vocab=vocab, cjk=cjk)
    if facts.pooling is None:
        recipe = unknown
    elif not facts.pooling:
        recipe = _("none of its own (the Pairs page lends it mean pooling)")
    else:
        recipe = " + ".join(_(POOLING_NAMES.get(p, p)) for p in facts.pooling)
    return line + "; " + markdown_template(_("sentence vector: {recipe}"), recipe=recipe)


# A sentence-embedding model's pooling (core.similarity.recipe.Pooling), as the list names it.
POOLING_NAMES = {"cls": N_("the [CLS] vector"), "mean": N_("the mean of the tokens"),
                 "max": N_("the largest value per dimension"),
                 "mean_sqrt_len_tokens": N_("the sum over √(tokens)"),
                 "weightedmean": N_("a position-weighted mean"),
                 "lasttoken": N_("the last token's vector")}


def draw_model_facts(options: list[str]) -> None:
    """Under the picker: a toggle that lists what each offered model can do."""
    if not st.toggle(_("What each model can do"), key=FACTS_KEY,
                     help=_("Where it is, its size, its pretraining heads and how many Chinese "
                            "characters its vocabulary reads.")):
        return
    lines = []
    for option in options:
        name = allowed_name(option)
        if name is None:
            continue   # nothing listed that would be refused once picked
        try:
            facts = _facts(name, not needs_download(name))
        except Exception:  # noqa: BLE001 - a name that is not a model: nothing to tell
            continue
        lines.append("- " + facts_line(facts, folder_label(name)))
    st.markdown("\n".join(lines))


def offer_model(name: str, key: str) -> None:
    """Offer ``name`` (the model that fixes a notice): one click where this server lets a
    visitor pick it, else the command that prepares the machine."""
    if allowed_name(name) is not None:
        st.button(_("Use {name}").format(name=name), key=key, icon=":material/swap_horiz:",
                  on_click=_pick, args=(name,),
                  help=_("Switches the model for every page; a model not on this machine is "
                         "downloaded first, with its progress shown."))
        return
    st.markdown(markdown_template(
        _(OFFER_COMMAND), command=DOWNLOAD_COMMAND.format(name=name)))
    st.code(DOWNLOAD_COMMAND.format(name=name), language="bash")


OFFER_COMMAND = N_("This server does not let a visitor pick that model. Whoever runs it can "
                   "download it on the server with {command}, which prints the one setting "
                   "that then offers it here.")


def _pick(name: str) -> None:
    st.session_state["model"] = name

