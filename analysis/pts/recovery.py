"""The server's re-derivation of HIR and XSR from a bundle's raw files (the same derivation the client ran, fed only
with the fio outputs and the per-interval logs the bundle holds), compared with the client's claim."""

from __future__ import annotations

from analysis.records import FlagRecord, SubmissionRecord
from nvmedb_client.pts import verify as pts_verify


def rederive(verified, record: SubmissionRecord) -> None:
    """Attach each recovery test's result to its test run record. Raw files that cannot be read reject the bundle
    (as an unreadable fio output does); a claim the raw files do not support is flagged, and the server's figures
    are the ones stored."""
    full, differences = pts_verify.rederive(verified)
    if differences and differences[0].startswith(pts_verify.UNREADABLE):
        record.reject_reasons.append(differences[0][:300])
        return
    claims = verified.manifest.get("derived") or {}
    by_test = {test_run.test: test_run for test_run in record.test_runs}
    for test, result in full.items():
        test_run = by_test.get(test)
        if test_run is not None:
            test_run.recovery = {"result": result, "claim": claims.get(test)}
    for difference in differences:
        test = difference.split(".", 1)[0].split(":", 1)[0]
        record.flags.append(
            FlagRecord("recovery_claim_differs", difference[:300], test=test if test in by_test else None)
        )
