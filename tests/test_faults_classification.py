"""Which exceptions mean "a service is away, come back later" (503) and which are bugs (500)."""

import errno

import pytest
from django.db import IntegrityError, InterfaceError, OperationalError, ProgrammingError
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from nvmedb.faults import unavailable_code


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (OperationalError("connection refused"), "database_unavailable"),
        (InterfaceError("connection already closed"), "database_unavailable"),
        (BrokerError("Error 111 connecting to redis"), "queue_unavailable"),
        (RedisConnectionError("Error 111"), "queue_unavailable"),
        (OSError(errno.ENOSPC, "No space left on device"), "storage_unavailable"),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), "storage_unavailable"),
        (OSError(errno.EROFS, "Read-only file system"), "storage_unavailable"),
    ],
)
def test_an_unavailable_service_is_named(exc, code):
    assert unavailable_code(exc) == code


@pytest.mark.parametrize(
    "exc",
    [
        IntegrityError("duplicate key"),
        ProgrammingError("syntax error"),
        ResponseError("WRONGTYPE"),
        OSError(errno.EACCES, "Permission denied"),
        FileNotFoundError(errno.ENOENT, "No such file"),
        ValueError("bug"),
    ],
)
def test_bugs_and_other_errors_stay_server_errors(exc):
    assert unavailable_code(exc) is None
