"""Which files of a bundle are served, and as what kind: known only from the manifest (analysis.raw_allow)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from nvmedb_client.system_files import V1_NAME_PATTERNS, declared_files

FIO_OUTPUT = "fio-output"
FIO_JOB = "fio-job"
FIO_LOG = "fio-log"
SMART_LOG = "nvme-smart-log"
RUN = "run"

KINDS = {
    FIO_OUTPUT: "fio's JSON output of one run",
    FIO_JOB: "the fio job file of one run",
    FIO_LOG: "fio's per-interval log of one job",
    SMART_LOG: "nvme smart-log JSON",
    RUN: "run.json: what happened during the run",
    "nvme-id-ctrl": "nvme id-ctrl JSON",
    "nvme-id-ns": "nvme id-ns JSON",
    "nvme-list": "nvme list JSON",
    "nvme-get-feature-vwc": "nvme get-feature 0x06 (volatile write cache)",
    "lspci-vvv": "lspci -vvv text",
    "lshw": "lshw JSON",
    "facts": "facts.json: the parsed host and drive facts",
    "commands": "commands.json: the commands the system collection ran",
}
NOT_SERVED = "not served: unknown file kind"

# Format 1 declared nothing: the client's own names beyond the ones the server reads (system_files.V1_NAME_PATTERNS)
V1_MORE_NAMES = {
    "nvme-list": re.compile(r"(^|/)nvme[-_]list[^/]*\.json$"),
    "lshw": re.compile(r"(^|/)lshw[^/]*\.json$"),
    "commands": re.compile(r"(^|/)commands\.json$"),
    "nvme-get-feature-vwc": re.compile(r"(^|/)nvme[-_]get[-_]feature[-_]0x0?6[^/]*\.txt$"),
}
# A run set aside when its test restarted keeps its files under superseded/<block>-<attempt>/ in the client's layout
SUPERSEDED = (
    (FIO_OUTPUT, re.compile(r"^superseded/[^/]+/fio/[^/]+\.json$")),
    (FIO_JOB, re.compile(r"^superseded/[^/]+/jobs/[^/]+\.fio$")),
    (SMART_LOG, re.compile(r"^superseded/[^/]+/smart/[^/]+\.json$")),
    (FIO_LOG, re.compile(r"^superseded/[^/]+/logs/[^/]+\.log$")),
)


def file_kinds(manifest: Mapping) -> dict[str, str]:
    """The kind of every file the manifest gives a role (path relative to files/); a listed file missing here is of
    no known kind and is not served."""
    listed = [str(e["path"]) for e in manifest.get("files") or [] if isinstance(e, Mapping) and "path" in e]
    kinds: dict[str, str] = {}

    def put(path, kind: str) -> None:
        if isinstance(path, str) and path:
            kinds.setdefault(path, kind)

    for run in manifest.get("runs") or []:
        if not isinstance(run, Mapping):
            continue
        put(run.get("output_file"), FIO_OUTPUT)
        put(run.get("job_file"), FIO_JOB)
        put(run.get("smart_before"), SMART_LOG)
        put(run.get("smart_after"), SMART_LOG)
        for log in run.get("log_files") or [] if isinstance(run.get("log_files"), list) else []:
            put(log, FIO_LOG)
    put("run.json", RUN)
    if isinstance(manifest.get("system"), Mapping):  # format 2: the declared kind, nothing else
        for entry in declared_files(manifest):
            if entry.get("kind") in KINDS:
                put(entry.get("path"), str(entry["kind"]))
    else:
        for path in listed:
            for kind, pattern in (*V1_NAME_PATTERNS.items(), *V1_MORE_NAMES.items()):
                if path.startswith("system/") and pattern.search(path):
                    put(path, kind)
                    break
    for path in listed:
        for kind, pattern in SUPERSEDED:
            if pattern.match(path):
                put(path, kind)
    return {path: kinds[path] for path in listed if path in kinds}
