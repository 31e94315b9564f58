"""A live class poll for the lessons' questions: state only, no Streamlit.

A teacher opens a class for one lesson; students answer each step's question under the class's
short code. Everything is anonymous: an answer is stored under a random id the student's session
made for itself (no name, no address), one answer per session per step, and a new answer from
the same session replaces the old one.

The state is one process's memory by default (the app holds one poll in ``st.cache_resource``):
nothing to install. With several replicas, ``BERT_EXPLORER_POLL_REDIS`` names a Redis server
they share (``serving.classpoll_redis``, same interface), so a class spread over replicas has one
tally (deploy/README.md says why a shared store rather than routing by class at the proxy).

Bounded: at most ``max_classes`` classes, ``max_sessions`` answering sessions per class; a class
with no answer (and no teacher action) for ``idle_s`` seconds is gone. Codes are drawn with
``secrets`` from an alphabet without look-alike characters (no 0/O, 1/I/L); 6 of its 31
characters give ~887 million codes, so a few hundred live classes leave a guess a chance below
one in a million. The teacher's key (``secrets.token_urlsafe``) is what lets one reveal the
answers; a student's link never holds it. Thread-safe: one lock around every change and read.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core.errors import N_, ExplorerError

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"   # no 0/O, 1/I/L: read off a projector
CODE_LENGTH = 6
MAX_CLASSES = 200
MAX_SESSIONS = 300          # answering sessions per class
MAX_STEPS = 64
MAX_CHOICES = 16
IDLE_S = 4 * 3600.0         # a class with no answer for this long is gone
REDIS_ENV = "BERT_EXPLORER_POLL_REDIS"


class PollError(ExplorerError):
    """A class cannot be opened or answered (full, unknown code, a bad answer)."""


@dataclass(frozen=True)
class Tally:
    """One step's answers in one class: how many sessions picked each choice."""

    step: int                  # 1-based
    counts: tuple[int, ...]    # one per choice
    revealed: bool

    @property
    def answered(self) -> int:
        return sum(self.counts)


@dataclass
class _Class:
    lesson: str
    choices: tuple[int, ...]            # number of choices of each step's question
    key_hash: bytes                     # the teacher's key, never stored in clear
    last_active: float
    answers: dict[int, dict[str, int]] = field(default_factory=dict)   # step -> session -> choice
    revealed: set[int] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)


def normalise_code(code: object) -> str | None:
    """The code as the app stores it (upper case, no spaces), or None if it cannot be one."""
    if not isinstance(code, str):
        return None
    code = code.strip().upper().replace(" ", "").replace("-", "")
    ok = len(code) == CODE_LENGTH and all(c in ALPHABET for c in code)
    return code if ok else None


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def new_teacher_key() -> str:
    return secrets.token_urlsafe(16)


def new_session_id() -> str:
    """A student's anonymous id: random, made by the session itself, tied to nothing."""
    return secrets.token_hex(8)


def hash_key(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


# The poll's messages, shared by both stores.
def code_error(code: object) -> PollError:
    return PollError(N_("“{code}” is not a class code: a code has {length} letters and digits."),
                     code=str(code)[:40], length=CODE_LENGTH)


def unknown_class(code: object) -> PollError:
    return PollError(N_("There is no class “{code}” on this server: it has ended or the code is "
                        "mistyped."), code=str(code)[:40])


def server_full(limit: int) -> PollError:
    return PollError(N_("This server already runs {limit} classes, its most at once: try again "
                        "when one has ended."), limit=limit)


def too_many_students(limit: int) -> PollError:
    return PollError(N_("This class already has {limit} students, its most: your answer is not "
                        "counted."), limit=limit)


def not_a_step(count: int) -> PollError:
    return PollError(N_("This lesson has steps 1 to {count}."), count=count)


def not_a_choice() -> PollError:
    return PollError(N_("That is not one of the question's answers."))


def not_the_teacher() -> PollError:
    return PollError(N_("Only the class's teacher can show the answers."))


class ClassPoll:
    """Every live class of this process. See the module doc."""

    def __init__(self, *, max_classes: int = MAX_CLASSES, max_sessions: int = MAX_SESSIONS,
                 idle_s: float = IDLE_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_classes = max_classes
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self._clock = clock
        self._lock = threading.Lock()
        self._classes: dict[str, _Class] = {}

    # -- the teacher ---------------------------------------------------------------------

    def open(self, code: str, teacher_key: str, lesson: str, choices: tuple[int, ...]) -> bool:
        """Open class ``code`` with this teacher key, or check the key of the class already
        open under it. True when ``teacher_key`` is the class's key (the caller is its teacher).

        Opening on first use (not when the code is drawn) lets the class live on the replica
        its code routes to. Raises PollError for a malformed code or lesson, or a full server.
        """
        code = self._code(code)
        if not choices or len(choices) > MAX_STEPS or any(
                not 1 <= c <= MAX_CHOICES for c in choices):
            raise ValueError(f"a lesson needs 1 to {MAX_STEPS} questions of 1 to "
                             f"{MAX_CHOICES} choices, not {choices!r}")
        key_hash = hash_key(teacher_key)
        with self._lock:
            self._expire()
            found = self._classes.get(code)
            if found is not None:
                if not hmac.compare_digest(found.key_hash, key_hash):
                    return False
                found.last_active = self._clock()
                return True
            if len(self._classes) >= self.max_classes:
                raise server_full(self.max_classes)
            self._classes[code] = _Class(lesson, tuple(choices), key_hash, self._clock())
            return True

    def reveal(self, code: str, teacher_key: str, step: int, shown: bool = True) -> None:
        """Show (or hide again) step ``step``'s answer to the class's students."""
        with self._lock:
            found = self._teachers_class(code, teacher_key)
            self._check_step(found, step)
            (found.revealed.add if shown else found.revealed.discard)(step)
            found.last_active = self._clock()

    def is_teacher(self, code: str, teacher_key: str | None) -> bool:
        with self._lock:
            self._expire()
            found = self._classes.get(normalise_code(code) or "")
            return (found is not None and teacher_key is not None
                    and hmac.compare_digest(found.key_hash, hash_key(teacher_key)))

    # -- students ------------------------------------------------------------------------

    def lesson_of(self, code: object) -> str | None:
        """The lesson of a live class, or None for a bad, unknown or expired code."""
        with self._lock:
            self._expire()
            found = self._classes.get(normalise_code(code) or "")
            return None if found is None else found.lesson

    def answer(self, code: str, step: int, session_id: str, choice: int) -> None:
        """Count ``choice`` as this session's answer to ``step`` (replacing an earlier one)."""
        with self._lock:
            found = self._live(code)
            self._check_step(found, step)
            if isinstance(choice, bool) or not isinstance(choice, int) or not (
                    0 <= choice < found.choices[step - 1]):
                raise not_a_choice()
            if session_id not in found.sessions:
                if len(found.sessions) >= self.max_sessions:
                    raise too_many_students(self.max_sessions)
                found.sessions.add(session_id)
            found.answers.setdefault(step, {})[session_id] = choice
            found.last_active = self._clock()

    def withdraw(self, code: str, step: int, session_id: str) -> None:
        """Forget this session's answer to ``step`` (it cleared its choice)."""
        with self._lock:
            found = self._live(code)
            found.answers.get(step, {}).pop(session_id, None)

    def choice_of(self, code: str, step: int, session_id: str) -> int | None:
        with self._lock:
            found = self._live(code)
            return found.answers.get(step, {}).get(session_id)

    # -- reading -------------------------------------------------------------------------

    def tally(self, code: str, step: int) -> Tally:
        with self._lock:
            found = self._live(code)
            self._check_step(found, step)
            counts = [0] * found.choices[step - 1]
            for choice in found.answers.get(step, {}).values():
                counts[choice] += 1
            return Tally(step, tuple(counts), step in found.revealed)

    def tallies(self, code: str) -> list[Tally]:
        """Every step's tally, in step order (for the teacher's overview and the handout)."""
        with self._lock:
            n_steps = len(self._live(code).choices)
        return [self.tally(code, step) for step in range(1, n_steps + 1)]

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._classes)

    def __bool__(self) -> bool:   # a poll is a poll, even with no class in it
        return True

    # -- inside the lock -----------------------------------------------------------------

    def _code(self, code: object) -> str:
        normal = normalise_code(code)
        if normal is None:
            raise code_error(code)
        return normal

    def _expire(self) -> None:
        now = self._clock()
        for code in [c for c, k in self._classes.items() if now - k.last_active > self.idle_s]:
            del self._classes[code]

    def _live(self, code: object) -> _Class:
        self._expire()
        found = self._classes.get(self._code(code))
        if found is None:
            raise unknown_class(code)
        return found

    def _teachers_class(self, code: str, teacher_key: str) -> _Class:
        found = self._live(code)
        if not hmac.compare_digest(found.key_hash, hash_key(teacher_key)):
            raise not_the_teacher()
        return found

    @staticmethod
    def _check_step(found: _Class, step: object) -> None:
        if isinstance(step, bool) or not isinstance(step, int) or not (
                1 <= step <= len(found.choices)):
            raise not_a_step(len(found.choices))


def poll_from_environment() -> ClassPoll:
    """This process's poll: in memory, or on the Redis server ``BERT_EXPLORER_POLL_REDIS`` names
    (``redis://host:6379/0``), shared with the other replicas."""
    url = os.environ.get(REDIS_ENV, "").strip()
    if not url:
        return ClassPoll()
    from serving.classpoll_redis import RedisClassPoll

    return RedisClassPoll(url)  # type: ignore[return-value] - the same interface
