"""Versioned releases: numbered, immutable directories of the public tables, checksummed and citable.

A release N lives in `N/` of the "releases" storage: `NVMEDB_RELEASES_DIR/N/` on local disk, or `releases/N/` in the
S3-compatible bucket (nvmedb.settings.storages). It is written in full in a local temporary directory first. On local
disk that directory is a sibling (".building-…") published by one atomic `os.rename`; in a bucket its files are
uploaded with SHA256SUMS last, and a release exists only once its SHA256SUMS does. Either way readers see no release N
or all of it, and a build that dies midway leaves only what the next build removes. Published files are never
rewritten: a new build always takes the next number. Builds run one at a time: a PostgreSQL advisory lock, which holds
across machines, or a lock file on a single machine with SQLite. The storage mechanics are in release_store.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from django.core.cache import cache
from django.core.files.storage import Storage
from django.utils import timezone

from datasets import exports, writers
from datasets import release_store as store
from datasets.filters import Filters, rows_queryset
from datasets.release_store import SUMS
from datasets.tables import TABLES, Table
from nvmedb.durability import snapshot_transaction
from nvmedb.storage import StorageUnavailable, list_sizes, local_path, open_stream
from nvmedb_client import data_license
from submissions.selectors import withdrawn_submissions

RELEASE_FORMATS = ("csv", "parquet")
DATAPACKAGE = "datapackage.json"
CITATION = "CITATION.cff"
CHANGELOG = "CHANGELOG.md"
README = "README.md"
TEXT_FILES = frozenset({SUMS, CITATION, CHANGELOG, README})
TITLE = "nvmedb: NVMe SSD performance measured with the SNIA PTS"
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,100}$")
# A published release never changes: what was read of it is kept (a bucket costs one request per file read).
CACHE_SECONDS = 3600


@dataclass(frozen=True)
class ReleaseFile:
    name: str
    bytes: int
    sha256: str
    rows: int | None  # for table files


@dataclass(frozen=True)
class Release:
    number: int
    created: str
    files: tuple[ReleaseFile, ...]
    sums_bytes: int  # SHA256SUMS itself, which lists every other file

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    @property
    def table_rows(self) -> dict[str, int]:
        return {f.name.rsplit(".", 1)[0]: f.rows for f in self.files if f.name.endswith(".csv") and f.rows is not None}

    def citation_text(self, url: str = "") -> str:
        year = self.created[:4]
        where = f" {url}" if url else ""
        return f"nvmedb contributors ({year}). {TITLE}, release {self.number} [Data set].{where}"


@dataclass(frozen=True)
class BuildResult:
    number: int | None
    message: str


def list_releases() -> list[Release]:
    """Published releases, newest first."""
    storage = store.release_storage()
    numbers = sorted(store.numbers(storage), reverse=True)
    return [release for n in numbers if (release := get_release(n, storage=storage)) is not None]


def get_release(number: int, *, storage: Storage | None = None) -> Release | None:
    storage = storage or store.release_storage()
    key = f"release:{hashlib.sha256(store.storage_id(storage).encode()).hexdigest()[:16]}:{number}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    try:
        release = _read_release(storage, number)
    except StorageUnavailable:
        raise  # a 503, not "no such release"
    except (OSError, ValueError):
        return None
    if release is not None:
        cache.set(key, release, CACHE_SECONDS)
    return release


def _read_release(storage: Storage, number: int) -> Release | None:
    sizes = list_sizes(storage, str(number))
    if SUMS not in sizes or DATAPACKAGE not in sizes:
        return None  # not (yet) published
    package = json.loads(store.read_bytes(storage, f"{number}/{DATAPACKAGE}"))
    sums = store.parse_sums(store.read_bytes(storage, f"{number}/{SUMS}").decode())
    if not set(sums) <= set(sizes):
        return None
    rows = {r["path"]: r["rows"] for r in package.get("resources", []) if "rows" in r}
    files = tuple(
        ReleaseFile(
            name=name,
            bytes=sizes[name],
            sha256=digest,
            rows=rows.get(name, rows.get(name.rsplit(".", 1)[0] + ".csv")),
        )
        for name, digest in sums.items()
    )
    return Release(number=number, created=package.get("created", ""), files=files, sums_bytes=sizes[SUMS])


def release_file(number: int, name: str) -> tuple[str, int] | None:
    """The stored name and size of file `name` of release `number`, only if the release lists it (or it is the list
    itself)."""
    if not FILE_NAME.match(name):
        return None
    release = get_release(number)
    if release is None:
        return None
    if name == SUMS:
        return f"{number}/{SUMS}", release.sums_bytes
    listed = next((f for f in release.files if f.name == name), None)
    return (f"{number}/{name}", listed.bytes) if listed else None


def open_release_file(stored_name: str) -> BinaryIO:
    """A file of a published release (a name from `release_file`) as a binary stream."""
    return open_stream(store.release_storage(), stored_name)


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_table_file(table: Table, fmt: str, path: Path) -> int:
    """Write one table in one format to `path`; returns its row count (from the same snapshot)."""
    with open(path, "wb") as handle:
        for chunk in exports.export_stream(table, Filters(), fmt):
            handle.write(chunk)
        handle.flush()
        os.fsync(handle.fileno())
    return rows_queryset(table, Filters()).count()


def table_schema(table: Table) -> dict:
    return {
        "fields": [
            {"name": c.name, "type": c.type, "description": c.description, **({"unit": c.unit} if c.unit else {})}
            for c in table.columns
        ],
        "missingValues": [""],
    }


def build_release(*, now: datetime | None = None, force: bool = False) -> BuildResult:
    """Build the next release unless nothing changed since the last one (then say so and publish nothing)."""
    storage = store.release_storage()
    root = Path(path) if (path := local_path(storage)) else None
    if root is not None:
        root.mkdir(parents=True, exist_ok=True)
    with store.exclusive_lock(root):
        if root is not None:
            store.remove_abandoned_builds(root)
        else:
            store.remove_abandoned_uploads(storage)
        releases = list_releases()
        previous = releases[0] if releases else None
        # Past every numbered directory, even one that is not a readable release: a number is never reused.
        number = max(store.numbers(storage), default=0) + 1
        with store.build_directory(root, number) as temp:
            with snapshot_transaction():  # every table read from one snapshot, so the files agree with each other
                resources = _write_tables(temp)
            if previous and not force and _same_content(previous, resources):
                return BuildResult(None, f"Nothing changed since release {previous.number}; no release built.")
            created = (now or timezone.now()).replace(microsecond=0)
            _write_metadata(temp, number, created, resources, previous)
            store.publish(storage, root, temp, number)
        rows = {r["name"]: r["rows"] for r in resources if "rows" in r}
        return BuildResult(number, f"Built release {number}: " + ", ".join(f"{k} {v} rows" for k, v in rows.items()))


def _write_tables(temp: Path) -> list[dict]:
    resources = []
    for table in TABLES.values():
        for fmt in RELEASE_FORMATS:
            name = f"{table.name}.{fmt}"
            rows = write_table_file(table, fmt, temp / name)
            resources.append(
                {
                    "name": table.name if fmt == "csv" else f"{table.name}-{fmt}",
                    # Parquet is the same table in a binary format: a plain file resource here (validators
                    # check its bytes and hash), described by the schema in its own metadata.
                    **({"profile": "tabular-data-resource"} if fmt == "csv" else {"type": "file"}),
                    "path": name,
                    "format": fmt,
                    "mediatype": writers.FORMATS[fmt].split(";")[0],
                    **({"encoding": "utf-8"} if fmt == "csv" else {}),
                    "bytes": (temp / name).stat().st_size,
                    "hash": f"sha256:{_hash_file(temp / name)}",
                    **({"rows": rows} if fmt == "csv" else {}),
                    "title": table.title,
                    "description": table.description,
                    **({"schema": table_schema(table)} if fmt == "csv" else {}),
                }
            )
    return resources


def _same_content(previous: Release, resources: list[dict]) -> bool:
    previous_hashes = {f.name: f.sha256 for f in previous.files if f.name.endswith(".csv")}
    current = {r["path"]: r["hash"].removeprefix("sha256:") for r in resources if r["format"] == "csv"}
    if previous_hashes != current:
        return False
    return _schemas(previous) == {r["name"]: r["schema"] for r in resources if r["format"] == "csv"}


def _schemas(release: Release) -> dict[str, dict]:
    package = json.loads(store.read_bytes(store.release_storage(), f"{release.number}/{DATAPACKAGE}"))
    return {r["name"]: r.get("schema", {}) for r in package["resources"] if r.get("format") == "csv"}


def _submission_ids(stream: BinaryIO) -> list[str]:
    with io.TextIOWrapper(stream, encoding="utf-8", newline="") as handle:
        return [row["submission_id"] for row in csv.DictReader(handle)]


def _write_metadata(temp: Path, number: int, created: datetime, resources: list[dict], previous: Release | None):
    package = {
        "profile": "data-package",
        "name": "nvmedb",
        "title": TITLE,
        "description": "Public NVMe SSD performance results measured with the SNIA Solid State Storage Performance "
        "Test Specification (PTS). Values are SI base units; the unit is in each column's name.",
        "version": f"{number}.0.0",
        "created": created.isoformat().replace("+00:00", "Z"),
        "licenses": [data_license.as_datapackage()],
        "resources": resources,
    }
    (temp / DATAPACKAGE).write_text(json.dumps(package, indent=2) + "\n")
    (temp / CITATION).write_text(_citation_cff(number, created))
    (temp / README).write_text(_readme(number, created, resources))
    (temp / CHANGELOG).write_text(_changelog(temp, number, created, resources, previous))
    names = sorted(p.name for p in temp.iterdir())
    (temp / SUMS).write_text("".join(f"{_hash_file(temp / name)}  {name}\n" for name in names))
    for name in (*names, SUMS):
        with open(temp / name, "rb") as handle:
            os.fsync(handle.fileno())


def _citation_cff(number: int, created: datetime) -> str:
    return (
        "cff-version: 1.2.0\n"
        'message: "If you use this data set, please cite it as below."\n'
        "type: dataset\n"
        f'title: "{TITLE}"\n'
        f'version: "{number}"\n'
        f"date-released: {created.date().isoformat()}\n"
        f"license: {data_license.SPDX}\n"
        "authors:\n"
        f'  - name: "{data_license.ATTRIBUTION}"\n'
        "keywords:\n"
        "  - NVMe\n"
        "  - SSD\n"
        "  - SNIA PTS\n"
        "  - storage performance\n"
    )


def _readme(number: int, created: datetime, resources: list[dict]) -> str:
    tables = [f"- `{r['path']}`: {r['title']} ({r['rows']} rows)" for r in resources if r["format"] == "csv"]
    return (
        "\n".join(
            [
                f"# {TITLE}, release {number} ({created.date().isoformat()})",
                "",
                "Every table comes as CSV and as Parquet; `datapackage.json` describes each column (values are SI base "
                "units, the unit is in the column's name), `SHA256SUMS` checks the files, `CHANGELOG.md` lists what "
                "changed since the previous release and `CITATION.cff` says how to cite it.",
                "",
                *tables,
                "",
                "## Licence",
                "",
                f"The data is published under the {data_license.TITLE} licence ({data_license.SPDX}, "
                f"{data_license.URL}). You may share and adapt it, also commercially, if you credit "
                f'"{data_license.ATTRIBUTION}" and name the release. The nvmedb software is under the MIT licence.',
            ]
        )
        + "\n"
    )


def _changelog(temp: Path, number: int, created: datetime, resources: list[dict], previous: Release | None) -> str:
    current_ids = _submission_ids(open(temp / "submissions.csv", "rb"))  # noqa: SIM115 - closed by the reader
    lines = [f"# Release {number} ({created.date().isoformat()})", ""]
    if previous is None:
        lines += ["First release.", "", f"## Submissions ({len(current_ids)})", ""]
        lines += [f"- {i}" for i in current_ids] or ["(none)"]
        return "\n".join(lines) + "\n"
    previous_ids = _submission_ids(open_stream(store.release_storage(), f"{previous.number}/submissions.csv"))
    added = [i for i in current_ids if i not in set(previous_ids)]
    removed = [i for i in previous_ids if i not in set(current_ids)]
    withdrawn = {str(i) for i in withdrawn_submissions().filter(pk__in=removed).values_list("pk", flat=True)}
    lines += [f"Changes since release {previous.number}.", "", f"## Submissions added ({len(added)})", ""]
    lines += [f"- {i}" for i in added] or ["(none)"]
    lines += ["", f"## Submissions removed ({len(removed)})", ""]
    lines += [f"- {i} ({'withdrawn by its contributor' if i in withdrawn else 'no longer public'})" for i in removed]
    lines += [] if removed else ["(none)"]
    lines += ["", "## Schema changes", ""]
    lines += _schema_changes(_schemas(previous), {r["name"]: r["schema"] for r in resources if r["format"] == "csv"})
    return "\n".join(lines) + "\n"


def _schema_changes(before: dict[str, dict], after: dict[str, dict]) -> list[str]:
    changes = []
    for table in sorted(set(before) | set(after)):
        if table not in before:
            changes.append(f"- New table `{table}`.")
            continue
        if table not in after:
            changes.append(f"- Table `{table}` removed.")
            continue
        old = {f["name"]: f for f in before[table]["fields"]}
        new = {f["name"]: f for f in after[table]["fields"]}
        changes += [f"- `{table}.{name}` added ({new[name]['type']})." for name in new if name not in old]
        changes += [f"- `{table}.{name}` removed." for name in old if name not in new]
        for name in new.keys() & old.keys():
            for key in ("type", "unit", "description"):
                if old[name].get(key) != new[name].get(key):
                    changes.append(f"- `{table}.{name}` {key}: {old[name].get(key)!r} → {new[name].get(key)!r}.")
    return changes or ["(none)"]
