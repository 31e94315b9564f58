"""The class poll kept in Redis, for several replicas serving one class (deploy/README.md).

The same rules and answers as ``serving.classpoll.ClassPoll``; only where the state lives differs.
Each class is four keys under ``<prefix><CODE>:`` (``meta``: teacher key hash, lesson, choices,
revealed steps; ``answers``: ``step:session`` -> choice; ``counts``: ``step:choice`` -> count;
``sessions``: the answering sessions), all expiring after ``idle_s`` without activity (Redis's
own key expiry), plus one sorted set of live codes by last activity that bounds their number.
Every change is one Lua script, so concurrent answers from any replica never lose a count.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from core.errors import N_
from serving.classpoll import (
    IDLE_S,
    MAX_CHOICES,
    MAX_CLASSES,
    MAX_SESSIONS,
    MAX_STEPS,
    PollError,
    Tally,
    code_error,
    hash_key,
    normalise_code,
    not_a_choice,
    not_a_step,
    not_the_teacher,
    server_full,
    too_many_students,
    unknown_class,
)

_PARTS = ("meta", "answers", "counts", "sessions")
F = TypeVar("F", bound=Callable[..., Any])


def _store_errors(method: F) -> F:
    """A store that does not answer is a message for the page, not a stack trace."""
    @functools.wraps(method)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        import redis

        try:
            return method(*args, **kwargs)
        except redis.RedisError as exc:
            raise PollError(N_("The class poll's shared store does not answer, so answers "
                               "cannot be counted right now ({reason}). The lesson itself "
                               "goes on."), reason=type(exc).__name__) from exc

    return wrapped  # type: ignore[return-value]

# KEYS: meta, index. ARGV: key hash, lesson, choices, now, idle ms, max classes, code.
_OPEN = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[4]) - tonumber(ARGV[5]) / 1000)
local found = redis.call('HGET', KEYS[1], 'key')
if found then
  if found ~= ARGV[1] then return 0 end
else
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return -1 end
  redis.call('HSET', KEYS[1], 'key', ARGV[1], 'lesson', ARGV[2], 'choices', ARGV[3])
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[7])
return 1
"""

# KEYS: meta, answers, counts, sessions, index. ARGV: step, session, choice ('' = withdraw),
# now, idle ms, max sessions, code.
_ANSWER = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
local field = ARGV[1] .. ':' .. ARGV[2]
if ARGV[3] ~= '' and redis.call('SISMEMBER', KEYS[4], ARGV[2]) == 0 then
  if redis.call('SCARD', KEYS[4]) >= tonumber(ARGV[6]) then return -1 end
  redis.call('SADD', KEYS[4], ARGV[2])
end
local old = redis.call('HGET', KEYS[2], field)
if old then redis.call('HINCRBY', KEYS[3], ARGV[1] .. ':' .. old, -1) end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[2], field)
else
  redis.call('HSET', KEYS[2], field, ARGV[3])
  redis.call('HINCRBY', KEYS[3], ARGV[1] .. ':' .. ARGV[3], 1)
end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
redis.call('ZADD', KEYS[5], ARGV[4], ARGV[7])
return 1
"""

# KEYS: meta, answers, counts, sessions, index. ARGV: key hash, step, shown, now, idle ms, code.
_REVEAL = """
local found = redis.call('HGET', KEYS[1], 'key')
if not found then return -2 end
if found ~= ARGV[1] then return 0 end
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'r:' .. ARGV[2], '1')
else
  redis.call('HDEL', KEYS[1], 'r:' .. ARGV[2])
end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
redis.call('ZADD', KEYS[5], ARGV[4], ARGV[6])
return 1
"""


class RedisClassPoll:
    """``ClassPoll``'s interface on a Redis server shared by every replica."""

    def __init__(self, url: str, *, prefix: str = "bert-explorer:class:",
                 max_classes: int = MAX_CLASSES, max_sessions: int = MAX_SESSIONS,
                 idle_s: float = IDLE_S, clock: Callable[[], float] = time.time) -> None:
        import redis  # only a deployment with replicas needs it

        self._redis = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5,
                                           socket_connect_timeout=5, health_check_interval=30)
        self.prefix = prefix
        self.max_classes = max_classes
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self._clock = clock
        self._open = self._redis.register_script(_OPEN)
        self._answer = self._redis.register_script(_ANSWER)
        self._reveal = self._redis.register_script(_REVEAL)

    # -- keys ------------------------------------------------------------------------------

    @property
    def _index(self) -> str:
        return self.prefix + "live"

    def _keys(self, code: str) -> list[str]:
        return [f"{self.prefix}{code}:{part}" for part in _PARTS] + [self._index]

    def _idle_ms(self) -> int:
        return max(1, int(self.idle_s * 1000))

    def _code(self, code: object) -> str:
        normal = normalise_code(code)
        if normal is None:
            raise code_error(code)
        return normal

    def _meta(self, code: object) -> tuple[str, dict[str, str]]:
        normal = self._code(code)
        meta = self._redis.hgetall(self._keys(normal)[0])
        if not meta:
            raise unknown_class(code)
        return normal, meta

    @staticmethod
    def _choices(meta: dict[str, str]) -> tuple[int, ...]:
        return tuple(json.loads(meta["choices"]))

    @staticmethod
    def _check_step(choices: tuple[int, ...], step: object) -> None:
        if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= len(choices):
            raise not_a_step(len(choices))

    # -- the teacher -----------------------------------------------------------------------

    @_store_errors
    def open(self, code: str, teacher_key: str, lesson: str, choices: tuple[int, ...]) -> bool:
        code = self._code(code)
        if not choices or len(choices) > MAX_STEPS or any(
                not 1 <= c <= MAX_CHOICES for c in choices):
            raise ValueError(f"a lesson needs 1 to {MAX_STEPS} questions of 1 to "
                             f"{MAX_CHOICES} choices, not {choices!r}")
        keys = self._keys(code)
        result = self._open(keys=[keys[0], self._index], args=[
            hash_key(teacher_key).hex(), lesson, json.dumps(list(choices)), self._clock(),
            self._idle_ms(), self.max_classes, code])
        if result == -1:
            raise server_full(self.max_classes)
        return result == 1

    @_store_errors
    def reveal(self, code: str, teacher_key: str, step: int, shown: bool = True) -> None:
        normal, meta = self._meta(code)
        self._check_step(self._choices(meta), step)
        result = self._reveal(keys=self._keys(normal), args=[
            hash_key(teacher_key).hex(), step, "1" if shown else "0", self._clock(),
            self._idle_ms(), normal])
        if result == -2:
            raise unknown_class(code)
        if result == 0:
            raise not_the_teacher()

    @_store_errors
    def is_teacher(self, code: str, teacher_key: str | None) -> bool:
        normal = normalise_code(code)
        if normal is None or teacher_key is None:
            return False
        found = self._redis.hget(self._keys(normal)[0], "key")
        return found is not None and found == hash_key(teacher_key).hex()

    # -- students --------------------------------------------------------------------------

    @_store_errors
    def lesson_of(self, code: object) -> str | None:
        normal = normalise_code(code)
        return None if normal is None else self._redis.hget(self._keys(normal)[0], "lesson")

    @_store_errors
    def answer(self, code: str, step: int, session_id: str, choice: int) -> None:
        normal, meta = self._meta(code)
        choices = self._choices(meta)
        self._check_step(choices, step)
        if isinstance(choice, bool) or not isinstance(choice, int) or not (
                0 <= choice < choices[step - 1]):
            raise not_a_choice()
        self._run_answer(normal, step, session_id, str(choice))

    @_store_errors
    def withdraw(self, code: str, step: int, session_id: str) -> None:
        normal, meta = self._meta(code)
        self._check_step(self._choices(meta), step)
        self._run_answer(normal, step, session_id, "")

    def _run_answer(self, code: str, step: int, session_id: str, choice: str) -> None:
        result = self._answer(keys=self._keys(code), args=[
            step, session_id, choice, self._clock(), self._idle_ms(), self.max_sessions, code])
        if result == -2:
            raise unknown_class(code)
        if result == -1:
            raise too_many_students(self.max_sessions)

    @_store_errors
    def choice_of(self, code: str, step: int, session_id: str) -> int | None:
        normal, _ = self._meta(code)
        found = self._redis.hget(self._keys(normal)[1], f"{step}:{session_id}")
        return None if found is None else int(found)

    # -- reading ---------------------------------------------------------------------------

    @_store_errors
    def tally(self, code: str, step: int) -> Tally:
        normal, meta = self._meta(code)
        choices = self._choices(meta)
        self._check_step(choices, step)
        counts = self._redis.hmget(self._keys(normal)[2],
                                   [f"{step}:{i}" for i in range(choices[step - 1])])
        return Tally(step, tuple(int(c or 0) for c in counts), f"r:{step}" in meta)

    @_store_errors
    def tallies(self, code: str) -> list[Tally]:
        _, meta = self._meta(code)
        return [self.tally(code, step) for step in range(1, len(self._choices(meta)) + 1)]

    @_store_errors
    def __len__(self) -> int:
        self._redis.zremrangebyscore(self._index, "-inf", self._clock() - self.idle_s)
        return int(self._redis.zcard(self._index))

    def __bool__(self) -> bool:   # a poll is a poll, even with no class in it
        return True
