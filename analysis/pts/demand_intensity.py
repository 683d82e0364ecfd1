"""ECW and DIRTH on the server: the demand-intensity curve, DIRTH's operating points and their response-time
histograms, derived again from the bundle's raw fio outputs (the client package's derivation, run on the files the
server verified), compared with the client's claim (kept verbatim, never believed), and stored."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from analysis.models import DemandIntensityCurve, DemandIntensityPoint, HistogramBucket, OperatingPoint
from analysis.records import FlagRecord, SubmissionRecord
from nvmedb.bulk import insert_rows
from nvmedb_client.pts import demand_intensity, dirth, dirth_capture

MAX_CLAIM_BYTES = 256 * 1024  # a real claim is a few KiB (49 cells, 3 histograms of at most 91 buckets)
MAX_BUCKETS = len(dirth.HISTOGRAM_EDGES_NS) + 1
CAPTURE_FLAGS = (dirth_capture.MISMATCH_FLAG, dirth_capture.MISSING_FLAG)


def apply(manifest: Mapping, runs: Sequence[Mapping], bundle, record: SubmissionRecord) -> None:
    """Derive each ECW/DIRTH result from the raw files onto its TestRunRecord, compare it with the claim, flag a
    difference (the server's derivation stands)."""
    by_test = {tr.test: tr for tr in record.test_runs}
    # the bundle's parse cache: ingest has parsed every fio output once already (analysis.bundle_reader)
    derived = demand_intensity.derive_all([dict(r) for r in runs], bundle.fio_output)
    raw_claims = manifest.get("demand_intensity")
    claims = [c for c in raw_claims if isinstance(c, Mapping)] if isinstance(raw_claims, list) else []
    for entry in derived:
        test_run = by_test.get(entry["test"])
        if test_run is None:
            continue
        test_run.demand_intensity = entry
        claim = next((dict(c) for c in claims if c.get("test") == entry["test"]), None)  # == is safe on any value
        test_run.demand_intensity_claim = _bounded(claim)
        differences = demand_intensity.claim_differences([claim] if claim else [], [entry])
        if differences:
            note = "; ".join(differences) + "; the server's derivation from the raw data stands."
            test_run.demand_intensity_note = note[:300]
            record.flags.append(FlagRecord("demand_claim_differs", note[:300], test=entry["test"]))
        for histogram in entry.get("histograms", []):
            if histogram.get("flag") in CAPTURE_FLAGS:  # the derivation's own words: never the client's
                note = f"{histogram['point']}: {histogram['missing']}"
                record.flags.append(FlagRecord(histogram["flag"], note[:300], test=entry["test"]))
    derived_tests = {entry["test"] for entry in derived}
    for claim in claims:
        test = claim.get("test")
        if not (isinstance(test, str) and test in derived_tests):
            record.flags.append(
                FlagRecord(
                    "demand_claim_differs",
                    f"The client claimed a demand-intensity result for {str(test)[:20]!r}, which no "
                    "measured run of this bundle supports; the server ignores it.",
                )
            )


def _bounded(claim: dict | None) -> dict | None:
    if claim is None:
        return None
    if len(json.dumps(claim)) > MAX_CLAIM_BYTES:
        return {"omitted": f"the claim is larger than {MAX_CLAIM_BYTES} bytes"}
    return claim


def store(pairs) -> None:
    """Write the curves, points and operating points of every (TestRun row, TestRunRecord) pair: three batches."""

    with_results = [(row, rec) for row, rec in pairs if rec.demand_intensity]
    curves = insert_rows(
        [
            DemandIntensityCurve(
                test_run=row,
                round_number=rec.demand_intensity["round"],
                round_basis=rec.demand_intensity["round_basis"],
                claimed=rec.demand_intensity_claim,
                claim_differs=bool(rec.demand_intensity_note),
                note=rec.demand_intensity_note,
            )
            for row, rec in with_results
        ]
    )
    points, operating = [], []
    for curve, (_, rec) in zip(curves, with_results, strict=True):
        entry = rec.demand_intensity
        points += [_point_row(curve, p) for p in entry["points"]]
        histograms = {h["point"]: h for h in entry.get("histograms", [])}
        operating += [_operating_row(curve, op, histograms.get(op["name"])) for op in entry.get("operating_points", [])]
    insert_rows(points)
    operating_rows = insert_rows([row for row, _ in operating])
    insert_rows(
        [
            HistogramBucket(operating_point=row, lower_ns=lower, upper_ns=upper, io_count=count)
            for row, (_, buckets) in zip(operating_rows, operating, strict=True)
            for lower, upper, count in buckets[:MAX_BUCKETS]
        ]
    )


def _point_row(curve, point: Mapping):

    missing = {}
    if point.get("missing"):
        missing["total_iops"] = point["missing"][:300]
    if point.get("lat_p99_999_missing"):
        missing["lat_p99999_ns"] = point["lat_p99_999_missing"][:300]
    return DemandIntensityPoint(
        curve=curve,
        threads=point["threads"],
        iodepth=point["iodepth"],
        outstanding_ios=point["oio"],
        run_key=str(point.get("run_id") or ""),
        total_iops=point.get("iops"),
        lat_mean_ns=point.get("lat_mean_ns"),
        lat_p99999_ns=point.get("lat_p99_999_ns"),
        missing=missing,
    )


def _operating_row(curve, op: Mapping, histogram: Mapping | None):

    missing = {}
    if op.get("missing"):
        missing["point"] = op["missing"][:300]
    if histogram is None or histogram.get("missing"):
        missing["histogram"] = ((histogram or {}).get("missing") or "no measurement at this point")[:300]
    buckets = (histogram or {}).get("buckets") or []
    row = OperatingPoint(
        curve=curve,
        name=op["name"],
        threads=op.get("threads"),
        iodepth=op.get("iodepth"),
        total_iops=op.get("iops"),
        run_key=str(op.get("run_id") or ""),
        latency_kind=(histogram or {}).get("latency") or "",
        total_ios=(histogram or {}).get("total_ios"),
        histogram_source=_source(histogram),
        histogram_run_key=str((histogram or {}).get("run_id") or "")[:128],
        missing=missing,
    )
    return row, buckets


def _source(histogram: Mapping | None) -> str:
    """Where the point's histogram comes from: its capture run, or (bundles without captures) the sweep's cell."""
    if histogram is None:
        return ""
    return dirth_capture.SOURCE_CAPTURE if histogram.get("source") == "capture" else dirth_capture.SOURCE_SWEEP
