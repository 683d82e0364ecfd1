"""Clear answers when a service the site depends on is away: 503 with Retry-After instead of a 500 page.

PostgreSQL refusing or dropping connections, the Redis broker refusing, or bundle storage being full, read-only or
(a bucket) unreachable are outages, not bugs: the client should come back later, and says so in a sentence. The DRF
exception handler covers the API (DRF catches exceptions before middleware sees them); the middleware covers every
other view.
"""

from __future__ import annotations

import errno
import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework.views import exception_handler as drf_exception_handler

from nvmedb.storage import StorageUnavailable

logger = logging.getLogger(__name__)

STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}

DETAILS = {
    "database_unavailable": "The database is unavailable at the moment; nothing was stored. Try again later.",
    "queue_unavailable": "The task queue is unavailable at the moment; nothing was stored. Try again later.",
    "storage_unavailable": "Bundle storage is full or unavailable at the moment; nothing was stored. Try again later.",
}


def unavailable_code(exc: BaseException) -> str | None:
    """Which service `exc` says is unavailable, or None when it is a bug (or the client's fault)."""
    if isinstance(exc, OperationalError | InterfaceError):
        return "database_unavailable"
    if isinstance(exc, BrokerError | RedisConnectionError | RedisTimeoutError):
        return "queue_unavailable"
    if isinstance(exc, StorageUnavailable) or (isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS):
        return "storage_unavailable"
    return None


def retry_after_s() -> int:
    return int(getattr(settings, "NVMEDB_RETRY_AFTER_S", 30))


def unavailable_response(code: str, *, json: bool) -> HttpResponse:
    detail = DETAILS[code]
    if json:
        response = JsonResponse({"code": code, "detail": detail}, status=503)
    else:
        response = HttpResponse(detail, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(retry_after_s())
    return response


def api_exception_handler(exc, context):
    """DRF's handler, plus 503 JSON {"code", "detail"} with Retry-After for an unavailable service."""
    response = drf_exception_handler(exc, context)
    if response is not None:
        return response
    code = unavailable_code(exc)
    if code is None:
        return None
    logger.warning("answered 503 %s: %r", code, exc)
    from rest_framework.response import Response

    response = Response({"code": code, "detail": DETAILS[code]}, status=503)
    response["Retry-After"] = str(retry_after_s())
    return response


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", "")


class ServiceUnavailableMiddleware:
    """Outside the API: the same 503, as plain text (or JSON when asked)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        code = unavailable_code(exc)
        if code is None:
            return None
        logger.warning("answered 503 %s for %s: %r", code, request.path, exc)
        return unavailable_response(code, json=_wants_json(request))
