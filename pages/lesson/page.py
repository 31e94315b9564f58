"""Lesson: the tutorials step by step, each cell as the student types it with its live output,
a question to answer before the answer shows, a presenter mode for the projector, a class poll
(the teacher starts a class, students answer on their devices) and a handout to keep."""


import streamlit as st

from components.analysis_view import encoding_of, model_of
from components.cache import get_encoding
from components.downloads import safe_filename
from components.explain import explain, page_header
from components.i18n import N_, _, language, set_language
from components.input_key import InputKey
from components.inputs import DEFAULT_SENTENCE, shared_inputs
from components.job_progress import show_job
from components.labels import markdown_template
from components.unk_note import draw_unk_note
from components.url_values import option_in_link
from core.compare import LayerSimilarity
from core.lessons import setup_cell
from pages.lesson import cache, poll_view
from pages.lesson.figures import (
    LESSONS,
    LiveFigure,
    Step,
    lesson_handout,
    missing_head_note,
    random_cka_figures,
    random_cka_words,
)
from pages.lesson.handout import handout_html
from pages.lesson.poll_view import ClassView
from pages.lesson.records import Lesson
from serving.classpoll import PollError

TITLE = N_("Lesson")
EXPLANATION = N_(
    "The tutorials, one step a screen. Each step shows the code exactly as you type it in a "
    "notebook, the output this model prints for your sentence, and a question: answer it "
    "before the answer shows. Run the cells yourself to check that you get the same output: "
    "each cell's last line is wrapped in print(...), so it prints the same in a plain Python "
    "script as in a notebook."
)
LESSON_KEY, STEP_KEY, PRESENT_KEY = "lesson", "step", "present"
# Presenter mode: no sidebar or controls, large type (our own CSS: no user text inside).
PRESENTER_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"] { display: none; }
.stMarkdown p, .stMarkdown li { font-size: 1.35rem; }
[data-testid="stRadio"] label p { font-size: 1.35rem !important; line-height: 1.4; }
pre, code { font-size: 1.1rem !important; }
/* The step's output and its question on the first screen: less room above them, and no step
   slider (Previous and Next move the step). */
[data-testid="stMain"] [data-testid="stSlider"] { display: none; }
[data-testid="stMainBlockContainer"] { padding-top: 4.25rem; }  /* just below the top bar */
h1 { font-size: 2rem !important; padding: 0 !important; }
</style>"""


def choose_lesson(klass: ClassView | None = None) -> Lesson:
    """The lesson and step from the controls, or from the link (?lesson=parameters&step=4); in
    a class, the class's lesson.

    The lesson is carried by its key rather than by a bound control, whose link would hold its
    shown (translated) title.
    """
    present = st.query_params.get(PRESENT_KEY) == "1"
    key = klass.lesson if klass else _lesson_from_url()
    if klass and st.query_params.get(LESSON_KEY) != key:
        st.query_params[LESSON_KEY] = key
    if not present and not klass:
        picked = st.segmented_control(
            _("Lesson"), list(LESSONS), format_func=lambda k: _(LESSONS[k][0]), default=key,
            key="lesson_pick", required=True)
        if picked != key:
            key = picked
            st.query_params[LESSON_KEY] = key
    title, steps = LESSONS[key]
    numbers = list(range(1, len(steps) + 1))
    refused = option_in_link(STEP_KEY, numbers, lambda _n: set())[1]
    if klass and klass.follows and klass.status.step in numbers:
        st.session_state[STEP_KEY] = klass.status.step   # the class follows its teacher
    elif refused is not None:
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


def draw_navigation(lesson: Lesson, klass: ClassView | None = None) -> None:
    """Previous and Next (a student following the teacher's step moves with the class)."""
    count = len(lesson.steps)
    st.progress(lesson.step / count, text=_("Step {step} of {count}").format(
        step=lesson.step, count=count))
    led = bool(klass and klass.follows)
    row = st.container(horizontal=True)
    row.button(_("Previous"), on_click=move, args=(-1, count), disabled=led or lesson.step == 1,
               icon=":material/arrow_back:")
    row.button(_("Next"), on_click=move, args=(1, count), disabled=led or lesson.step == count,
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


def draw_step(lesson: Lesson, key: InputKey, klass: ClassView | None) -> str:
    """The step's code, its live output, what to read in it, and the question (the class's, in
    a class). Returns the sentence the lesson runs on."""
    step = lesson.steps[lesson.step - 1]
    sentence = lesson_sentence(key)
    st.subheader(f"{lesson.step}. {_(step.title)}")
    outputs = cache.get_lesson_outputs(key.with_texts(sentence), lesson.key)
    if lesson.step == 1:   # folded when presenting: the step's output comes first on screen
        with st.expander(_("First, load the model (run once)"), expanded=not lesson.present):
            st.code(setup_cell(key.model), language="python", wrap_lines=True)
    cell = outputs[lesson.step - 1]
    st.code(cell.code, language="python", wrap_lines=True)
    st.markdown(_("Output for {model}:").format(model=f"`{key.model}`"))
    # Wrapped: token_type_ids and attention_mask sat past the right edge at 1024 px.
    st.code(cell.text or " ", language="text", wrap_lines=True)
    if not lesson.present:
        explain(_(step.explanation))
    draw_unk_note(get_encoding(key.with_texts(sentence)), model_of(key), _(
        "Their rows in the outputs above are one and the same, so read this step's question "
        "for the other tokens."))
    note = missing_head_note(step, key.model, cache.missing_heads(key.model))
    if note:
        st.info(note, icon=":material/info:")
    if klass:
        poll_view.draw_class_question(klass, lesson.step, step)
    else:
        draw_question(lesson, step)
    if step.live is LiveFigure.RANDOM_CKA:
        draw_random_cka(key.model, answered=(lesson.step in klass.status.revealed) if klass
                        else st.session_state.get(question_key(lesson)) is not None)
    if lesson.present:   # after the question, so the output and the question fit one screen
        explain(_(step.explanation))
    return sentence


def draw_question(lesson: Lesson, step: Step) -> None:
    """Predict, then reveal: the answer shows only after a guess."""
    with st.container(border=True):
        st.markdown("**" + _(step.question) + "**")   # body size: read from the back row
        guess = st.radio(_(step.question), range(len(step.choices)),
                         format_func=lambda i: _(step.choices[i]), index=None,
                         key=question_key(lesson), label_visibility="collapsed")
        if guess is None:
            st.markdown(_("Pick an answer to see the explanation."))
        elif guess == step.answer:
            st.success(_("Right. {why}").format(why=_(step.why)), icon=":material/check:")
        else:
            st.error(_("Not quite: the answer is “{answer}”. {why}").format(
                answer=_(step.choices[step.answer]), why=_(step.why)), icon=":material/close:")


def question_key(lesson: Lesson) -> str:
    return f"lesson_q_{lesson.key}_{lesson.step}"


def draw_random_cka(model: str, answered: bool) -> None:
    """How alike the model and its random-weights copy are at the embedding output and at the
    last layer, shown with the answer. The corpus pass starts as the step opens, in the
    background, so it is often done by the time the student has answered."""
    job = cache.random_similarity_job(model)
    if not answered:
        return
    failed = _("The comparison with random weights stopped with an error. Reload the page to "
               "try again.")
    result = show_job(job, _("The built-in corpus through the model and its random copy: "
                             "{amount} ({seconds} s)"), failed)
    if result is None:
        return
    if not isinstance(result, LayerSimilarity):   # refused (never for one model)
        st.error(failed, icon=":material/error:")
        return
    first, last = random_cka_figures(result.cka)
    first_label, last_label, line = random_cka_words(result.cka.shape[0] - 1)
    with st.container(border=True):
        row = st.container(horizontal=True)
        row.metric(first_label, f"{first:.3f}", border=True)
        row.metric(last_label, f"{last:.3f}", border=True)
        explain(markdown_template(line, model=model, rows=f"{result.rows:,}",
                                  texts=f"{result.texts:,}"))
        st.page_link("pages/compare/page.py", icon=":material/compare_arrows:", label=_(
            "Every layer against every layer: the Compare page's layer map"))


def draw_handout(lesson: Lesson, key: InputKey, sentence: str, klass: ClassView | None) -> None:
    """One click: the whole lesson as a page to keep (built on the click, not on every run).

    Streamlit builds it when the browser asks for the file, outside this script run, so the
    run's language is carried into the build.
    """
    lang = language()

    def build() -> bytes:
        set_language(lang)
        outputs = cache.get_lesson_outputs(key.with_texts(sentence), lesson.key)
        tallies = None
        if klass:
            try:
                tallies = [t if t.revealed or klass.is_teacher else None
                           for t in cache.get_class_poll().tallies(klass.code)]
            except PollError:   # the class ended meanwhile: the handout without its answers
                tallies = None
        handout = lesson_handout(lesson.key, key.model, sentence, outputs,
                                 cache.missing_heads(key.model), tallies,
                                 klass.code if klass else None)
        return handout_html(handout).encode("utf-8")

    st.download_button(_("Download the lesson as a page to keep"), data=build,
                       file_name=f"{safe_filename(_(lesson.title))}.html", mime="text/html",
                       icon=":material/download:", on_click="ignore", key="lesson_handout")


def main() -> None:
    key = shared_inputs()
    klass = poll_view.join_class()
    present = st.query_params.get(PRESENT_KEY) == "1"
    if present:
        st.html(PRESENTER_CSS)
        st.title(_(LESSONS[klass.lesson if klass else _lesson_from_url()][0]))
    else:
        page_header(TITLE, EXPLANATION)
    lesson = choose_lesson(klass)
    if klass:
        poll_view.lead_class(klass, lesson.step)
        poll_view.draw_class_banner(klass, lesson.step)
    draw_navigation(lesson, klass)
    sentence = draw_step(lesson, key, klass)
    if present and not klass:   # below the step: the first screen stays the step's own
        poll_view.draw_start_class(lesson.key)
    draw_handout(lesson, key, sentence, klass)
    poll_view.write_cookies()


if __name__ == "__main__":   # Streamlit runs a page as __main__; tests import its names
    main()
