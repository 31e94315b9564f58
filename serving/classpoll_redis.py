"""The class poll kept in Redis, for several replicas serving one class (deploy/README.md), and
for a class that outlives a restart of the app's server.

The same interface (``serving.classpoll.PollStore``), the same checks (``check_*``) and the same
answers as ``serving.classpoll.ClassPoll``; only where the state lives differs. Each class is four
keys under ``<prefix><CODE>:`` (``meta``: teacher key and PIN hashes, lesson, choices, the
teacher's step, revealed steps, wrong PINs; ``answers``: ``step:id`` -> choice; ``counts``:
``step:choice`` -> count; ``sessions``: the answering ids), all expiring after ``idle_s`` without
activity (Redis's own key expiry), or ``unanswered_s`` while the class has no answer; plus two
sorted sets of codes by last activity: every live class (which bounds their number) and those
without answers (the ones that yield their slot when the server is full). Every change is one
Lua script, so concurrent answers from any replica never lose a count. The scripts name a
class's keys from its code (eviction), so the store wants one Redis server, not a cluster.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar, cast

from core.errors import N_
from serving.classpoll import (
    IDLE_S,
    MAX_CLASSES,
    MAX_PIN_TRIES,
    MAX_SESSIONS,
    UNANSWERED_S,
    ClassStatus,
    PollError,
    Tally,
    check_choice,
    check_choices,
    check_code,
    check_pin,
    check_session,
    check_step,
    hash_key,
    hash_pin,
    normalise_code,
    not_the_teacher,
    server_full,
    too_many_pins,
    too_many_students,
    unknown_class,
)

_PARTS = ("meta", "answers", "counts", "sessions")
P = ParamSpec("P")
R = TypeVar("R")


def _store_errors(method: Callable[P, R]) -> Callable[P, R]:
    """A store that does not answer is a message for the page, not a stack trace."""
    @functools.wraps(method)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        import redis

        try:
            return method(*args, **kwargs)
        except redis.RedisError as exc:
            raise PollError(N_("The class poll's shared store does not answer, so answers "
                               "cannot be counted right now ({reason}). The lesson itself "
                               "goes on."), reason=type(exc).__name__) from exc

    return wrapped


# Every script's KEYS: meta, answers, counts, sessions, live index, unanswered index.
# touch(now, idle ms, unanswered ms, code): the class was active now; its keys live idle ms, or
# unanswered ms while nobody has answered.
_TOUCH = """
local function touch(now, idle, unanswered, code)
  local ttl = idle
  if redis.call('SCARD', KEYS[4]) == 0 then
    ttl = unanswered
    redis.call('ZADD', KEYS[6], now, code)
  else
    redis.call('ZREM', KEYS[6], code)
  end
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end
  redis.call('ZADD', KEYS[5], now, code)
end
local function purge(now, idle, unanswered)
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - idle / 1000)
  local stale = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', now - unanswered / 1000)
  for _, c in ipairs(stale) do
    redis.call('ZREM', KEYS[5], c)
    redis.call('ZREM', KEYS[6], c)
  end
end
"""

# ARGV: key hash, lesson, choices, now, idle ms, unanswered ms, max classes, code, pin hash
# ('' = none), prefix.
_OPEN = _TOUCH + """
local now, idle, unanswered = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
purge(now, idle, unanswered)
local found = redis.call('HGET', KEYS[1], 'key')
if found then
  if found ~= ARGV[1] then return 0 end
else
  if redis.call('ZCARD', KEYS[5]) >= tonumber(ARGV[7]) then
    local oldest = redis.call('ZRANGE', KEYS[6], 0, 0)
    if #oldest == 0 then return -1 end
    local p = ARGV[10] .. oldest[1] .. ':'
    redis.call('DEL', p .. 'meta', p .. 'answers', p .. 'counts', p .. 'sessions')
    redis.call('ZREM', KEYS[5], oldest[1])
    redis.call('ZREM', KEYS[6], oldest[1])
  end
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
  redis.call('HSET', KEYS[1], 'key', ARGV[1], 'lesson', ARGV[2], 'choices', ARGV[3],
             'step', '1', 'pin_tries', '0')
  if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'pin', ARGV[9]) end
end
touch(now, idle, unanswered, ARGV[8])
return 1
"""

# ARGV: step, id, choice ('' = withdraw), now, idle ms, unanswered ms, max sessions, code.
_ANSWER = _TOUCH + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
local field = ARGV[1] .. ':' .. ARGV[2]
if ARGV[3] ~= '' and redis.call('SISMEMBER', KEYS[4], ARGV[2]) == 0 then
  if redis.call('SCARD', KEYS[4]) >= tonumber(ARGV[7]) then return -1 end
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
touch(tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[8])
return 1
"""

# ARGV: key hash, what ('show', 'hide' or 'step'), step, now, idle ms, unanswered ms, code.
_TEACHER = _TOUCH + """
local found = redis.call('HGET', KEYS[1], 'key')
if not found then return -2 end
if found ~= ARGV[1] then return 0 end
if ARGV[2] == 'show' then
  redis.call('HSET', KEYS[1], 'r:' .. ARGV[3], '1')
elseif ARGV[2] == 'hide' then
  redis.call('HDEL', KEYS[1], 'r:' .. ARGV[3])
else
  redis.call('HSET', KEYS[1], 'step', ARGV[3])
end
touch(tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7])
return 1
"""

# ARGV: PIN hash ('' = not a PIN), new key hash, max tries, now, idle ms, unanswered ms, code.
_RECLAIM = _TOUCH + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
local pin = redis.call('HGET', KEYS[1], 'pin')
local tries = tonumber(redis.call('HGET', KEYS[1], 'pin_tries') or '0')
if not pin or tries >= tonumber(ARGV[3]) then return -3 end
if ARGV[1] == '' or pin ~= ARGV[1] then
  redis.call('HINCRBY', KEYS[1], 'pin_tries', 1)
  return 0
end
redis.call('HSET', KEYS[1], 'key', ARGV[2])
touch(tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7])
return 1
"""

# ARGV: now, idle ms, unanswered ms.
_COUNT = _TOUCH + """
purge(tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
return redis.call('ZCARD', KEYS[5])
"""


class RedisClassPoll:
    """``ClassPoll``'s interface on a Redis server shared by every replica."""

    durable = True

    def __init__(self, url: str, *, prefix: str = "bert-explorer:class:",
                 max_classes: int = MAX_CLASSES, max_sessions: int = MAX_SESSIONS,
                 idle_s: float = IDLE_S, unanswered_s: float = UNANSWERED_S,
                 clock: Callable[[], float] = time.time) -> None:
        import redis  # only a deployment with replicas needs it

        self._redis = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5,
                                           socket_connect_timeout=5, health_check_interval=30)
        self.prefix = prefix
        self.max_classes = max_classes
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self.unanswered_s = unanswered_s
        self._clock = clock
        self._open = self._redis.register_script(_OPEN)
        self._answer = self._redis.register_script(_ANSWER)
        self._teacher = self._redis.register_script(_TEACHER)
        self._reclaim = self._redis.register_script(_RECLAIM)
        self._count = self._redis.register_script(_COUNT)

    # -- keys ------------------------------------------------------------------------------

    def _keys(self, code: str) -> list[str]:
        return ([f"{self.prefix}{code}:{part}" for part in _PARTS]
                + [self.prefix + "live", self.prefix + "unanswered"])

    def _times(self) -> list[float | int]:
        """now, idle ms, unanswered ms."""
        return [self._clock(), max(1, int(self.idle_s * 1000)),
                max(1, int(self.unanswered_s * 1000))]

    def _meta(self, code: object) -> tuple[str, dict[str, str]]:
        normal = check_code(code)
        # decode_responses=True: redis-py hands back str, which its hints cannot say
        meta = cast("dict[str, str]", self._redis.hgetall(self._keys(normal)[0]))
        if not meta:
            raise unknown_class(code)
        return normal, meta

    @staticmethod
    def _choices(meta: dict[str, str]) -> tuple[int, ...]:
        return tuple(json.loads(meta["choices"]))

    # -- the teacher -----------------------------------------------------------------------

    @_store_errors
    def open(self, code: str, teacher_key: str, lesson: str, choices: tuple[int, ...],
             pin: str | None = None) -> bool:
        code = check_code(code)
        choices = check_choices(choices)
        pin_hash = "" if pin is None else hash_pin(code, check_pin(pin) or "").hex()
        result = self._open(keys=self._keys(code), args=[
            hash_key(teacher_key).hex(), lesson, json.dumps(list(choices)), *self._times(),
            self.max_classes, code, pin_hash, self.prefix])
        if result == -1:
            raise server_full(self.max_classes)
        return result == 1

    def _teacher_op(self, code: str, teacher_key: str, what: str, step: int) -> None:
        normal, meta = self._meta(code)
        check_step(self._choices(meta), step)
        result = self._teacher(keys=self._keys(normal), args=[
            hash_key(teacher_key).hex(), what, step, *self._times(), normal])
        if result == -2:
            raise unknown_class(code)
        if result == 0:
            raise not_the_teacher()

    @_store_errors
    def reveal(self, code: str, teacher_key: str, step: int, shown: bool = True) -> None:
        self._teacher_op(code, teacher_key, "show" if shown else "hide", step)

    @_store_errors
    def set_step(self, code: str, teacher_key: str, step: int) -> None:
        self._teacher_op(code, teacher_key, "step", step)

    @_store_errors
    def reclaim(self, code: str, pin: str, new_key: str) -> bool:
        normal = check_code(code)
        typed = check_pin(pin)
        result = self._reclaim(keys=self._keys(normal), args=[
            "" if typed is None else hash_pin(normal, typed).hex(), hash_key(new_key).hex(),
            MAX_PIN_TRIES, *self._times(), normal])
        if result == -2:
            raise unknown_class(code)
        if result == -3:
            raise too_many_pins()
        return result == 1

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
        if normal is None:
            return None
        # decode_responses=True: redis-py hands back str, which its hints cannot say
        return cast("str | None", self._redis.hget(self._keys(normal)[0], "lesson"))

    @_store_errors
    def status(self, code: str) -> ClassStatus:
        _, meta = self._meta(code)
        return ClassStatus(meta["lesson"], len(self._choices(meta)), int(meta.get("step", 1)),
                           frozenset(int(k[2:]) for k in meta if k.startswith("r:")))

    @_store_errors
    def answer(self, code: str, step: int, session_id: str, choice: int) -> None:
        normal, meta = self._meta(code)
        choices = self._choices(meta)
        check_step(choices, step)
        check_choice(choices, step, choice)
        self._run_answer(normal, step, check_session(session_id), str(choice))

    @_store_errors
    def withdraw(self, code: str, step: int, session_id: str) -> None:
        normal, meta = self._meta(code)
        check_step(self._choices(meta), step)
        self._run_answer(normal, step, check_session(session_id), "")

    def _run_answer(self, code: str, step: int, session_id: str, choice: str) -> None:
        result = self._answer(keys=self._keys(code), args=[
            step, session_id, choice, *self._times(), self.max_sessions, code])
        if result == -2:
            raise unknown_class(code)
        if result == -1:
            raise too_many_students(self.max_sessions)

    @_store_errors
    def choice_of(self, code: str, step: int, session_id: str) -> int | None:
        normal, meta = self._meta(code)
        check_step(self._choices(meta), step)
        found = self._redis.hget(self._keys(normal)[1], f"{step}:{session_id}")
        return None if found is None else int(found)

    # -- reading ---------------------------------------------------------------------------

    @_store_errors
    def tally(self, code: str, step: int) -> Tally:
        normal, meta = self._meta(code)
        choices = self._choices(meta)
        check_step(choices, step)
        counts = self._redis.hmget(self._keys(normal)[2],
                                   [f"{step}:{i}" for i in range(choices[step - 1])])
        return Tally(step, tuple(int(c or 0) for c in counts), f"r:{step}" in meta)

    @_store_errors
    def tallies(self, code: str) -> list[Tally]:
        _, meta = self._meta(code)
        return [self.tally(code, step) for step in range(1, len(self._choices(meta)) + 1)]

    @_store_errors
    def __len__(self) -> int:
        return int(self._count(keys=self._keys("AAAAAA"), args=self._times()))

    def __bool__(self) -> bool:   # a poll is a poll, even with no class in it
        return True
