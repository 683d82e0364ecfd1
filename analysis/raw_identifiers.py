"""The identifiers a bundle names (analysis.privacy), gathered once per bundle and kept in the cache, so a raw-file
page scrubs every file of a bundle with the union of what all of its files name.

The ingest gathers them from the bundle it has just verified, whose files are already in memory, and caches them
once its rows are committed: the stored archive is not read a second time. A raw-file page whose bundle's set is
not cached (an older submission, a cache flushed) gathers it by reading the stored bundle
(browse.raw_files.collect_bundle_identifiers), which gives the same set.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import logging
from collections.abc import Iterator
from functools import partial

from django.core.cache import cache

from analysis import privacy

logger = logging.getLogger(__name__)
CACHE_SECONDS = 7 * 24 * 3600
READ_BYTES = 256 * 1024


def cache_key(storage_name: str) -> str:
    # the rules' version is part of the key, so a deploy that finds more identifiers does not serve old sets
    return f"raw-ids:{privacy.RULES_VERSION}:" + hashlib.sha256(storage_name.encode()).hexdigest()


def remember(storage_name: str, found: set[str]) -> None:
    try:
        cache.set(cache_key(storage_name), sorted(found), CACHE_SECONDS)
    except Exception:  # noqa: BLE001 - a cache outage only costs a re-read of the bundle
        logger.warning("raw-file identifiers of %s not cached", storage_name, exc_info=True)


def cached(storage_name: str) -> set[str] | None:
    try:
        found = cache.get(cache_key(storage_name))
    except Exception:  # noqa: BLE001
        return None
    return None if found is None else set(found)


def _text_pieces(stream) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while block := stream.read(READ_BYTES):
        yield decoder.decode(block)
    yield decoder.decode(b"", final=True)


def identifiers_of_file(path: str, size: int, stream, load=None) -> set[str]:
    """What one file names, read from `stream` (parsed whole up to privacy.MAX_PARSED_BYTES, by pattern beyond;
    `load`: privacy.identifiers_in_file's)."""
    if size <= privacy.MAX_PARSED_BYTES:
        return privacy.identifiers_in_file(path, stream.read(), load)
    return privacy.identifiers_in_chunks(_text_pieces(stream))


def identifiers_of_manifest(manifest: dict) -> set[str]:
    return privacy.identifiers_in_text(json.dumps(manifest, ensure_ascii=False))


def identifiers_of_verified(bundle) -> set[str]:
    """The union over the manifest and every listed file of a verified bundle (nvmedb_client.bundle.VerifiedBundle)."""
    manifest = json.loads(bundle.manifest_bytes) if bundle.manifest_bytes else bundle.manifest
    found = identifiers_of_manifest(manifest)
    for entry in manifest["files"]:
        path = entry["path"]
        with bundle.open(path) as stream:
            # the document the ingest parsed already (every fio output), not parsed again
            found |= identifiers_of_file(path, int(entry["size"]), stream, partial(bundle.json_document, path))
    return found


def remember_verified(storage_name: str, bundle) -> None:
    """Cache what `bundle` names under its stored name; run once the ingest's rows are committed. A bundle that can
    no longer be read here (closed already) only costs the first visitor of one of its raw files a read of it."""
    try:
        found = identifiers_of_verified(bundle)
    except Exception:  # noqa: BLE001 - only a cache warm-up: the submission's verdict does not depend on it
        logger.warning("raw-file identifiers of %s not gathered at ingest", storage_name, exc_info=True)
        return
    remember(storage_name, found)
