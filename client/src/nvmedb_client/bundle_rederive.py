"""Re-deriving the steady-state verdicts of a verified bundle from its raw fio outputs, never from the client's claim
(the server's ingest and `nvmedb-client verify` call this; the figures a test adds to the manifest are re-derived by
its module, see nvmedb_client.pts.figures)."""

from __future__ import annotations

from nvmedb_client.bundle_files import VerifiedBundle
from nvmedb_client.fio_output import FioOutputError, parse_fio_output, summarize
from nvmedb_client.tracking import evaluate_runs, is_tracked_run


def rederive_steady_state(bundle: VerifiedBundle) -> list[dict]:
    """Compute steady_state[] afresh from the raw fio outputs in the bundle (never trusting the client's claim)."""
    runs = bundle.manifest["runs"]
    summaries = {}
    for run in runs:
        if not is_tracked_run(run):
            continue
        try:
            summaries[run["id"]] = summarize(parse_fio_output(bundle.read_bytes(run["output_file"])))
        except (FioOutputError, KeyError):
            continue  # evaluate_runs records the run as having no value, with the reason
    return evaluate_runs(runs, summaries)
