"""The lessons: every step renders with a sentence of one's own, its code cells run in plain
Python (transformers loaded by the student's own setup cell, in a fresh process) print exactly
what the page shows, and the answer shows only after a guess."""

from __future__ import annotations

import contextlib
import functools
import json
import subprocess
import sys

import pytest

from components.i18n import language, set_language, translations
from components.labels import markdown_text
from core import DEFAULT_MODEL, layer_similarity
from core.compare import random_weights
from core.contexts.corpus_data import NEIGHBOUR_CORPUS
from core.lessons import setup_cell
from pages.lesson.cache import LESSON_CELLS, get_class_poll, lesson_cells
from pages.lesson.figures import LESSONS, LiveFigure
from pages.lesson.poll_view import PASSPHRASE_KEY
from serving import jobs
from serving.classpoll import BROWSER_CLASSES
from tests.conftest import ROOT, assert_clean, open_app

PAGE = "pages/lesson/page.py"
SENTENCE = "Teachers explain embeddings slowly."

# The cells run twice in one fresh interpreter, each time in a namespace of its own: as a notebook
# (each cell's prints and the repr of a last bare expression, as Jupyter shows them), then as a
# plain Python script (nothing shown but what the code prints). Written here, apart from the
# app's runner, on purpose. One interpreter for both: starting one costs seconds of importing
# torch and transformers.
RUNNER = r"""
import ast, io, json, sys, contextlib
cells = json.loads(sys.argv[1])

def run(as_notebook):
    ns = {}
    outs = []
    for code in cells:
        buf = io.StringIO()
        tree = ast.parse(code)
        last = None
        if as_notebook and tree.body and isinstance(tree.body[-1], ast.Expr):
            last = tree.body.pop()
        with contextlib.redirect_stdout(buf):
            exec(compile(tree, "<cell>", "exec"), ns)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns)
                if value is not None:
                    print(repr(value))
        outs.append(buf.getvalue().rstrip("\n"))
    return outs[1:]

print(json.dumps({"notebook": run(True), "script": run(False)}))
"""


def plain_python(cells: list[str], runner: str = "notebook") -> list[str]:
    """What each cell prints in a fresh interpreter, as a ``"notebook"`` or a ``"script"``."""
    return list(_fresh_interpreter(tuple(cells))[runner])


@functools.cache   # a lesson's run serves both tests
def _fresh_interpreter(cells: tuple[str, ...]) -> dict[str, list[str]]:
    run = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps([setup_cell(DEFAULT_MODEL), *cells])],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def shown(at) -> tuple[str, str]:
    """The step's code cell and its output as the page shows them."""
    codes = [c.value for c in at.code]
    return codes[-2], codes[-1]


@pytest.mark.parametrize("lesson", list(LESSONS))
def test_every_step_prints_what_plain_python_prints(lesson):
    expected = plain_python(lesson_cells(lesson, SENTENCE))
    for number in range(1, len(LESSON_CELLS[lesson]) + 1):
        at = open_app(PAGE, a=SENTENCE, lesson=lesson, step=str(number))
        assert_clean(at)
        code, output = shown(at)
        assert code == lesson_cells(lesson, SENTENCE)[number - 1]
        assert output == expected[number - 1], (lesson, number)
        assert f"{number}." in at.subheader[0].value


@pytest.mark.parametrize("lesson", list(LESSONS))
def test_every_cell_prints_in_a_plain_script_what_a_notebook_shows(lesson):
    """Each cell's last line prints, so a student's script shows the page's output too."""
    cells = lesson_cells(lesson, SENTENCE)
    script = plain_python(cells, "script")
    assert all(script), [i for i, out in enumerate(script) if not out]
    assert script == plain_python(cells)


def test_the_printouts_are_the_tutorials():
    at = open_app(PAGE, a="This is a test sentence", step="1")
    assert "tensor([[ 101, 2023, 2003, 1037, 3231, 6251,  102]])" in shown(at)[1]
    at = open_app(PAGE, a="This is a test sentence", step="2")
    assert "grad_fn=<NativeLayerNormBackward0>" in shown(at)[1]
    at = open_app(PAGE, a="This is a test sentence", step="8")
    assert shown(at)[1] == "True"
    at = open_app(PAGE, lesson="parameters", step="3")
    assert shown(at)[1] == "31104"   # all-MiniLM-L6-v2's biases and LayerNorm weights


def test_answer_shows_only_after_a_guess():
    at = open_app(PAGE, step="5")
    assert not at.success and not at.error
    question = at.radio(key="lesson_q_embedding_5")
    question.set_value(0).run()      # [1, T, hidden size]: wrong for position_embeddings
    assert at.error and "[T, hidden size]" in at.error[0].value
    question.set_value(1).run()
    assert at.success and not at.error


def test_previous_next_and_garbage_steps():
    at = open_app(PAGE, step="abc")
    assert_clean(at)
    assert at.subheader[0].value.startswith("1.")
    at.button[1].click().run()       # Next
    assert at.subheader[0].value.startswith("2.") and at.query_params["step"] in ("2", ["2"])
    for value in ("99", "-1", "inf", "", "<img src=x onerror=alert(1)>"):
        at = open_app(PAGE, step=value)
        assert_clean(at)
        assert at.subheader[0].value.startswith("1.")


def test_presenter_mode_and_chinese():
    at = open_app(PAGE, present="1", step="3")
    assert_clean(at)
    assert at.subheader[0].value.startswith("3.")
    assert not at.get("segmented_control") or all(
        w.key != "lesson_pick" for w in at.get("segmented_control"))
    at = open_app(PAGE, lang="zh", step="2")
    assert_clean(at)
    assert at.title[0].value == "课程"


def test_the_pretraining_lesson_prints_the_tutorials_numbers():
    at = open_app(PAGE, lesson="pretraining", step="4", a="This is a test sentence")
    assert_clean(at)
    printed = shown(at)[1].splitlines()
    shares = {line.split(":")[0]: float(line.split(":")[1]) for line in printed}
    assert abs(shares["picked"] - 0.15) < 0.005
    assert abs(shares["[MASK]"] - 0.8) < 0.01 and abs(shares["random"] - 0.1) < 0.01
    at = open_app(PAGE, lesson="pretraining", step="6")
    assert shown(at)[1].endswith("tensor([[0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]])")
    # The embedded model has no pretraining heads: the head steps say so, naming it.
    at = open_app(PAGE, lesson="pretraining", step="3")
    assert any("cls.predictions" in i.value and DEFAULT_MODEL in i.value for i in at.info)
    at = open_app(PAGE, lesson="pretraining", step="7")
    assert any("cls.seq_relationship" in i.value for i in at.info)
    at = open_app(PAGE, lesson="pretraining", step="9", lang="zh")
    assert_clean(at)
    assert shown(at)[1].endswith("True")
    # Whole-word masking: the segmenter's words of 我爱北京天安门, and 天安门's three tokens.
    at = open_app(PAGE, lesson="pretraining", step="5")
    assert_clean(at)
    assert "['我', '爱', '北京', '天安门']" in shown(at)[1]
    assert "['天', '安', '[UNK]']" in shown(at)[1]


@pytest.fixture(scope="module")
def random_map(bundle):
    """core's map of the shipped model against its random weights over the built-in corpus's
    English sentences (the model's language), computed here apart from the page's job."""
    english = [r.sentence for r in NEIGHBOUR_CORPUS if r.language == "en"]
    return layer_similarity(bundle, random_weights(bundle), english)


def settle(at):
    """Wait for the page's background work, then rerun, as its progress card would."""
    for job in jobs.board().jobs():
        with contextlib.suppress(Exception):
            job.result(timeout=300)
    return at.run()


@pytest.mark.parametrize(("lang", "guess"), [("en", 1), ("zh", 0)])
def test_the_random_weights_step_shows_cores_figures_with_the_answer(random_map, lang, guess):
    """The pretraining lesson's last step: its cell checks CKA on the sentence (1 for itself,
    rotated, scaled); after a guess, right or wrong, the page shows core's CKA of the model
    against its random weights at the embedding output and at the last layer, in both
    languages."""
    steps = LESSONS["pretraining"][1]
    number = len(steps)
    assert steps[-1].live is LiveFigure.RANDOM_CKA
    at = open_app(PAGE, a=SENTENCE, lesson="pretraining", step=str(number), lang=lang)
    assert_clean(at)
    assert shown(at)[1] == "itself:  1.000\nrotated: 1.000\nscaled:  1.000"
    assert not at.metric                                     # nothing before the guess
    # The radio's labels are translated in the page's language: AppTest formats the choice it
    # sends back with the page's function, in this thread, so this thread reads that language.
    previous = language()
    set_language(lang)
    try:
        at.radio(key=f"lesson_q_pretraining_{number}").set_value(guess).run()
        settle(at)
    finally:
        set_language(previous)
    assert_clean(at)
    assert (at.success if guess == steps[-1].answer else at.error)
    t = translations(lang).gettext
    last = random_map.cka.shape[0] - 1
    assert [(m.label, m.value) for m in at.metric] == [
        (t("Embedding output (layer 0)"), f"{random_map.cka[0, 0]:.3f}"),
        (t("Last layer (layer {n})").format(n=last), f"{random_map.cka[-1, -1]:.3f}")]
    assert random_map.cka[0, 0] > random_map.cka[-1, -1]   # the answer the step gives
    assert any(f"`{random_map.rows:,}`" in m.value and f"`{random_map.texts}`" in m.value
               for m in at.markdown)


def test_the_random_weights_step_in_a_class_shows_its_figures_with_the_reveal(random_map):
    teacher = open_app(PAGE, lesson="pretraining", present="1",
                       step=str(len(LESSONS["pretraining"][1])))
    next(b for b in teacher.button if b.label == "Start a class").click().run()
    assert_clean(teacher)
    assert not teacher.metric
    next(b for b in teacher.button if b.label == "Reveal the answer").click().run()
    settle(teacher)
    assert_clean(teacher)
    assert [m.value for m in teacher.metric] == [f"{random_map.cka[0, 0]:.3f}",
                                                 f"{random_map.cka[-1, -1]:.3f}"]


def class_of(at) -> str:
    value = at.query_params["class"]
    return value[0] if isinstance(value, list) else value


def test_a_class_teacher_and_students_in_apptest():
    teacher = open_app(PAGE, lesson="pretraining", present="1", step="2")
    assert_clean(teacher)
    next(b for b in teacher.button if b.label == "Start a class").click().run()
    assert_clean(teacher)
    code = class_of(teacher)
    assert any(code in m.value for m in teacher.markdown)           # the code, big
    assert any(f"class={code}" in c.value for c in teacher.code)    # the students' link
    assert teacher.get("imgs") or teacher.get("image")               # its QR code
    # Three students answer step 2 (one changes its mind); no explanation before the reveal.
    picks = [0, 1, 0]
    students = []
    for pick in picks:
        student = open_app(PAGE, **{"class": code, "step": "2"})
        assert_clean(student)
        student.radio(key=f"class_q_{code}_2").set_value(pick).run()
        assert not student.success and not student.error
        students.append(student)
    students[1].radio(key=f"class_q_{code}_2").set_value(0).run()
    teacher.run()
    assert any("3 answered" in m.value for m in teacher.markdown)
    poll = get_class_poll()
    assert poll.tally(code, 2).counts == (3, 0, 0)
    # The reveal: the teacher sees the chart; a student sees the explanation on its next run.
    next(b for b in teacher.button if b.label == "Reveal the answer").click().run()
    assert_clean(teacher)
    chart = teacher.get("plotly_chart")[0].proto.spec
    assert '"x":[3,0,0]' in chart.replace(" ", "")
    students[0].run()
    assert students[0].success


def test_a_bad_or_expired_class_code_gives_the_lesson_without_the_poll():
    for code in ("ZZZZZZ", "<script>alert(1)</script>", "", "k7"):
        at = open_app(PAGE, **{"class": code, "step": "2"})
        assert_clean(at)
        assert at.warning and "no class" in at.warning[0].value
        assert at.radio(key="lesson_q_embedding_2") is not None


def test_the_pretraining_lesson_walks_through_in_chinese():
    for number, step in enumerate(LESSONS["pretraining"][1], start=1):
        at = open_app(PAGE, lesson="pretraining", step=str(number), lang="zh")
        assert_clean(at)
        title = at.subheader[0].value
        assert title.startswith(f"{number}.") and title != f"{number}. {step.title}"
        assert at.get("download_button"), "no handout button"


def test_a_second_presenter_tab_of_a_class_is_no_teacher():
    teacher = open_app(PAGE, lesson="pretraining", present="1")
    next(b for b in teacher.button if b.label == "Start a class").click().run()
    code = class_of(teacher)
    other = open_app(PAGE, present="1", **{"class": code, "step": "1"})
    assert_clean(other)
    assert any(e.label == "Are you this class's teacher?" for e in other.expander)
    assert not any(b.label == "Reveal the answer" for b in other.button)


def test_the_teachers_pin_is_shown_on_request_and_hands_the_class_to_another_browser():
    teacher = open_app(PAGE, lesson="pretraining", present="1", step="2")
    next(b for b in teacher.button if b.label == "Start a class").click().run()
    code = class_of(teacher)
    pin = teacher.session_state[f"teacher_pin_{code}"]
    assert len(pin) == 6 and pin.isdigit()
    on_screen = lambda at: " ".join(e.value for e in [*at.markdown, *at.warning, *at.code])  # noqa: E731
    assert pin not in on_screen(teacher)                       # nothing secret on the projector
    teacher.toggle(key="poll_show_pin").set_value(True).run()
    assert pin in on_screen(teacher)
    teacher.toggle(key="poll_show_pin").set_value(False).run()
    assert pin not in on_screen(teacher)
    # Another browser (the teacher's laptop died): a wrong PIN is refused, the right one works.
    other = open_app(PAGE, present="1", **{"class": code, "step": "2"})
    other.text_input(key=f"poll_pin_{code}").input("000000").run()
    assert any("not this class's teacher PIN" in w.value for w in other.warning)
    assert not any(b.label == "Reveal the answer" for b in other.button)
    other.text_input(key=f"poll_pin_{code}").input(pin).run()
    assert_clean(other)
    assert any(b.label == "Reveal the answer" for b in other.button)
    teacher.run()                                              # the old browser is no teacher
    assert not any(b.label == "Reveal the answer" for b in teacher.button)


def test_a_student_follows_the_teachers_step_unless_staying_on_their_own():
    teacher = open_app(PAGE, lesson="pretraining", present="1", step="2")
    next(b for b in teacher.button if b.label == "Start a class").click().run()
    code = class_of(teacher)
    student = open_app(PAGE, **{"class": code, "step": "5"})   # an old link's step
    assert student.subheader[0].value.startswith("2.")         # the teacher's step
    next(b for b in teacher.button if b.label == "Next").click().run()
    student.run()
    assert student.subheader[0].value.startswith("3.")
    assert all(b.disabled for b in student.button if b.label in ("Previous", "Next"))
    student.toggle(key="poll_own_step").set_value(True).run()
    next(b for b in student.button if b.label == "Previous").click().run()
    next(b for b in teacher.button if b.label == "Next").click().run()
    student.run()
    assert student.subheader[0].value.startswith("2.")        # stays on its own step


def test_a_class_lost_to_a_restart_says_so_and_offers_to_start_again():
    """The in-memory store after a restart of the server: no class any more. The teacher's
    browser (its key, which a cookie carries over a restart) is offered a new start; a student
    is told why and offered another code."""
    teacher = open_app(PAGE, lesson="pretraining", present="1", step="2")
    next(b for b in teacher.button if b.label == "Start a class").click().run()
    code = class_of(teacher)
    student = open_app(PAGE, **{"class": code, "step": "2"})
    get_class_poll.clear()                       # what a restart leaves: an empty poll
    for at in (teacher, student):
        at.run()
        assert_clean(at)
        assert any(f"no class “`{code}`” on this server now" in w.value
                   and "restart of the server ends it" in w.value for w in at.warning)
    assert not any(b.label == "Reveal the answer" for b in teacher.button)
    assert student.text_input(key="poll_join_code") is not None
    next(b for b in teacher.button if b.label == "Start the class again").click().run()
    assert_clean(teacher)
    new = class_of(teacher)
    assert new != code and any(b.label == "Reveal the answer" for b in teacher.button)
    student.text_input(key="poll_join_code").input(new.lower()).run()
    assert_clean(student)
    assert any(f"You are in class {new}" in m.value for m in student.markdown)


# -- a server that asks for a teacher passphrase --------------------------------------------------

PASSPHRASE = "maple orbit lantern 42"
PASSPHRASE_ENV = "BERT_EXPLORER_TEACHER_PASSPHRASE"


def on_screen(at) -> str:
    """Every text the page shows (and its link), to check the passphrase is nowhere."""
    texts = [e.value for kind in ("markdown", "warning", "info", "success", "error", "code",
                                  "caption", "title", "subheader") for e in at.get(kind)]
    return " ".join(map(str, texts)) + " " + repr(dict(at.query_params))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_server_with_a_teacher_passphrase(monkeypatch, lang):
    """Empty, wrong, then right: each a clear message in the reader's language, the page
    usable, the passphrase never on screen nor in the link, and the box emptied by each try."""
    monkeypatch.setenv(PASSPHRASE_ENV, PASSPHRASE)
    t = translations(lang).gettext
    at = open_app(PAGE, lesson="pretraining", present="1", step="2", lang=lang)
    assert_clean(at)
    box = at.text_input(key=PASSPHRASE_KEY)
    assert box.label == t("Teacher passphrase") and box.proto.type == box.proto.PASSWORD

    def press_start() -> None:
        next(b for b in at.button if b.label == t("Start a class")).click().run()
        assert_clean(at)

    press_start()                                            # nothing typed
    assert any(t("This server asks for its teacher passphrase to start a class: type it in the "
                 "box above.")[:12] in w.value for w in at.warning)
    for guess in ("maple orbit lantern", "<b>" + PASSPHRASE):
        at.text_input(key=PASSPHRASE_KEY).input(guess)
        press_start()
        wrong = t("That is not this server's teacher passphrase, so no class was started. "
                  "Whoever runs this server gives it to its teachers; the lesson itself works "
                  "without a class.")
        assert any(markdown_text(wrong)[:20] in w.value for w in at.warning), at.warning
        assert "class" not in at.query_params and at.text_input(key=PASSPHRASE_KEY).value == ""
        assert at.subheader[0].value.startswith("2.")       # the lesson goes on
        assert guess not in on_screen(at)
    at.text_input(key=PASSPHRASE_KEY).input(f" {PASSPHRASE} ")
    press_start()
    code = class_of(at)
    assert any(b.label == t("Reveal the answer") for b in at.button)
    assert PASSPHRASE not in on_screen(at) and "maple" not in on_screen(at)
    at.run()                                                 # the teacher's tab goes on
    assert class_of(at) == code and any(b.label == t("Reveal the answer") for b in at.button)
    # A student needs no passphrase.
    student = open_app(PAGE, lang=lang, **{"class": code, "step": "2"})
    assert_clean(student)
    assert student.radio(key=f"class_q_{code}_2") is not None


def test_a_server_without_a_passphrase_asks_for_none(monkeypatch):
    monkeypatch.delenv(PASSPHRASE_ENV, raising=False)
    at = open_app(PAGE, lesson="pretraining", present="1")
    assert not any(w.key == PASSPHRASE_KEY for w in at.text_input)
    next(b for b in at.button if b.label == "Start a class").click().run()
    assert_clean(at)
    assert class_of(at) and any(b.label == "Reveal the answer" for b in at.button)


def test_one_browser_starts_a_handful_of_classes(monkeypatch):
    """The page counts its browser's starts (its anonymous id): the fifth of one tab is refused
    with a message, and the lesson goes on."""
    monkeypatch.delenv(PASSPHRASE_ENV, raising=False)
    at = open_app(PAGE, lesson="pretraining", present="1")
    codes = set()
    for _ in range(BROWSER_CLASSES + 1):
        if "class" in at.query_params:
            del at.query_params["class"]
            at.run()
        next(b for b in at.button if b.label == "Start a class").click().run()
        assert_clean(at)
        if "class" in at.query_params:
            codes.add(class_of(at))
    assert len(codes) == BROWSER_CLASSES
    assert any(f"This browser already runs `{BROWSER_CLASSES}` classes" in w.value
               for w in at.warning), [w.value for w in at.warning]
