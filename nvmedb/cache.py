"""A Redis cache that keeps the site serving while Redis is away.

The shared cache holds page statistics and rate-limit counters. When Redis refuses or times out, every operation is
done on this process's own memory instead (and logged), so pages render, sign-in and uploads work, and limits hold per
process until Redis answers again; a value kept locally during the outage is simply never read back afterwards.
"""

from __future__ import annotations

import functools
import logging
import time

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

REDIS_UNAVAILABLE = (RedisConnectionError, RedisTimeoutError)
# Short waits: a cache that does not answer at once costs every request the wait.
DEFAULT_OPTIONS = {"socket_connect_timeout": 0.5, "socket_timeout": 1.0}
WARN_EVERY_S = 60.0

FALLING_BACK = (
    "add", "get", "set", "touch", "delete", "get_many", "has_key", "incr", "set_many", "delete_many", "clear",
)  # fmt: skip


class FailOpenRedisCache(RedisCache):
    def __init__(self, server, params):
        params = {**params, "OPTIONS": {**DEFAULT_OPTIONS, **params.get("OPTIONS", {})}}
        super().__init__(server, params)
        local = {key: value for key, value in params.items() if key != "OPTIONS"}
        self._local = LocMemCache(f"fallback-{id(self)}", local)
        self._warned_at = -WARN_EVERY_S

    def _fall_back(self, operation: str, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned_at >= WARN_EVERY_S:
            self._warned_at = now
            logger.warning("Redis cache unavailable (%s); using this process's memory for %s", exc, operation)


def _with_fallback(name: str):
    remote = getattr(RedisCache, name)

    @functools.wraps(remote)
    def method(self, *args, **kwargs):
        try:
            return remote(self, *args, **kwargs)
        except REDIS_UNAVAILABLE as exc:
            self._fall_back(name, exc)
            return getattr(self._local, name)(*args, **kwargs)

    return method


for _name in FALLING_BACK:
    setattr(FailOpenRedisCache, _name, _with_fallback(_name))
