"""The drive page as anyone without a session sees it, cached whole and shared by every web process: one render per
change of what it shows, whichever worker the readers reach.

Its key (browse.drive_page.shared_page_key) is built only from what every process reads alike: the stored
summary's version, the drive's columns and this deployment's code and templates (`deployment_id`), never from
something a process draws for itself. When the key is new (a change, a deployment), the first reader to miss
renders and the others wait for its page (`render_once`) instead of each rendering the same page at once.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from functools import cache as once
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse

# long enough for a render under load; a lock left by a killed process lapses after it
LOCK_SECONDS = 10
WAIT_SECONDS = 2.0  # then a waiting reader renders the page itself rather than wait on a render that is late
POLL_SECONDS = 0.02
PAGE_SECONDS = 24 * 3600
# what a page is rendered by: code, templates and the static files' names (a deployment changes some of them)
RENDERED_BY = ("analysis", "browse", "datasets", "nvmedb", "reports", "submissions", "templates")
RENDERED_BY_SUFFIXES = (".py", ".html", ".txt")


@once
def deployment_id() -> str:
    """The same in every process of one deployment, new in the next: NVMEDB_DEPLOYMENT_ID when set (a release tag),
    else a digest of the files the page is rendered by and of the static files' manifest."""
    given = os.environ.get("NVMEDB_DEPLOYMENT_ID", "").strip()
    if given:
        return given[:40]
    digest = hashlib.sha256()
    base = Path(settings.BASE_DIR)
    for folder in RENDERED_BY:
        for path in sorted((base / folder).rglob("*")):
            if path.suffix in RENDERED_BY_SUFFIXES and "tests" not in path.relative_to(base).parts and path.is_file():
                digest.update(str(path.relative_to(base)).encode() + b"\0" + path.read_bytes() + b"\0")
    manifest = Path(settings.STATIC_ROOT) / "staticfiles.json"
    if manifest.is_file():
        digest.update(manifest.read_bytes())
    return digest.hexdigest()[:16]


def render_once(key: str, render: Callable[[], HttpResponse], *, store=None) -> HttpResponse:
    """The cached page under `key` (in `store`, by default the site's cache), else one render shared by every
    reader who misses at once: the first takes a short lock (cache.add) and renders; the others poll for its page up
    to WAIT_SECONDS, then render themselves. Only a 200 response is cached."""
    store = cache if store is None else store
    if (content := store.get(key)) is not None:
        return HttpResponse(content)
    lock = f"{key}:rendering"
    if store.add(lock, os.getpid(), LOCK_SECONDS):
        try:  # a render may have finished between the miss and the lock: look once more
            content = store.get(key)
            return HttpResponse(content) if content is not None else _rendered(store, key, render)
        finally:
            store.delete(lock)
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        if (content := store.get(key)) is not None:
            return HttpResponse(content)
        if not store.has_key(lock):  # the render finished: its page, or none to share (an error): render here
            content = store.get(key)
            if content is not None:
                return HttpResponse(content)
            break
    return _rendered(store, key, render)


def _rendered(store, key: str, render: Callable[[], HttpResponse]) -> HttpResponse:
    response = render()
    if response.status_code == 200:
        store.set(key, response.content, PAGE_SECONDS)
    return response
