"""The class poll kept in Redis, for several replicas serving one class (deploy/README.md), and
for a class that outlives a restart of the app's server.

The same interface (``serving.classpoll.PollStore``), the same checks (``check_*``) and the same
answers as ``serving.classpoll.ClassPoll``; only where the state lives differs. Each class is four
keys under ``<prefix><CODE>:`` (``meta``: teacher key and PIN hashes, lesson, choices, the
teacher's step, revealed steps, wrong PINs; ``answers``: ``step:id`` -> choice; ``counts``:
``step:choice`` -> count; ``sessions``: the answering ids), all expiring after ``idle_s`` without
activity (Redis's own key expiry), or ``unanswered_s`` while it is not in use; plus two
sorted sets of codes by last activity: every live class (which bounds their number) and those
not in use (fewer than ``min_students`` students: the ones that yield their slot when the
server is full). A class's meta also holds its starter's hashes, which ``open`` counts over the
live classes in the same script that opens one (so replicas starting classes at once cannot
pass a starter's bound); wrong teacher passphrases are sorted sets of tries under
``<prefix>tries:``, expiring with their window. Every change is one Lua script, so concurrent
answers from any replica never lose a count. The scripts name a class's keys from its code
(eviction, the starters' count), so the store wants one Redis server, not a cluster.
"""

from __future__ import annotations

import functools
import json
import secrets
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar, cast

from core.errors import N_
from serving.classpoll import (
    BROWSER_CLASSES,
    BROWSER_PASSPHRASE_TRIES,
    IDLE_S,
    MAX_CLASSES,
    MAX_PIN_TRIES,
    MAX_SESSIONS,
    MIN_STUDENTS,
    NETWORK_CLASSES,
    NETWORK_PASSPHRASE_TRIES,
    PASSPHRASE_WINDOW_S,
    UNANSWERED_S,
    ClassStatus,
    PollError,
    Starter,
    Tally,
    browser_full,
    check_choice,
    check_choices,
    check_code,
    check_pin,
    check_session,
    check_step,
    hash_key,
    hash_pin,
    network_full,
    normalise_code,
    not_the_teacher,
    server_full,
    too_many_passphrases,
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


# Every class script's KEYS: meta, answers, counts, sessions, live index, not-in-use index; its
# ARGV begins with now, idle ms, unanswered ms, min students, code. touch(): the class was active
# now; its keys live idle ms, or unanswered ms while fewer than min students have answered.
_TOUCH = """
local now, idle, unanswered = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local few, code = tonumber(ARGV[4]), ARGV[5]
local function touch()
  local ttl = idle
  if redis.call('SCARD', KEYS[4]) < few then
    ttl = unanswered
    redis.call('ZADD', KEYS[6], now, code)
  else
    redis.call('ZREM', KEYS[6], code)
  end
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end
  redis.call('ZADD', KEYS[5], now, code)
end
local function purge()
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - idle / 1000)
  local stale = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', now - unanswered / 1000)
  for _, c in ipairs(stale) do
    redis.call('ZREM', KEYS[5], c)
    redis.call('ZREM', KEYS[6], c)
  end
end
"""

# ARGV 6...: key hash, lesson, choices, max classes, pin hash ('' = none), prefix, starter's
# browser and network hashes ('' = unknown), their most live classes.
# Returns 1 (opened, or the teacher's own class), 0 (another key's class), -1 (server full),
# -2 (the browser's most), -3 (the network's most).
_OPEN = _TOUCH + """
purge()
local found = redis.call('HGET', KEYS[1], 'key')
if found then
  if found ~= ARGV[6] then return 0 end
else
  local browser, network = ARGV[12], ARGV[13]
  if browser ~= '' or network ~= '' then
    local by_browser, by_network = 0, 0
    for _, c in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
      local who = redis.call('HMGET', ARGV[11] .. c .. ':meta', 'browser', 'network')
      if browser ~= '' and who[1] == browser then by_browser = by_browser + 1 end
      if network ~= '' and who[2] == network then by_network = by_network + 1 end
    end
    if by_browser >= tonumber(ARGV[14]) then return -2 end
    if by_network >= tonumber(ARGV[15]) then return -3 end
  end
  if redis.call('ZCARD', KEYS[5]) >= tonumber(ARGV[9]) then
    local oldest = redis.call('ZRANGE', KEYS[6], 0, 0)
    if #oldest == 0 then return -1 end
    local p = ARGV[11] .. oldest[1] .. ':'
    redis.call('DEL', p .. 'meta', p .. 'answers', p .. 'counts', p .. 'sessions')
    redis.call('ZREM', KEYS[5], oldest[1])
    redis.call('ZREM', KEYS[6], oldest[1])
  end
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
  redis.call('HSET', KEYS[1], 'key', ARGV[6], 'lesson', ARGV[7], 'choices', ARGV[8],
             'step', '1', 'pin_tries', '0', 'browser', browser, 'network', network)
  if ARGV[10] ~= '' then redis.call('HSET', KEYS[1], 'pin', ARGV[10]) end
end
touch()
return 1
"""

# ARGV 6...: step, id, choice ('' = withdraw), max sessions.
_ANSWER = _TOUCH + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
local field = ARGV[6] .. ':' .. ARGV[7]
if ARGV[8] ~= '' and redis.call('SISMEMBER', KEYS[4], ARGV[7]) == 0 then
  if redis.call('SCARD', KEYS[4]) >= tonumber(ARGV[9]) then return -1 end
  redis.call('SADD', KEYS[4], ARGV[7])
end
local old = redis.call('HGET', KEYS[2], field)
if old then redis.call('HINCRBY', KEYS[3], ARGV[6] .. ':' .. old, -1) end
if ARGV[8] == '' then
  redis.call('HDEL', KEYS[2], field)
else
  redis.call('HSET', KEYS[2], field, ARGV[8])
  redis.call('HINCRBY', KEYS[3], ARGV[6] .. ':' .. ARGV[8], 1)
end
touch()
return 1
"""

# ARGV 6...: key hash, what ('show', 'hide' or 'step'), step.
_TEACHER = _TOUCH + """
local found = redis.call('HGET', KEYS[1], 'key')
if not found then return -2 end
if found ~= ARGV[6] then return 0 end
if ARGV[7] == 'show' then
  redis.call('HSET', KEYS[1], 'r:' .. ARGV[8], '1')
elseif ARGV[7] == 'hide' then
  redis.call('HDEL', KEYS[1], 'r:' .. ARGV[8])
else
  redis.call('HSET', KEYS[1], 'step', ARGV[8])
end
touch()
return 1
"""

# ARGV 6...: PIN hash ('' = not a PIN), new key hash, max tries.
_RECLAIM = _TOUCH + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
local pin = redis.call('HGET', KEYS[1], 'pin')
local tries = tonumber(redis.call('HGET', KEYS[1], 'pin_tries') or '0')
if not pin or tries >= tonumber(ARGV[8]) then return -3 end
if ARGV[6] == '' or pin ~= ARGV[6] then
  redis.call('HINCRBY', KEYS[1], 'pin_tries', 1)
  return 0
end
redis.call('HSET', KEYS[1], 'key', ARGV[7])
touch()
return 1
"""

_COUNT = _TOUCH + """
purge()
return redis.call('ZCARD', KEYS[5])
"""

# Wrong teacher passphrases. KEYS: the tries of the starter's network, then of its browser (each
# a sorted set of tokens by time, only those known). ARGV: now, window ms, the token, then each
# key's most tries. Returns 0 (counted) or the number of the key that had its most.
_TRY = """
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window / 1000)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[3 + i]) then return i end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[i], window)
end
return 0
"""


class RedisClassPoll:
    """``ClassPoll``'s interface on a Redis server shared by every replica."""

    durable = True

    def __init__(self, url: str, *, prefix: str = "bert-explorer:class:",
                 max_classes: int = MAX_CLASSES, max_sessions: int = MAX_SESSIONS,
                 idle_s: float = IDLE_S, unanswered_s: float = UNANSWERED_S,
                 min_students: int = MIN_STUDENTS,
                 clock: Callable[[], float] = time.time) -> None:
        import redis  # only a deployment with replicas needs it

        self._redis = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5,
                                           socket_connect_timeout=5, health_check_interval=30)
        self.prefix = prefix
        self.max_classes = max_classes
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self.unanswered_s = unanswered_s
        self.min_students = min_students
        self._clock = clock
        self._open = self._redis.register_script(_OPEN)
        self._answer = self._redis.register_script(_ANSWER)
        self._teacher = self._redis.register_script(_TEACHER)
        self._reclaim = self._redis.register_script(_RECLAIM)
        self._count = self._redis.register_script(_COUNT)
        self._try = self._redis.register_script(_TRY)

    # -- keys ------------------------------------------------------------------------------

    def _keys(self, code: str) -> list[str]:
        return ([f"{self.prefix}{code}:{part}" for part in _PARTS]
                + [self.prefix + "live", self.prefix + "unanswered"])

    def _times(self, code: str) -> list[float | int | str]:
        """What every class script's ARGV begins with: now, idle ms, unanswered ms, min
        students, code."""
        return [self._clock(), max(1, int(self.idle_s * 1000)),
                max(1, int(self.unanswered_s * 1000)), self.min_students, code]

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
             pin: str | None = None, starter: Starter | None = None) -> bool:
        code = check_code(code)
        choices = check_choices(choices)
        pin_hash = "" if pin is None else hash_pin(code, check_pin(pin) or "").hex()
        who = starter or Starter(None, None)
        result = self._open(keys=self._keys(code), args=[
            *self._times(code), hash_key(teacher_key).hex(), lesson, json.dumps(list(choices)),
            self.max_classes, pin_hash, self.prefix, who.browser or "", who.network or "",
            BROWSER_CLASSES, NETWORK_CLASSES])
        if result == -1:
            raise server_full(self.max_classes)
        if result == -2:
            raise browser_full(BROWSER_CLASSES)
        if result == -3:
            raise network_full(NETWORK_CLASSES)
        return result == 1

    def _try_keys(self, starter: Starter) -> tuple[list[str], list[int]]:
        """The starter's known tries logs (network first) and their most wrong tries."""
        keys, limits = [], []
        for kind, value, limit in (("n", starter.network, NETWORK_PASSPHRASE_TRIES),
                                   ("b", starter.browser, BROWSER_PASSPHRASE_TRIES)):
            if value is not None:
                keys.append(f"{self.prefix}tries:{kind}:{value}")
                limits.append(limit)
        return keys, limits

    @_store_errors
    def take_passphrase_try(self, starter: Starter) -> str:
        token = secrets.token_hex(8)
        keys, limits = self._try_keys(starter)
        if keys and self._try(keys=keys, args=[
                self._clock(), int(PASSPHRASE_WINDOW_S * 1000), token, *limits]) != 0:
            raise too_many_passphrases()
        return token

    @_store_errors
    def give_back_passphrase_try(self, starter: Starter, token: str) -> None:
        keys, _limits = self._try_keys(starter)
        for key in keys:
            self._redis.zrem(key, token)

    def _teacher_op(self, code: str, teacher_key: str, what: str, step: int) -> None:
        normal, meta = self._meta(code)
        check_step(self._choices(meta), step)
        result = self._teacher(keys=self._keys(normal), args=[
            *self._times(normal), hash_key(teacher_key).hex(), what, step])
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
            *self._times(normal), "" if typed is None else hash_pin(normal, typed).hex(),
            hash_key(new_key).hex(), MAX_PIN_TRIES])
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
            *self._times(code), step, session_id, choice, self.max_sessions])
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
        return int(self._count(keys=self._keys("AAAAAA"), args=self._times("AAAAAA")))

    def __bool__(self) -> bool:   # a poll is a poll, even with no class in it
        return True
