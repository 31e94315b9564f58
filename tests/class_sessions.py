"""A class over Streamlit's websocket protocol (bench/ws_client.py): a teacher's session that
starts a class and reveals a step, students' sessions that answer. Shared by the class poll's
load test and the proxy test."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qs, urlencode

from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.ws_client import RunResult, StreamlitSession

LESSON, STEP = "pretraining", 2
QUESTION = "What label does a token that was not picked get?"
CHOICES = ("-100", "0", "Its own id")


def click(session: StreamlitSession, label: str):
    """A button press: its trigger is sent once (the client would otherwise resend it)."""
    widget_id = session.widget_id(label)
    return widget_id, WidgetState(id=widget_id, trigger_value=True)


async def press(session: StreamlitSession, label: str,
                typed: Mapping[str, str] | None = None) -> RunResult:
    """A button press, with what was typed in text boxes (label -> text) before it."""
    widget_id, state = click(session, label)
    result = await session.rerun(widget_states={**(typed or {}), widget_id: state})
    session._states.pop(widget_id, None)   # a browser sends a trigger once, never again
    return result


async def presenter(base: str, cookies: dict[str, str] | None = None,
                    headers: Mapping[str, str] | None = None) -> StreamlitSession:
    """A teacher's presenter view of the lesson, before any class."""
    teacher = StreamlitSession(base, path="lesson", cookies=cookies, headers=headers,
                               timeout_s=60,
                               query=urlencode({"lesson": LESSON, "present": 1, "step": STEP}))
    await teacher.open()
    assert not teacher.first.exception, teacher.first.exceptions
    return teacher


async def try_start(teacher: StreamlitSession, passphrase: str | None = None,
                    ) -> tuple[str | None, RunResult]:
    """Press "Start a class" (after typing ``passphrase`` in its box): the new class's code, or
    None when the page refused (its message is in the result's texts)."""
    typed = {"Teacher passphrase": passphrase} if passphrase is not None else None
    result = await press(teacher, "Start a class", typed)
    assert not result.exception, result.exceptions
    return parse_qs(teacher.query_string).get("class", [None])[0], result


async def start_class(base: str, cookies: dict[str, str] | None = None,
                      passphrase: str | None = None) -> tuple[StreamlitSession, str]:
    """The teacher's presenter view, then "Start a class": returns the session and the code."""
    teacher = await presenter(base, cookies)
    code, result = await try_start(teacher, passphrase)
    assert code, (teacher.query_string, result.texts[:10])
    return teacher, code


async def student(base: str, code: str, cookies: dict[str, str] | None = None,
                  ) -> StreamlitSession:
    session = StreamlitSession(base, path="lesson", cookies=cookies, timeout_s=60,
                               query=urlencode({"class": code, "step": STEP}))
    await session.open()
    assert not session.first.exception, session.first.exceptions
    assert any(f"class {code}" in t for t in session.first.texts), session.first.texts[:10]
    return session


async def answer(session: StreamlitSession, choice: int) -> RunResult:
    result = await session.rerun(widget_states={QUESTION: CHOICES[choice]})
    assert not result.exception, result.exceptions
    return result


def answered(result: RunResult) -> int:
    """The teacher's "N answered" for the step."""
    for text in result.texts:
        match = re.fullmatch(r"(\d+) answered", text.strip())
        if match:
            return int(match.group(1))
    raise AssertionError(f"no count of answers in {result.texts[:20]}")


def revealed_counts(result: RunResult) -> tuple[int, ...]:
    """The counts written under the teacher's chart after the reveal, in choice order."""
    for text in result.texts:
        found = dict(re.findall(r"(-100|0|Its own id): \*\*(\d+)\*\*", text))
        if len(found) == len(CHOICES):
            return tuple(int(found[c]) for c in CHOICES)
    raise AssertionError(f"no revealed counts in {result.texts[:20]}")
