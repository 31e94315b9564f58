"""Lesson: the tutorials step by step, each cell as the student types it with its live output,
a question to answer before the answer shows, and a presenter mode for the projector."""

from dataclasses import dataclass

import streamlit as st

from components.analysis_view import encoding_of, model_of
from components.explain import explain, page_header
from components.i18n import N_, _
from components.input_key import InputKey
from components.inputs import DEFAULT_SENTENCE, shared_inputs
from core.lessons import setup_cell
from pages.lesson import cache
from pages.lesson.figures import LESSONS, Step

TITLE = N_("Lesson")
EXPLANATION = N_(
    "The tutorials, one step a screen. Each step shows the code exactly as you type it in a "
    "notebook, the output this model prints for your sentence, and a question: answer it "
    "before the answer shows. Run the cells yourself to check that you get the same output."
)
LESSON_KEY, STEP_KEY, PRESENT_KEY = "lesson", "step", "present"
# Presenter mode: no sidebar or controls, large type (our own CSS: no user text inside).
PRESENTER_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"] { display: none; }
.stMarkdown p, .stMarkdown li { font-size: 1.35rem; }
pre, code { font-size: 1.1rem !important; }
</style>"""


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    steps: tuple[Step, ...]
    step: int         # 1-based
    present: bool


def choose_lesson() -> Lesson:
    """The lesson and step from the controls, or from the link (?lesson=parameters&step=4).

    The lesson is carried by its key rather than by a bound control, whose link would hold its
    shown (translated) title.
    """
    present = st.query_params.get(PRESENT_KEY) == "1"
    key = _lesson_from_url()
    if not present:
        picked = st.segmented_control(
            _("Lesson"), list(LESSONS), format_func=lambda k: _(LESSONS[k][0]), default=key,
            key="lesson_pick", required=True)
        if picked != key:
            key = picked
            st.query_params[LESSON_KEY] = key
    title, steps = LESSONS[key]
    numbers = list(range(1, len(steps) + 1))
    asked = st.query_params.get(STEP_KEY)
    if asked is not None and asked not in {str(n) for n in numbers}:
        st.info(_("This lesson has steps 1 to {count}: showing step 1.").format(
            count=len(steps)), icon=":material/info:")
    step = st.select_slider(_("Step"), numbers, key=STEP_KEY, bind="query-params",
                            label_visibility="collapsed" if present else "visible")
    return Lesson(key, title, steps, int(step), present)


def _lesson_from_url() -> str:
    asked = st.query_params.get(LESSON_KEY)
    return asked if asked in LESSONS else "embedding"


def move(delta: int, count: int) -> None:
    """Previous / Next: the step control moves, and the link with it."""
    st.session_state[STEP_KEY] = min(count, max(1, int(st.session_state[STEP_KEY]) + delta))


def draw_navigation(lesson: Lesson) -> None:
    count = len(lesson.steps)
    st.progress(lesson.step / count, text=_("Step {step} of {count}").format(
        step=lesson.step, count=count))
    row = st.container(horizontal=True)
    row.button(_("Previous"), on_click=move, args=(-1, count), disabled=lesson.step == 1,
               icon=":material/arrow_back:")
    row.button(_("Next"), on_click=move, args=(1, count), disabled=lesson.step == count,
               icon=":material/arrow_forward:")


def lesson_sentence(key: InputKey) -> str:
    """Sentence A, as the tutorial's code takes it, or the tutorial's own sentence when A does
    not fit the model whole (the code cells tokenise without truncation, as the tutorial does)."""
    enc = encoding_of(key)   # also says what is wrong with the text, and stops if it must
    if enc.truncated or enc.chars_cut:
        st.info(_("The tutorial's code does not truncate, and this text does not fit the "
                  "model's {limit} positions: the lesson runs on “{sentence}” instead.").format(
            limit=model_of(key).config.max_position_embeddings, sentence=DEFAULT_SENTENCE),
            icon=":material/info:")
        return DEFAULT_SENTENCE
    if key.is_pair:
        st.info(_("The tutorial's code takes one sentence: the lesson runs on sentence A."),
                icon=":material/info:")
    return key.text_a


def draw_step(lesson: Lesson, key: InputKey) -> None:
    """The step's code, its live output, what to read in it, and the question."""
    step = lesson.steps[lesson.step - 1]
    sentence = lesson_sentence(key)
    st.subheader(f"{lesson.step}. {_(step.title)}")
    outputs = cache.lesson_outputs(key.with_texts(sentence), lesson.key)
    if lesson.step == 1:
        with st.expander(_("First, load the model (run once)"), expanded=True):
            st.code(setup_cell(key.model), language="python")
    cell = outputs[lesson.step - 1]
    st.code(cell.code, language="python")
    st.markdown(_("Output for {model}:").format(model=f"`{key.model}`"))
    st.code(cell.text or " ", language="text")
    explain(_(step.explanation))
    draw_question(lesson, step)


def draw_question(lesson: Lesson, step: Step) -> None:
    """Predict, then reveal: the answer shows only after a guess."""
    with st.container(border=True):
        st.markdown("**" + _(step.question) + "**")   # body size: read from the back row
        guess = st.radio(_(step.question), range(len(step.choices)),
                         format_func=lambda i: _(step.choices[i]), index=None,
                         key=f"lesson_q_{lesson.key}_{lesson.step}", label_visibility="collapsed")
        if guess is None:
            st.markdown(_("Pick an answer to see the explanation."))
        elif guess == step.answer:
            st.success(_("Right. {why}").format(why=_(step.why)), icon=":material/check:")
        else:
            st.error(_("Not quite: the answer is “{answer}”. {why}").format(
                answer=_(step.choices[step.answer]), why=_(step.why)), icon=":material/close:")


def main() -> None:
    key = shared_inputs()
    if st.query_params.get(PRESENT_KEY) == "1":
        st.html(PRESENTER_CSS)
        st.title(_(LESSONS[_lesson_from_url()][0]))
    else:
        page_header(TITLE, EXPLANATION)
    lesson = choose_lesson()
    draw_navigation(lesson)
    draw_step(lesson, key)


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
