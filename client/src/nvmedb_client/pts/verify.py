"""Re-deriving HIR and XSR from a verified bundle's raw files (fio outputs and per-interval logs), never from the
client's claim; used by `nvmedb-client verify` and by the server's ingest."""

from __future__ import annotations

from nvmedb_client.fio_output import FioOutputError, parse_fio_output, summarize
from nvmedb_client.pts.derive import DERIVERS, claim, derive_full, differences
from nvmedb_client.pts.interval_log import MAX_LOG_BYTES, IntervalLogError

UNREADABLE = "HIR/XSR cannot be re-derived from the raw files"


def rederive(bundle) -> tuple[dict, list[str]]:
    """(re-derived results with their series, sentences naming every difference from the manifest's claim).
    A bundle whose raw files cannot be read gives no results and one sentence saying why."""
    manifest = bundle.manifest
    runs = [run for run in manifest.get("runs") or [] if run.get("test") in DERIVERS]
    if not runs and not manifest.get("derived"):
        return {}, []
    sizes = {entry["path"]: entry["size"] for entry in manifest["files"]}

    def read(path: str) -> bytes:
        if path not in sizes:
            raise IntervalLogError(f"{path} is named by a run but not declared in the manifest's files")
        if sizes[path] > MAX_LOG_BYTES:
            raise IntervalLogError(f"{path} is {sizes[path]} bytes, more than the {MAX_LOG_BYTES} bytes a log may have")
        return bundle.read_bytes(path)

    try:
        summaries = {run["id"]: summarize(parse_fio_output(bundle.read_bytes(run["output_file"]))) for run in runs}
        full = derive_full(manifest["plan"], manifest["runs"], read=read, summaries=summaries)
    except (IntervalLogError, FioOutputError, KeyError, TypeError, ValueError) as exc:
        return {}, [f"{UNREADABLE}: {exc}"]
    derived = {test: claim(result) for test, result in full.items()}
    return full, differences(manifest.get("derived") or {}, derived)
