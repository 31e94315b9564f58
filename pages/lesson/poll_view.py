"""The class poll on the lesson page: the teacher starts a class from presenter mode, students
answer each step's question under its code, and the teacher reveals the answers with the class's
distribution beside them.

The poll lives in the server (``cache.get_class_poll()``: this process's memory, or the Redis store
replicas share). The teacher's key stays in the teacher's session, never in a link. The tally
and the reveal are drawn in fragments that rerun alone, every few seconds and only while
something can still change, so 30 students waiting cost 30 small fragment runs, not 30 page
runs.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

import segno
import streamlit as st

from components.i18n import N_, _
from components.labels import markdown_template
from pages.lesson import cache
from pages.lesson.figures import LESSONS, Step, answers_chart
from serving.classpoll import PollError, new_code, new_session_id, new_teacher_key, normalise_code

CLASS_KEY = "class"
TEACHER_REFRESH_S = 2.0      # the teacher's count of answers
STUDENT_REFRESH_S = 3.0      # a student waiting for the teacher to reveal


@dataclass(frozen=True)
class ClassView:
    code: str
    lesson: str
    teacher_key: str | None      # this session's key when it is the class's teacher

    @property
    def is_teacher(self) -> bool:
        return self.teacher_key is not None


def session_id() -> str:
    """This tab's anonymous id: random, kept only in the session."""
    if "poll_session_id" not in st.session_state:
        st.session_state["poll_session_id"] = new_session_id()
    return st.session_state["poll_session_id"]


def question_choices(lesson: str) -> tuple[int, ...]:
    return tuple(len(step.choices) for step in LESSONS[lesson][1])


NO_CLASS = N_("There is no class “{code}” on this server: it has ended or the code is "
               "mistyped. Here is the lesson without the class poll.")


def warn(template: str, params: dict[str, object]) -> None:
    """A poll message, translated from its template; its values (a code from a link) as text."""
    st.warning(markdown_template(_(template), **params), icon=":material/warning:")


def join_class() -> ClassView | None:
    """The class this link belongs to, or None (no class in the link, or one that is gone: then
    a message, and the lesson goes on without the poll)."""
    raw = st.query_params.get(CLASS_KEY)
    if raw is None:
        return None
    code = normalise_code(raw)
    poll = cache.get_class_poll()
    try:
        lesson = poll.lesson_of(code) if code is not None else None
        key = st.session_state.get(f"teacher_key_{code}")
        teacher = poll.is_teacher(code, key) if lesson is not None else False
    except PollError as exc:   # the shared store does not answer
        warn(exc.template, exc.params)
        return None
    if code is None or lesson is None:
        # The link's value, as text: a code span shows it verbatim, never as a link or image.
        warn(NO_CLASS, {"code": str(raw)[:40]})
        return None
    return ClassView(code, lesson, key if teacher else None)


def start_class(lesson: str) -> None:
    """Open a new class for this lesson, with this session as its teacher."""
    code, key = new_code(), new_teacher_key()
    try:
        cache.get_class_poll().open(code, key, lesson, question_choices(lesson))
    except PollError as exc:
        st.session_state["poll_error"] = (exc.template, exc.params)
        return
    st.session_state[f"teacher_key_{code}"] = key
    st.query_params[CLASS_KEY] = code
    st.query_params["lesson"] = lesson


def page_address() -> str:
    """This page's address as the browser shows it, without its query."""
    try:
        url = st.context.url or ""
    except AttributeError:   # AppTest has no browser address
        url = ""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}" if parts.netloc else "/lesson"


def student_link(code: str, step: int) -> str:
    return f"{page_address()}?{urlencode({CLASS_KEY: code, 'step': step})}"


def qr_png(link: str) -> bytes:
    buffer = io.BytesIO()
    segno.make(link, error="m").save(buffer, kind="png", scale=8, border=2)
    return buffer.getvalue()


def draw_start_class(lesson: str) -> None:
    """Presenter mode without a class: a button that opens this lesson as a new class."""
    with st.expander(_("Class poll"), icon=":material/how_to_vote:"):
        st.markdown(_("Start a class and your students answer each question on their own "
                      "device, anonymously; you see how many have answered and reveal the "
                      "answers when you choose."))
        st.button(_("Start a class"), on_click=start_class, args=(lesson,),
                  icon=":material/groups:", type="primary")
        error = st.session_state.pop("poll_error", None)
        if error:
            warn(*error)


def draw_class_banner(view: ClassView, step: int) -> None:
    """The code, the students' link and its QR code (teacher); the class's name (students)."""
    if not view.is_teacher:
        st.markdown(_("You are in class {code}: your answers are counted anonymously.").format(
            code=view.code))
        if st.query_params.get("present") == "1":
            st.info(_("This tab is not the class's teacher: the teacher's view, with the count "
                      "and the reveal, stays in the tab that started the class."),
                    icon=":material/info:")
        return
    link = student_link(view.code, step)
    with st.container(border=True, horizontal=True):
        st.image(qr_png(link), width=170, caption=_("Students scan this"))
        with st.container():
            st.markdown(_("Class code: **{code}**").format(code=view.code))
            st.markdown(_("Students open:"))
            st.code(link, language="text")


def draw_class_question(view: ClassView, number: int, step: Step) -> None:
    """The question in a class: the teacher's count and reveal, or a student's answer."""
    if view.is_teacher:
        _teacher_box(view, number, step)
    else:
        _student_box(view, number, step)


def _teacher_box(view: ClassView, number: int, step: Step) -> None:
    poll = cache.get_class_poll()
    try:
        revealed = poll.tally(view.code, number).revealed
    except PollError:
        revealed = False   # the box below says what is wrong, and keeps trying

    @st.fragment(run_every=None if revealed else TEACHER_REFRESH_S)
    def box() -> None:
        try:
            tally = poll.tally(view.code, number)
        except PollError as exc:
            warn(exc.template, exc.params)
            return
        with st.container(border=True):
            st.markdown("**" + _(step.question) + "**")
            st.markdown(_("{count} answered").format(count=tally.answered))
            if not tally.revealed:
                for i, choice in enumerate(step.choices):
                    st.markdown(f"{i + 1}. {_(choice)}")
                if st.button(_("Reveal the answer"), key=f"reveal_{number}",
                             icon=":material/visibility:"):
                    poll.reveal(view.code, view.teacher_key or "", number)
                    st.rerun()   # the whole page: this box stops refreshing
                return
            st.plotly_chart(answers_chart(step, tally), width="stretch",
                            config={"displayModeBar": False}, key=f"answers_{number}")
            st.markdown(" · ".join(f"{_(c)}: **{n}**" for c, n in zip(step.choices, tally.counts,
                                                                      strict=True)))
            st.success(_("The answer: “{answer}”. {why}").format(
                answer=_(step.choices[step.answer]), why=_(step.why)), icon=":material/check:")

    box()


def _student_box(view: ClassView, number: int, step: Step) -> None:
    poll = cache.get_class_poll()
    sid = session_id()
    key = f"class_q_{view.code}_{number}"

    def record() -> None:
        picked = st.session_state.get(key)
        try:
            if picked is None:
                poll.withdraw(view.code, number, sid)
            else:
                poll.answer(view.code, number, sid, int(picked))
        except PollError as exc:
            st.session_state["poll_error"] = (exc.template, exc.params)

    try:
        tally = poll.tally(view.code, number)
    except PollError as exc:
        warn(exc.template, exc.params)
        return
    waiting = not tally.revealed

    @st.fragment(run_every=STUDENT_REFRESH_S if waiting else None)
    def box() -> None:
        try:
            shown = poll.tally(view.code, number).revealed
        except PollError:
            shown = True   # the class ended: show the answer anyway
        with st.container(border=True):
            st.markdown("**" + _(step.question) + "**")
            guess = st.radio(_(step.question), range(len(step.choices)),
                             format_func=lambda i: _(step.choices[i]), index=None, key=key,
                             on_change=record, label_visibility="collapsed")
            error = st.session_state.pop("poll_error", None)
            if error:
                warn(*error)
            if not shown:
                st.markdown(_("Your answer is counted; the explanation shows when your teacher "
                              "reveals it.") if guess is not None else
                            _("Pick an answer: it is counted for the class, anonymously."))
            elif guess == step.answer:
                st.success(_("Right. {why}").format(why=_(step.why)), icon=":material/check:")
            else:
                st.info(_("The answer is “{answer}”. {why}").format(
                    answer=_(step.choices[step.answer]), why=_(step.why)),
                    icon=":material/lightbulb:")
        if shown and waiting:
            st.rerun()   # revealed: the whole page once, and this box stops refreshing

    box()
