"""A live class poll for the lessons' questions: state only, no Streamlit.

A teacher opens a class for one lesson; students answer each step's question under the class's
short code. Everything is anonymous: an answer is stored under a random id the student's browser
keeps for itself (no name, no address), one answer per id per step, and a new answer from the
same id replaces the old one.

Two stores keep the state behind one interface, ``PollStore``: this process's memory by default
(``ClassPoll``; the app holds one in ``st.cache_resource``; nothing to install, and a restart of
the server ends every class), or, when ``BERT_EXPLORER_POLL_REDIS`` names a Redis server, that
server (``serving.classpoll_redis.RedisClassPoll``), shared by every replica and surviving their
restarts (deploy/README.md says why a shared store rather than routing by class at the proxy).
Every argument is checked by the same functions here (``check_*``) in both stores.

Bounded: at most ``max_classes`` classes, ``max_sessions`` answering ids per class. A class is
*in use* once ``min_students`` (3) different students have answered it. A class in use with no
answer and no teacher action for ``idle_s`` seconds (4 hours) is gone; a class not yet in use is
gone ``unanswered_s`` seconds (20 minutes) after its last answer or teacher action, and when every
slot is taken, the class not in use that has been silent longest yields its slot to a new one.
So a visitor who starts a class and answers it once or twice (any browser can be a student of
its own class) holds its slot minutes, not hours, and never against a real teacher's start.

Who starts classes is bounded too (``Starter``: hashes of the browser's anonymous id and of its
network address, never either in clear): at most ``BROWSER_CLASSES`` live classes started from
one browser and ``NETWORK_CLASSES`` from one address, checked in the same step as the start (one
Lua script in Redis). A server may also ask for a teacher passphrase (the setting is
``core.settings.teacher_passphrase``; ``open_as_teacher`` checks it), compared in constant time,
with at most ``NETWORK_PASSPHRASE_TRIES`` wrong ones per address (``BROWSER_PASSPHRASE_TRIES``
per browser) in ``PASSPHRASE_WINDOW_S``. What these bounds leave possible: README, "The class
poll".

Codes are drawn with ``secrets`` from an alphabet without look-alike characters (no 0/O, 1/I/L);
6 of its 31 characters give ~887 million codes. The teacher's key (``secrets.token_urlsafe``,
kept by the teacher's browser in a cookie, never in a link) lets one reveal the answers and move
the class's step; the teacher's PIN (6 digits) hands the class to a new key when the teacher's
browser is lost, at most ``MAX_PIN_TRIES`` wrong PINs per class. Keys and PINs are stored hashed.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from core.errors import N_, ExplorerError

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"   # no 0/O, 1/I/L: read off a projector
CODE_LENGTH = 6
PIN_LENGTH = 6
MAX_CLASSES = 200
MAX_SESSIONS = 300          # answering ids per class
MAX_STEPS = 64
MAX_CHOICES = 16
MAX_PIN_TRIES = 10          # wrong PINs per class before reclaiming it is closed
IDLE_S = 4 * 3600.0         # a class with no answer or teacher action for this long is gone
UNANSWERED_S = 20 * 60.0    # a class not in use: gone this long after its last answer or
                            # teacher action
# A class is in use once this many students answered it. Three, not one: a visitor's second
# browser (or private window) answering its own class must not make it look like a lesson. A
# script makes ids at will: the starters' bounds below are what bound it.
MIN_STUDENTS = 3
# Live classes one browser may have started: a teacher's lessons of a morning, one started by
# mistake, one started again (a class nobody answers ends 20 minutes after its last step).
BROWSER_CLASSES = 4
# Live classes one network address may have started. A school's devices often share one address:
# 40 is ten rooms over four lesson periods (a class in use lives 4 hours after its last answer),
# and a fifth of the server, so no single address can take more than that.
NETWORK_CLASSES = 40
# Wrong teacher passphrases allowed in a window: a school's teachers mistyping at the start of
# a period fit, a guesser gets 80 tries an hour from one address.
PASSPHRASE_WINDOW_S = 15 * 60.0
NETWORK_PASSPHRASE_TRIES = 20
BROWSER_PASSPHRASE_TRIES = 5
MAX_PASSPHRASE_CHARS = 200
REDIS_ENV = "BERT_EXPLORER_POLL_REDIS"


class PollError(ExplorerError):
    """A class cannot be opened or answered (full, unknown code, a bad answer)."""


@dataclass(frozen=True)
class Tally:
    """One step's answers in one class: how many ids picked each choice."""

    step: int                  # 1-based
    counts: tuple[int, ...]    # one per choice
    revealed: bool

    @property
    def answered(self) -> int:
        return sum(self.counts)


@dataclass(frozen=True)
class ClassStatus:
    """What a student's page follows: the class's lesson, its teacher's step, the revealed
    steps."""

    lesson: str
    steps: int
    step: int                    # the teacher's current step, 1-based
    revealed: frozenset[int]


def network_of(address: object) -> str | None:
    """The network a client address counts under: an IPv4 address as it is, an IPv6 address's
    /64 (one household or device gets a whole /64, so counting single IPv6 addresses would give
    it 2**64 of them), an IPv4 address written as IPv6 as IPv4. None for no address or this
    machine itself (a teacher on the laptop that runs the app)."""
    if not isinstance(address, str) or not address.strip():
        return None
    text = address.strip()
    try:
        ip = ipaddress.ip_address(text.split("%")[0])   # an IPv6 zone ("%eth0") is no network
    except ValueError:
        return text[:200]                                # not an IP (a socket name): as given
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


def _digest(kind: str, value: str | None) -> str | None:
    return None if value is None else hashlib.sha256(f"{kind}:{value}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Starter:
    """Who starts a class, as the bounds count it: hashes of the browser's anonymous id and of
    its network (``network_of``), None where unknown (then that bound does not apply). The store
    keeps only these hashes, and only while the starter's classes or tries last."""

    browser: str | None
    network: str | None

    @classmethod
    def of(cls, browser_id: str | None, address: str | None) -> Starter:
        return cls(_digest("browser", browser_id), _digest("network", network_of(address)))


@runtime_checkable
class PollStore(Protocol):
    """What the lesson page needs of a store of classes (in memory, or in Redis)."""

    max_classes: int
    max_sessions: int
    idle_s: float
    unanswered_s: float
    min_students: int
    #: True when a class outlives a restart of this server (the shared store).
    durable: bool

    def open(self, code: str, teacher_key: str, lesson: str, choices: tuple[int, ...],
             pin: str | None = None, starter: Starter | None = None) -> bool: ...
    def take_passphrase_try(self, starter: Starter) -> str: ...
    def give_back_passphrase_try(self, starter: Starter, token: str) -> None: ...
    def reveal(self, code: str, teacher_key: str, step: int, shown: bool = True) -> None: ...
    def set_step(self, code: str, teacher_key: str, step: int) -> None: ...
    def reclaim(self, code: str, pin: str, new_key: str) -> bool: ...
    def is_teacher(self, code: str, teacher_key: str | None) -> bool: ...
    def lesson_of(self, code: object) -> str | None: ...
    def status(self, code: str) -> ClassStatus: ...
    def answer(self, code: str, step: int, session_id: str, choice: int) -> None: ...
    def withdraw(self, code: str, step: int, session_id: str) -> None: ...
    def choice_of(self, code: str, step: int, session_id: str) -> int | None: ...
    def tally(self, code: str, step: int) -> Tally: ...
    def tallies(self, code: str) -> list[Tally]: ...
    def __len__(self) -> int: ...


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


def new_pin() -> str:
    return "".join(secrets.choice("0123456789") for _ in range(PIN_LENGTH))


def new_session_id() -> str:
    """A student's anonymous id: random, made by the browser's session, tied to nothing."""
    return secrets.token_hex(8)


def hash_key(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def hash_pin(code: str, pin: str) -> bytes:
    return hashlib.sha256(f"pin:{code}:{pin}".encode()).digest()


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


def browser_full(limit: int) -> PollError:
    return PollError(N_("This browser already runs {limit} classes, its most at once: go on with "
                        "one of them, or start a new one when one has ended (a class that fewer "
                        "than {few} students have answered ends {minutes} minutes after its last "
                        "step)."), limit=limit, few=MIN_STUDENTS, minutes=int(UNANSWERED_S // 60))


def network_full(limit: int) -> PollError:
    return PollError(N_("{limit} classes started from this network are running already, its most "
                        "at once (the devices of a school often share one network address): "
                        "start a new one when one has ended."), limit=limit)


def passphrase_needed() -> PollError:
    return PollError(N_("This server asks for its teacher passphrase to start a class: type it "
                        "in the box above."))


def wrong_passphrase() -> PollError:
    return PollError(N_("That is not this server's teacher passphrase, so no class was started. "
                        "Whoever runs this server gives it to its teachers; the lesson itself "
                        "works without a class."))


def too_many_passphrases() -> PollError:
    return PollError(N_("Too many wrong teacher passphrases from this network or browser: try "
                        "again in {minutes} minutes."), minutes=int(PASSPHRASE_WINDOW_S // 60))


def too_many_students(limit: int) -> PollError:
    return PollError(N_("This class already has {limit} students, its most: your answer is not "
                        "counted."), limit=limit)


def not_a_step(count: int) -> PollError:
    return PollError(N_("This lesson has steps 1 to {count}."), count=count)


def not_a_choice() -> PollError:
    return PollError(N_("That is not one of the question's answers."))


def not_the_teacher() -> PollError:
    return PollError(N_("Only the class's teacher can show the answers."))


def too_many_pins() -> PollError:
    return PollError(N_("Too many wrong PINs for this class: it can no longer be reclaimed with "
                        "a PIN. Its teacher's own browser still has it."))


# -- one validation for both stores ------------------------------------------------------------

def check_code(code: object) -> str:
    normal = normalise_code(code)
    if normal is None:
        raise code_error(code)
    return normal


def check_choices(choices: tuple[int, ...]) -> tuple[int, ...]:
    """A lesson's questions: how many choices each has (a programming error if wrong)."""
    if not choices or len(choices) > MAX_STEPS or any(
            isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= MAX_CHOICES
            for c in choices):
        raise ValueError(f"a lesson needs 1 to {MAX_STEPS} questions of 1 to "
                         f"{MAX_CHOICES} choices, not {choices!r}")
    return tuple(choices)


def check_step(choices: tuple[int, ...], step: object) -> int:
    if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= len(choices):
        raise not_a_step(len(choices))
    return step


def check_choice(choices: tuple[int, ...], step: int, choice: object) -> int:
    if isinstance(choice, bool) or not isinstance(choice, int) or not (
            0 <= choice < choices[step - 1]):
        raise not_a_choice()
    return choice


def check_session(session_id: object) -> str:
    """An anonymous id: 8 to 64 letters, digits, - or _ (what a cookie can carry)."""
    if not isinstance(session_id, str) or not 8 <= len(session_id) <= 64 or not all(
            c.isascii() and (c.isalnum() or c in "-_") for c in session_id):
        raise PollError(N_("Your browser's anonymous id is not one this poll made: reload the "
                           "page to get a new one."))
    return session_id


def check_pin(pin: object) -> str | None:
    """The PIN as typed, spaces dropped, or None if it cannot be a PIN."""
    if not isinstance(pin, str):
        return None
    pin = pin.replace(" ", "").strip()
    return pin if len(pin) == PIN_LENGTH and pin.isdigit() else None


@dataclass
class _Class:
    lesson: str
    choices: tuple[int, ...]            # number of choices of each step's question
    key_hash: bytes                     # the teacher's key, never stored in clear
    pin_hash: bytes | None
    last_active: float
    starter: Starter | None = None
    step: int = 1
    pin_tries: int = 0
    answers: dict[int, dict[str, int]] = field(default_factory=dict)   # step -> id -> choice
    revealed: set[int] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)


class ClassPoll:
    """Every live class of this process, in its memory. See the module doc."""

    durable = False

    def __init__(self, *, max_classes: int = MAX_CLASSES, max_sessions: int = MAX_SESSIONS,
                 idle_s: float = IDLE_S, unanswered_s: float = UNANSWERED_S,
                 min_students: int = MIN_STUDENTS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_classes = max_classes
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self.unanswered_s = unanswered_s
        self.min_students = min_students
        self._clock = clock
        self._lock = threading.Lock()
        self._classes: dict[str, _Class] = {}
        self._tries: dict[str, deque[tuple[float, str]]] = {}   # wrong passphrases, by starter

    # -- the teacher ---------------------------------------------------------------------

    def open(self, code: str, teacher_key: str, lesson: str, choices: tuple[int, ...],
             pin: str | None = None, starter: Starter | None = None) -> bool:
        """Open class ``code`` with this teacher key (and PIN), or check the key of the class
        already open under it. True when ``teacher_key`` is the class's key.

        A new class from ``starter`` is refused (PollError) when that browser or network already
        has its most live classes. With every slot taken, the class not in use silent longest
        makes room; with none such, PollError (server full). PollError for a malformed code.
        """
        code = check_code(code)
        choices = check_choices(choices)
        key_hash = hash_key(teacher_key)
        pin_hash = None if pin is None else hash_pin(code, check_pin(pin) or "")
        with self._lock:
            self._expire()
            found = self._classes.get(code)
            if found is not None:
                if not hmac.compare_digest(found.key_hash, key_hash):
                    return False
                found.last_active = self._clock()
                return True
            if starter is not None:
                self._check_starter(starter)
            if len(self._classes) >= self.max_classes:
                silent = [(k.last_active, c) for c, k in self._classes.items()
                          if not self._in_use(k)]
                if not silent:
                    raise server_full(self.max_classes)
                del self._classes[min(silent)[1]]
            self._classes[code] = _Class(lesson, choices, key_hash, pin_hash, self._clock(),
                                         starter)
            return True

    def take_passphrase_try(self, starter: Starter) -> str:
        """Count one passphrase try of ``starter`` (before comparing it), or PollError when its
        network or browser has had too many wrong ones lately. Returns the try's token: a right
        passphrase gives it back (``give_back_passphrase_try``), so only wrong ones count."""
        token = secrets.token_hex(8)
        with self._lock:
            now = self._clock()
            logs = self._try_logs(starter, now)
            if any(len(log) >= limit for log, limit in logs):
                raise too_many_passphrases()
            for log, _limit in logs:
                log.append((now, token))
        return token

    def give_back_passphrase_try(self, starter: Starter, token: str) -> None:
        with self._lock:
            for log, _limit in self._try_logs(starter, self._clock()):
                for entry in [e for e in log if e[1] == token]:
                    log.remove(entry)

    def reveal(self, code: str, teacher_key: str, step: int, shown: bool = True) -> None:
        """Show (or hide again) step ``step``'s answer to the class's students."""
        with self._lock:
            found = self._teachers_class(code, teacher_key)
            check_step(found.choices, step)
            (found.revealed.add if shown else found.revealed.discard)(step)
            found.last_active = self._clock()

    def set_step(self, code: str, teacher_key: str, step: int) -> None:
        """The teacher moved to ``step``: the students who follow the class move with it."""
        with self._lock:
            found = self._teachers_class(code, teacher_key)
            found.step = check_step(found.choices, step)
            found.last_active = self._clock()

    def reclaim(self, code: str, pin: str, new_key: str) -> bool:
        """Hand the class to ``new_key`` if ``pin`` is its teacher's PIN (the old key stops
        working). False for a wrong PIN; PollError after ``MAX_PIN_TRIES`` wrong ones."""
        with self._lock:
            found = self._live(code)
            if found.pin_hash is None or found.pin_tries >= MAX_PIN_TRIES:
                raise too_many_pins()
            typed = check_pin(pin)
            if typed is None or not hmac.compare_digest(found.pin_hash,
                                                        hash_pin(check_code(code), typed)):
                found.pin_tries += 1
                return False
            found.key_hash = hash_key(new_key)
            found.last_active = self._clock()
            return True

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

    def status(self, code: str) -> ClassStatus:
        with self._lock:
            found = self._live(code)
            return ClassStatus(found.lesson, len(found.choices), found.step,
                               frozenset(found.revealed))

    def answer(self, code: str, step: int, session_id: str, choice: int) -> None:
        """Count ``choice`` as this id's answer to ``step`` (replacing an earlier one)."""
        with self._lock:
            found = self._live(code)
            check_step(found.choices, step)
            check_choice(found.choices, step, choice)
            check_session(session_id)
            if session_id not in found.sessions:
                if len(found.sessions) >= self.max_sessions:
                    raise too_many_students(self.max_sessions)
                found.sessions.add(session_id)
            found.answers.setdefault(step, {})[session_id] = choice
            found.last_active = self._clock()

    def withdraw(self, code: str, step: int, session_id: str) -> None:
        """Forget this id's answer to ``step`` (it cleared its choice)."""
        with self._lock:
            found = self._live(code)
            check_step(found.choices, step)
            check_session(session_id)
            found.answers.get(step, {}).pop(session_id, None)
            found.last_active = self._clock()

    def choice_of(self, code: str, step: int, session_id: str) -> int | None:
        with self._lock:
            found = self._live(code)
            check_step(found.choices, step)
            return found.answers.get(step, {}).get(session_id)

    # -- reading -------------------------------------------------------------------------

    def tally(self, code: str, step: int) -> Tally:
        with self._lock:
            found = self._live(code)
            check_step(found.choices, step)
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

    def _in_use(self, found: _Class) -> bool:
        return len(found.sessions) >= self.min_students

    def _expire(self) -> None:
        now = self._clock()
        gone = [c for c, k in self._classes.items()
                if now - k.last_active > (self.idle_s if self._in_use(k) else self.unanswered_s)]
        for code in gone:
            del self._classes[code]

    def _check_starter(self, starter: Starter) -> None:
        """Refuse a new class from a browser or network that already runs its most."""
        live = [k.starter for k in self._classes.values() if k.starter is not None]
        if starter.browser is not None and sum(
                s.browser == starter.browser for s in live) >= BROWSER_CLASSES:
            raise browser_full(BROWSER_CLASSES)
        if starter.network is not None and sum(
                s.network == starter.network for s in live) >= NETWORK_CLASSES:
            raise network_full(NETWORK_CLASSES)

    def _try_logs(self, starter: Starter, now: float,
                  ) -> list[tuple[deque[tuple[float, str]], int]]:
        """The wrong-passphrase logs of this starter's network and browser, old tries dropped
        (and every log emptied by time, so a script's many ids leave nothing behind)."""
        for name in [n for n, log in self._tries.items()
                     if not log or now - log[-1][0] > PASSPHRASE_WINDOW_S]:
            del self._tries[name]
        logs = []
        for name, limit in ((f"n:{starter.network}", NETWORK_PASSPHRASE_TRIES),
                            (f"b:{starter.browser}", BROWSER_PASSPHRASE_TRIES)):
            if name.endswith(":None"):
                continue
            log = self._tries.setdefault(name, deque())
            while log and now - log[0][0] > PASSPHRASE_WINDOW_S:
                log.popleft()
            logs.append((log, limit))
        return logs

    def _live(self, code: object) -> _Class:
        self._expire()
        found = self._classes.get(check_code(code))
        if found is None:
            raise unknown_class(code)
        return found

    def _teachers_class(self, code: str, teacher_key: str) -> _Class:
        found = self._live(code)
        if not hmac.compare_digest(found.key_hash, hash_key(teacher_key)):
            raise not_the_teacher()
        return found


def passphrase_matches(typed: str, expected: str) -> bool:
    """Whether ``typed`` is the passphrase, surrounding spaces aside, in constant time: the
    digests are compared (hmac.compare_digest), so neither the time nor its length tells a
    guesser how much of a guess was right."""
    return hmac.compare_digest(hashlib.sha256(typed.strip().encode()).digest(),
                               hashlib.sha256(expected.strip().encode()).digest())


def open_as_teacher(poll: PollStore, code: str, teacher_key: str, lesson: str,
                choices: tuple[int, ...], *, pin: str | None, starter: Starter,
                typed: str | None, passphrase: str | None) -> None:
    """Open a new class as a teacher asks it: with the server's teacher passphrase when it has
    one (``passphrase``; None: no passphrase asked), within the starter's bounds. PollError with
    the reason otherwise: no passphrase typed, a wrong one, too many wrong ones, the browser's or
    network's most classes, a full server."""
    if passphrase is not None:
        typed = (typed or "").strip()
        if not typed:
            raise passphrase_needed()
        token = poll.take_passphrase_try(starter)
        if len(typed) > MAX_PASSPHRASE_CHARS or not passphrase_matches(typed, passphrase):
            raise wrong_passphrase()
        poll.give_back_passphrase_try(starter, token)
    poll.open(code, teacher_key, lesson, choices, pin=pin, starter=starter)


def poll_from_environment() -> PollStore:
    """This process's poll: in memory, or on the Redis server ``BERT_EXPLORER_POLL_REDIS`` names
    (``redis://host:6379/0``), shared with the other replicas."""
    url = os.environ.get(REDIS_ENV, "").strip()
    if not url:
        return ClassPoll()
    from serving.classpoll_redis import RedisClassPoll

    return RedisClassPoll(url)
