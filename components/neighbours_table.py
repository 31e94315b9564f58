"""The nearest tokens of a corpus as an escaped HTML table, and the built-in corpus's senses as
a reader sees them: the Contexts page's neighbours and the Compare page's neighbours in both
models draw the same table. No Streamlit calls; every text from a corpus is escaped, so a
sentence shows as written.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from components.html_table import STYLE as TABLE_STYLE
from components.i18n import N_, _
from core.contexts.neighbours import Neighbour

SENSE_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                 "#bcbd22", "#ff7f0e", "#7f7f7f", "#393b79", "#637939")
OTHER = "#9a9a9a"     # unlabelled points and rows
# The built-in senses, as a reader sees them (the corpus keeps short English names).
SENSE_LABELS = {
    "river": N_("river side"), "money": N_("money"), "animal": N_("animal"),
    "sport": N_("sport"), "season": N_("season"), "coil": N_("metal coil"),
    "lamp": N_("light to see by"), "weight": N_("not heavy"), "game": N_("game"),
    "fire": N_("for fire"), "dog": N_("a dog's bark"), "tree": N_("tree"), "bird": N_("bird"),
    "machine": N_("machine"), "day": N_("day"), "fruit": N_("fruit"), "just": N_("just"),
    "festival": N_("festival"), "cooling": N_("cooling"), "supporter": N_("supporter"),
    "lock": N_("for a lock"), "music": N_("music"), "computer": N_("computer"),
    "hand": N_("hand"), "field": N_("playing field"), "sound": N_("sound"),
    "living": N_("living plant"), "factory": N_("factory"), "jewellery": N_("jewellery"),
    "stone": N_("stone"), "closure": N_("closure"), "weighing": N_("for weighing"),
    "fish": N_("fish skin"), "timepiece": N_("timepiece"), "look": N_("to look"),
    "háng": N_("háng: a row, a trade"), "xíng": N_("xíng: to go, all right"),
    "hit": N_("to hit"), "do": N_("to do, to make"), "flower": N_("flower"),
    "spend": N_("to spend"), "meaning": N_("meaning"), "fun or token": N_("fun, a small gift"),
    "thing": N_("thing"), "east-west": N_("east and west"), "cháng": N_("cháng: long"),
    "zhǎng": N_("zhǎng: to grow"), "hái": N_("hái: still"), "huán": N_("huán: to give back"),
    "can": N_("can"), "meeting": N_("meeting"), "rice": N_("rice"), "metre": N_("metre"),
    "zhòng": N_("zhòng: heavy"), "chóng": N_("chóng: again"),
}


def sense_label(sense: str | None, own: bool = False) -> str:
    """A sense as shown: the built-in ones translated, a user's label (``own``) as written."""
    if sense is None:
        return "—"
    return _(SENSE_LABELS[sense]) if sense in SENSE_LABELS and not own else sense


def sense_colours(senses: Sequence[str]) -> dict[str, str]:
    return {s: SENSE_COLOURS[k % len(SENSE_COLOURS)] for k, s in enumerate(senses)}


def marked(sentence: str, start: int, end: int, colour: str) -> str:
    """The sentence as escaped HTML, characters [start, end) marked."""
    return (html.escape(sentence[:start])
            + f'<mark style="background:{colour}33;border-bottom:3px solid {colour};'
              f'color:inherit;font-weight:700">{html.escape(sentence[start:end])}</mark>'
            + html.escape(sentence[end:]))


def neighbours_html(found: Sequence[Neighbour], colours: dict[str, str], name: str,
                    own: bool = False, figure: str = "") -> str:
    """Rank, cosine, word and sense, and the sentence with the token marked; each row tinted by
    its sense (grey when unlabelled or another word's). ``figure``: a ``data-figure`` name (a
    picture switched in the browser, for tests and the bench)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in (
        "#", _("cosine"), _("token"), _("sense"), _("sentence")))
    rows = []
    for rank, n in enumerate(found, start=1):
        colour = colours.get(n.sense or "", OTHER) if (own or n.word is not None) else OTHER
        sense = (f"{html.escape(n.word)} · {html.escape(sense_label(n.sense))}"
                 if n.word and n.sense else html.escape(sense_label(n.sense, own)))
        rows.append(
            f'<tr style="box-shadow:inset 5px 0 0 {colour}">'
            f'<td class="num">{rank}</td><td class="num">{n.cosine:.3f}</td>'
            f"<td>{html.escape(n.token)}</td><td>{sense}</td>"
            f'<td style="white-space:normal">{marked(n.sentence, n.start, n.end, colour)}</td>'
            "</tr>")
    named = f' data-figure="{html.escape(figure)}"' if figure else ""
    return (f'{TABLE_STYLE}<div class="tab-wrap" data-table="{html.escape(name)}"{named}>'
            f'<table class="tab wrap"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table></div>")
