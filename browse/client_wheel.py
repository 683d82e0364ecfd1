"""The client wheel this site serves at /client/, and the install steps the home page shows.

scripts/build-client-wheel.sh builds client/ into settings.NVMEDB_CLIENT_WHEEL_DIR (`make run` and the Docker image
run it). Only a regular file of that directory whose name is a client wheel's is served: a requested name is looked
up among the directory's entries, never joined to a path, so no name reaches another file."""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse

WHEEL_NAME = re.compile(r"nvmedb_client-(?P<version>[0-9][0-9A-Za-z.!+_]*)-py3-none-any\.whl")
CONTENT_TYPE = "application/zip"  # a wheel is a ZIP archive (PEP 427)
BUILD_COMMAND = "scripts/build-client-wheel.sh"
NOT_BUILT = (
    "This site has not built its client wheel yet. Its operator builds it with scripts/build-client-wheel.sh "
    "(`make run` and the Docker image do so).\n"
)


@dataclass(frozen=True)
class Wheel:
    name: str
    version: str
    path: Path
    size: int
    mtime_ns: int

    @property
    def sha256(self) -> str:
        return _sha256(self.path, self.size, self.mtime_ns)


def wheel_dir() -> Path:
    return Path(settings.NVMEDB_CLIENT_WHEEL_DIR)


def wheels() -> list[Wheel]:
    """The client wheels in the wheel directory, the newest first (the build script leaves one)."""
    try:
        entries = list(os.scandir(wheel_dir()))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in entries:
        match = WHEEL_NAME.fullmatch(entry.name)
        if match and entry.is_file(follow_symlinks=False):
            stat = entry.stat(follow_symlinks=False)
            found.append(Wheel(entry.name, match["version"], Path(entry.path), stat.st_size, stat.st_mtime_ns))
    return sorted(found, key=lambda wheel: (wheel.mtime_ns, wheel.name), reverse=True)


def current() -> Wheel | None:
    found = wheels()
    return found[0] if found else None


def find(name: str) -> Wheel | None:
    """The wheel called exactly `name`, or None."""
    if not WHEEL_NAME.fullmatch(name):
        return None
    return next((wheel for wheel in wheels() if wheel.name == name), None)


def not_found_message(found: list[Wheel]) -> str:
    if not found:
        return NOT_BUILT
    names = ", ".join(f"/client/{wheel.name}" for wheel in found)
    return f"No such file. This site serves only its client wheel: {names} (listed at /client/).\n"


@functools.lru_cache(maxsize=8)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:  # size and mtime key the cache: a rebuild changes them
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


def install_steps(request: HttpRequest) -> dict:
    """The site's own absolute URL and its wheel's, as the request reached the site, for the commands shown."""
    wheel = current()
    return {
        "site_url": request.build_absolute_uri("/").rstrip("/"),
        "client_wheel": wheel,
        "client_wheel_url": request.build_absolute_uri(reverse("client-wheel", args=[wheel.name])) if wheel else None,
        "client_build_command": BUILD_COMMAND,
    }
