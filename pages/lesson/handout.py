"""A lesson as one self-contained HTML file to keep: no Streamlit, no network.

Everything is inside the file: the style in one <style> element, every picture a ``data:`` URI
(the class's answers as an SVG bar chart), no script, no external style sheet, font or link, so
it opens offline and prints cleanly (print CSS: no cut code lines, a step never split across
pages where it fits on one). All text is escaped: the sentence a student typed is shown as text,
never read as HTML. The words come in already translated (core never imports the interface).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC",
       "PingFang SC", "Microsoft YaHei", sans-serif; color: #1a1a1a; max-width: 52rem;
       margin: 2rem auto; padding: 0 1rem; line-height: 1.5; font-size: 16px; }
h1 { font-size: 1.7rem; margin-bottom: .2rem; }
h2 { font-size: 1.25rem; margin: 0 0 .5rem; }
.meta { color: #444; margin: 0 0 1.5rem; }
.meta dt { font-weight: 600; float: left; clear: left; margin-right: .5rem; }
.meta dd { margin: 0 0 .2rem; }
section { border-top: 1px solid #bbb; padding: 1rem 0; }
pre { background: #f4f4f4; border: 1px solid #ddd; padding: .6rem; overflow-x: auto;
      font-size: 13px; line-height: 1.35; }
pre.output { background: #fff; }
.label { font-weight: 600; margin: .6rem 0 .2rem; }
ol.choices li.right { font-weight: 700; }
.why { margin: .3rem 0; }
figure { margin: .6rem 0; }
figcaption { font-size: .9rem; color: #444; }
@media print {
  body { margin: 0; max-width: none; font-size: 11pt; }
  pre { white-space: pre-wrap; word-break: break-all; overflow: visible; font-size: 9pt; }
  section { break-inside: avoid; page-break-inside: avoid; }
  h2 { break-after: avoid; }
}
"""


@dataclass(frozen=True)
class HandoutStep:
    title: str
    code: str
    output: str
    explanation: str
    question: str
    choices: tuple[str, ...]
    answer: int                              # index into choices
    why: str
    counts: tuple[int, ...] | None = None    # the class's answers per choice, if there was one
    note: str | None = None                  # e.g. the head this model lacks


@dataclass(frozen=True)
class HandoutWords:
    """The handout's own labels, in the interface's language."""

    lang: str                 # the html lang attribute: "en", "zh-Hans"
    model_label: str          # "Model"
    sentence_label: str       # "Sentence"
    class_label: str          # "Class"
    code_label: str           # "Code"
    output_label: str         # "Output"
    question_label: str       # "Question"
    answer_label: str         # "Answer: {answer}"
    class_answers: str        # "The class's answers ({count} answered)"


@dataclass(frozen=True)
class Handout:
    title: str
    model: str
    sentence: str
    steps: tuple[HandoutStep, ...]
    words: HandoutWords
    class_code: str | None = None


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def bar_chart_svg(labels: Sequence[str], counts: Sequence[int], right: int) -> str:
    """A horizontal bar chart of the answers, the right answer's bar in green (SVG text)."""
    width, bar_h, gap, label_w = 560, 26, 8, 230
    height = len(counts) * (bar_h + gap) + gap
    top = max(max(counts, default=0), 1)
    rows = []
    for i, (label, count) in enumerate(zip(labels, counts, strict=True)):
        y = gap + i * (bar_h + gap)
        w = (width - label_w - 60) * count / top
        colour = "#1b7a3d" if i == right else "#7a8aa0"
        short = label if len(label) <= 34 else label[:33] + "…"
        rows.append(
            f'<text x="{label_w - 8}" y="{y + bar_h * 0.68:.1f}" text-anchor="end" '
            f'font-size="14" fill="#1a1a1a">{_e(short)}</text>'
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{colour}"/>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + bar_h * 0.68:.1f}" font-size="14" '
            f'fill="#1a1a1a">{count}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif">{"".join(rows)}</svg>')


def svg_data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def _step_html(number: int, step: HandoutStep, words: HandoutWords) -> str:
    parts = [f"<section><h2>{number}. {_e(step.title)}</h2>",
             f'<p class="label">{_e(words.code_label)}</p><pre>{_e(step.code)}</pre>',
             f'<p class="label">{_e(words.output_label)}</p>'
             f'<pre class="output">{_e(step.output or " ")}</pre>',
             f"<p>{_e(step.explanation)}</p>"]
    if step.note:
        parts.append(f"<p><em>{_e(step.note)}</em></p>")
    items = "".join(f'<li class="right">{_e(c)} ✓</li>' if i == step.answer else f"<li>{_e(c)}</li>"
                    for i, c in enumerate(step.choices))
    answer = words.answer_label.format(answer=step.choices[step.answer])
    parts.append(f'<p class="label">{_e(words.question_label)}: {_e(step.question)}</p>'
                 f'<ol class="choices">{items}</ol>'
                 f'<p class="why"><strong>{_e(answer)}</strong> {_e(step.why)}</p>')
    if step.counts is not None:
        svg = bar_chart_svg(step.choices, step.counts, step.answer)
        caption = words.class_answers.format(count=sum(step.counts))
        parts.append(f'<figure><img alt="{_e(caption)}" src="{svg_data_uri(svg)}">'
                     f"<figcaption>{_e(caption)}</figcaption></figure>")
    parts.append("</section>")
    return "".join(parts)


def handout_html(handout: Handout) -> str:
    """The whole handout as one HTML document (UTF-8 text)."""
    w = handout.words
    meta = [(w.model_label, handout.model), (w.sentence_label, handout.sentence)]
    if handout.class_code:
        meta.append((w.class_label, handout.class_code))
    dl = "".join(f"<dt>{_e(k)}:</dt><dd>{_e(v)}</dd>" for k, v in meta)
    steps = "".join(_step_html(i, s, w) for i, s in enumerate(handout.steps, start=1))
    return ("<!DOCTYPE html>\n"
            f'<html lang="{_e(w.lang)}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(handout.title)}</title><style>{STYLE}</style></head>"
            f'<body><h1>{_e(handout.title)}</h1><dl class="meta">{dl}</dl>{steps}</body></html>\n')
