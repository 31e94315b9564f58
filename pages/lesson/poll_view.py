"""The class poll on the lesson page: the teacher starts a class from presenter mode, students
answer each step's question under its code and follow the teacher's step, and the teacher
reveals the answers with the class's distribution beside them.

The poll lives in the server (``cache.get_class_poll()``: this process's memory, or the Redis store
replicas share). Two cookies, never a link, carry what must survive a reload of the same browser
(SameSite=Strict, path /, set by a one-line script: Streamlit reads cookies, ``st.context.cookies``,
but cannot set them from Python):
- the teacher's key, one cookie per class (``bx_teach_<CODE>``): a reload, a new tab or a
  reconnect of the teacher's browser gets the teacher's view back; nothing of it is on screen;
- a student's anonymous id (``bx_poll_id``): a reload answers as the same student, so a second
  answer replaces the first.
The teacher's PIN, shown only on request in the tab that started the class, hands the class to
another browser when the teacher's is lost. A server may ask for a teacher passphrase to start a
class (``BERT_EXPLORER_TEACHER_PASSPHRASE``): typed in a password box, used by the click that
starts the class and cleared at once, never in the link. Starts are counted per browser (its
anonymous id) and per network address (``client_address``). A student's page follows the
teacher's step and the reveal from one small fragment that rereads the class every few seconds.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

import segno
import streamlit as st

from components.i18n import N_, _, language, set_language
from components.labels import markdown_template
from core.settings import teacher_passphrase
from pages.lesson import cache
from pages.lesson.figures import LESSONS, Step, answers_chart
from serving.classpoll import (
    IDLE_S,
    MAX_PASSPHRASE_CHARS,
    MIN_STUDENTS,
    UNANSWERED_S,
    ClassStatus,
    PollError,
    Starter,
    check_session,
    new_code,
    new_pin,
    new_session_id,
    new_teacher_key,
    normalise_code,
    open_as_teacher,
)

CLASS_KEY = "class"
OWN_STEP_KEY = "poll_own_step"    # the student's switch "Stay on my own step"
TEACHER_REFRESH_S = 1.0           # the teacher's count of answers
FOLLOW_S = 3.0                    # a student's page rereads the class's step and reveal
ID_COOKIE = "bx_poll_id"
TEACHER_COOKIE = "bx_teach_"      # + the class code
ID_COOKIE_S = 12 * 3600           # how long a browser keeps its anonymous id
PENDING_COOKIES = "poll_cookies"  # session key: cookies this run asks the browser to keep
PASSPHRASE_KEY = "poll_passphrase"           # the teacher passphrase box of "Start a class"
PASSPHRASE_AGAIN_KEY = "poll_passphrase_again"   # ... and of "Start the class again"


@dataclass(frozen=True)
class ClassView:
    code: str
    lesson: str
    teacher_key: str | None      # this browser's key when it is the class's teacher
    status: ClassStatus

    @property
    def is_teacher(self) -> bool:
        return self.teacher_key is not None

    @property
    def follows(self) -> bool:
        """A student whose page moves with the teacher's step (the switch is off)."""
        return not self.is_teacher and not st.session_state.get(OWN_STEP_KEY, False)


# -- cookies -------------------------------------------------------------------------------------

def request_cookies() -> dict[str, str]:
    """The cookies the browser sent when this session's connection opened (none in AppTest)."""
    try:
        return dict(st.context.cookies)
    except Exception:   # noqa: BLE001 - no browser request behind this session (AppTest)
        return {}


def keep_cookie(name: str, value: str, max_age_s: int) -> None:
    """Ask the browser to keep a cookie (written by ``write_cookies`` at the end of the run)."""
    st.session_state.setdefault(PENDING_COOKIES, {})[name] = (value, max_age_s)


def write_cookies() -> None:
    """The cookies asked for and not yet in the browser's request, set by a one-line script.

    The values are our own random tokens (letters, digits, - and _), written as JSON string
    literals; nothing of them is drawn on screen. HttpOnly cannot be set from a script; SameSite
    Strict keeps them off requests from other sites, and Secure is added on HTTPS.
    """
    pending = st.session_state.get(PENDING_COOKIES) or {}
    sent = request_cookies()
    lines = [f"document.cookie = {json.dumps(f'{name}={value}; Max-Age={age}')} + tail;"
             for name, (value, age) in pending.items() if sent.get(name) != value]
    if lines:
        # In a block of its own: every script of the page shares one global scope, and a second
        # script's top-level "const tail" (a later run's cookie, say the teacher's after a
        # refused start) would be a SyntaxError that sets nothing.
        script = ("<script>{const tail = '; Path=/; SameSite=Strict' + "
                  "(location.protocol === 'https:' ? '; Secure' : '');" + "".join(lines)
                  + "}</script>")
        st.html(script, unsafe_allow_javascript=True)


def session_id() -> str:
    """This browser's anonymous id: from its cookie when it has one, else a new random one that
    the browser is asked to keep. Tied to nothing: no name, no address."""
    if "poll_session_id" not in st.session_state:
        found = request_cookies().get(ID_COOKIE)
        try:
            sid = check_session(found)
        except PollError:
            sid = new_session_id()
        st.session_state["poll_session_id"] = sid
    sid = st.session_state["poll_session_id"]
    keep_cookie(ID_COOKIE, sid, ID_COOKIE_S)
    return sid


def client_address() -> str | None:
    """The visitor's network address as the app's web server resolved it: the connection's
    peer, or, when that peer is a proxy the deployment trusts, the address the proxy put in
    X-Forwarded-For. Streamlit runs on uvicorn, whose proxy-header handling trusts the peers
    named by ``FORWARDED_ALLOW_IPS`` (default: this machine only; deploy/ sets it and makes the
    proxy write the header afresh). None on this machine itself and in AppTest."""
    try:
        return st.context.ip_address
    except Exception:   # noqa: BLE001 - no browser connection behind this session
        return None


def starter() -> Starter:
    """Who is starting a class, as the poll's bounds count it (hashes, not the id or address)."""
    return Starter.of(session_id(), client_address())


def teacher_key(code: str) -> str | None:
    """The teacher key this tab or this browser holds for class ``code``, if any."""
    return (st.session_state.get(f"teacher_key_{code}")
            or request_cookies().get(TEACHER_COOKIE + code))


def become_teacher(code: str, key: str) -> None:
    st.session_state[f"teacher_key_{code}"] = key
    keep_cookie(TEACHER_COOKIE + code, key, int(IDLE_S))


def question_choices(lesson: str) -> tuple[int, ...]:
    return tuple(len(step.choices) for step in LESSONS[lesson][1])


def warn(template: str, params: dict[str, object]) -> None:
    """A poll message, translated from its template; its values (a code from a link) as text."""
    st.warning(markdown_template(_(template), **params), icon=":material/warning:")


GONE_MEMORY = N_("There is no class “{code}” on this server now. A class lives in this server's "
                 "memory: a restart of the server ends it, as do {hours} hours without an answer "
                 "(or {minutes} minutes while fewer than {few} students have answered). The code "
                 "may also be mistyped.")
GONE_SHARED = N_("There is no class “{code}” on this server: it ended after {hours} hours "
                 "without an answer (or {minutes} minutes while fewer than {few} students had "
                 "answered), or the code is mistyped.")
JOIN_CODE_KEY = "poll_join_code"


def join_class() -> ClassView | None:
    """The class this link belongs to, or None (no class in the link, or one that is gone: then
    a message saying why, an offer to start or join again, and the lesson goes on without the
    poll)."""
    raw = st.query_params.get(CLASS_KEY)
    if raw is None:
        return None
    code = normalise_code(raw)
    poll = cache.get_class_poll()
    key = teacher_key(code) if code is not None else None
    try:
        status = poll.status(code) if code is not None else None
        teacher = key is not None and poll.is_teacher(code or "", key)
    except PollError as exc:
        if code is None or "no class" not in exc.template:   # the shared store does not answer
            warn(exc.template, exc.params)
            return None
        status, teacher = None, False
    if code is None or status is None:
        class_gone(str(raw)[:40], was_teacher=key is not None, durable=poll.durable)
        return None
    if teacher and key is not None:
        become_teacher(code, key)   # a key from the cookie, kept for this tab too
    return ClassView(code, status.lesson, key if teacher else None, status)


def class_gone(code: str, *, was_teacher: bool, durable: bool) -> None:
    """The class of the link no longer exists: say so in plain words, and offer a new start (to
    the browser that was its teacher) or another code (to a student)."""
    warn(GONE_SHARED if durable else GONE_MEMORY,
         {"code": code, "hours": int(IDLE_S // 3600), "minutes": int(UNANSWERED_S // 60),
          "few": MIN_STUDENTS})
    lesson = st.query_params.get("lesson")
    lesson = lesson if lesson in LESSONS else "embedding"
    with st.container(border=True):
        if was_teacher:
            st.markdown(_("You started this class in this browser. Start it again: your "
                          "students scan the new code, and the lesson goes on from this step."))
            passphrase_box(PASSPHRASE_AGAIN_KEY)
            st.button(_("Start the class again"), on_click=start_class,
                      args=(lesson, PASSPHRASE_AGAIN_KEY), icon=":material/groups:",
                      type="primary", key="poll_restart")
            error = st.session_state.pop("poll_error", None)
            if error:
                warn(*error)
        else:
            st.markdown(_("Ask your teacher for the class's new code and type it here, or go "
                          "on with the lesson on your own below."))
            st.text_input(_("Class code"), key=JOIN_CODE_KEY, on_change=join_code,
                          max_chars=12, placeholder="K7Q2AB")


def join_code() -> None:
    typed = normalise_code(st.session_state.get(JOIN_CODE_KEY))
    if typed is not None:
        st.query_params[CLASS_KEY] = typed


def passphrase_box(key: str) -> None:
    """The teacher passphrase's box, when this server asks for one (a password box: dots on
    screen, never in the link; the click that starts the class clears it)."""
    if teacher_passphrase() is None:
        return
    st.text_input(_("Teacher passphrase"), type="password", key=key,
                  max_chars=MAX_PASSPHRASE_CHARS,
                  help=_("This server asks teachers for a passphrase to start a class. Whoever "
                         "runs the server gives it to its teachers; students need none."))


def start_class(lesson: str, passphrase_key: str = PASSPHRASE_KEY) -> None:
    """Open a new class for this lesson, with this browser as its teacher (with the passphrase
    typed in ``passphrase_key``'s box when the server asks for one)."""
    typed = st.session_state.get(passphrase_key)
    if passphrase_key in st.session_state:
        st.session_state[passphrase_key] = ""   # used once, not kept in the box
    code, key, pin = new_code(), new_teacher_key(), new_pin()
    try:
        open_as_teacher(cache.get_class_poll(), code, key, lesson, question_choices(lesson),
                        pin=pin, starter=starter(), typed=typed, passphrase=teacher_passphrase())
    except PollError as exc:
        st.session_state["poll_error"] = (exc.template, exc.params)
        return
    become_teacher(code, key)
    st.session_state[f"teacher_pin_{code}"] = pin
    st.query_params[CLASS_KEY] = code
    st.query_params["lesson"] = lesson


def reclaim_class(code: str) -> None:
    """The PIN typed in this browser hands the class to it."""
    pin = st.session_state.get(f"poll_pin_{code}", "")
    key = new_teacher_key()
    try:
        ok = cache.get_class_poll().reclaim(code, pin, key)
    except PollError as exc:
        st.session_state["poll_error"] = (exc.template, exc.params)
        return
    if ok:
        become_teacher(code, key)
    else:
        st.session_state["poll_error"] = (N_("That is not this class's teacher PIN."), {})


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
        passphrase_box(PASSPHRASE_KEY)
        st.button(_("Start a class"), on_click=start_class, args=(lesson, PASSPHRASE_KEY),
                  icon=":material/groups:", type="primary")
        error = st.session_state.pop("poll_error", None)
        if error:
            warn(*error)


def lead_class(view: ClassView, step: int) -> None:
    """The teacher's page is on ``step``: the class's step, which following students take."""
    if view.is_teacher and view.status.step != step:
        try:
            cache.get_class_poll().set_step(view.code, view.teacher_key or "", step)
        except PollError as exc:
            warn(exc.template, exc.params)


def draw_class_banner(view: ClassView, step: int) -> None:
    """The code, the students' link, its QR code and the PIN on request (teacher); the class's
    name, the switch to stay on one's own step and the follower (students)."""
    if not view.is_teacher:
        _student_banner(view, step)
        return
    link = student_link(view.code, step)
    with st.container(border=True, horizontal=True):
        st.image(qr_png(link), width=170, caption=_("Students scan this"))
        with st.container():
            st.markdown(_("Class code: **{code}**").format(code=view.code))
            st.markdown(_("Students open:"))
            st.code(link, language="text")
    pin = st.session_state.get(f"teacher_pin_{view.code}")
    if pin and st.toggle(_("Show my teacher PIN (not on the projector)"), key="poll_show_pin"):
        st.warning(_("Teacher PIN: **{pin}**. Write it down and hide it again: with it, another "
                     "browser takes this class over if this one is lost. This browser gets the "
                     "class back by itself on a reload.").format(pin=pin),
                   icon=":material/key:")


def _student_banner(view: ClassView, step: int) -> None:
    st.markdown(_("You are in class {code}: your answers are counted anonymously.").format(
        code=view.code))
    st.toggle(_("Stay on my own step"), key=OWN_STEP_KEY,
              help=_("Off: your screen moves to the teacher's step by itself."))
    shown_revealed = step in view.status.revealed
    poll = cache.get_class_poll()

    @st.fragment(run_every=FOLLOW_S)
    def follower() -> None:
        try:
            status = poll.status(view.code)
        except PollError:
            st.rerun(scope="app")   # the class ended: the page says so
            return
        moved = view.follows and status.step != step
        if moved or (step in status.revealed) != shown_revealed:
            st.rerun(scope="app")

    follower()
    present = st.query_params.get("present") == "1"
    with st.expander(_("Are you this class's teacher?"), expanded=present):
        st.markdown(_("The browser that started the class gets it back by itself, on a reload "
                      "or in a new tab. From another browser, type the teacher PIN shown when "
                      "the class started."))
        st.text_input(_("Teacher PIN"), type="password", key=f"poll_pin_{view.code}",
                      max_chars=12, on_change=reclaim_class, args=(view.code,))
        error = st.session_state.pop("poll_error", None)
        if error:
            warn(*error)


def draw_class_question(view: ClassView, number: int, step: Step) -> None:
    """The question in a class: the teacher's count and reveal, or a student's answer."""
    if view.is_teacher:
        _teacher_box(view, number, step)
    else:
        _student_box(view, number, step)


def _teacher_box(view: ClassView, number: int, step: Step) -> None:
    poll = cache.get_class_poll()
    revealed = number in view.status.revealed
    lang = language()

    @st.fragment(run_every=None if revealed else TEACHER_REFRESH_S)
    def box() -> None:
        set_language(lang)   # a fragment's own rerun does not pass the router that sets it
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
    """The student's answer: a change reruns only this box (the follower, drawn with the banner,
    brings the reveal and the teacher's next step). A reload shows the answer this browser
    already gave."""
    poll = cache.get_class_poll()
    sid = session_id()
    key = f"class_q_{view.code}_{number}"
    shown = number in view.status.revealed
    if key not in st.session_state:
        try:
            given = poll.choice_of(view.code, number, sid)
        except PollError:
            given = None
        if given is not None and given < len(step.choices):
            st.session_state[key] = given

    def record() -> None:
        picked = st.session_state.get(key)
        try:
            if picked is None:
                poll.withdraw(view.code, number, sid)
            else:
                poll.answer(view.code, number, sid, int(picked))
        except PollError as exc:
            st.session_state["poll_error"] = (exc.template, exc.params)

    lang = language()

    @st.fragment
    def box() -> None:
        set_language(lang)   # a fragment's own rerun does not pass the router that sets it
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

    box()
