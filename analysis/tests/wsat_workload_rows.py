"""WSAT optional workload runs for page tests: one sample (round, measurement) per value, as the ingest stores them
(phase wsat, the bytes written so far on each sample, block size 0 for the ws-comp mix)."""

from __future__ import annotations

import datetime as dt

from analysis.models import Measurement, Round
from analysis.tests import factories

STIMULI = {
    "ws-oltp": ("randrw", 8192, 65),
    "ws-vod": ("rw", 131072, 90),
    "ws-meta": ("rw", 512, 50),
    "ws-comp": ("randrw", 0, 40),
}


def workload_run(
    *,
    submission,
    drive_model,
    test: str,
    iops: list[float | None],
    written_per_sample: int,
    profile: str = "pts",
    target_size_bytes: int | None = 1_000_204_886_016,
    steady_window: tuple[int, ...] = (),
    pattern: str | None = None,
    finished_at: dt.datetime | None = None,
):
    """A `test` run of `drive_model` in `submission` with one sample per value of `iops` (None: fio gave no figures
    for that sample, so it has no IOPS and no bytes written either, as the ingest stores a missing summary)."""
    rw, block_size, read_pct = STIMULI[test]
    start = finished_at or dt.datetime(2026, 2, 1, tzinfo=dt.UTC)
    run = factories.TestRunFactory(
        submission=submission, drive_model=drive_model, test=test, profile=profile, compliant=profile == "pts",
        target_size_bytes=target_size_bytes, steady=None, steady_round=None, finished_at=start,
    )  # fmt: skip
    rounds = Round.objects.bulk_create(
        Round(test_run=run, phase="wsat", number=number) for number in range(1, len(iops) + 1)
    )
    rows, written = [], 0
    for round_row, value in zip(rounds, iops, strict=True):
        if value is not None:
            written += written_per_sample
        rows.append(
            Measurement(
                round=round_row, test_run=run, drive_model=drive_model,
                run_key=f"{test}-s{round_row.number:04d}-rw{read_pct:03d}-bs{block_size}", block_size_bytes=block_size,
                read_pct=read_pct, pattern=pattern or rw, threads=4, iodepth=32, total_iops=value,
                write_bytes=written_per_sample if value is not None else None,
                cumulative_write_bytes=written if value is not None else None, runtime_s=60.0,
                in_steady_window=round_row.number in steady_window,
                raw_file=f"fio/{test}-s{round_row.number:04d}.json", json_path="$.jobs[*]",
            )
        )  # fmt: skip
    Measurement.objects.bulk_create(rows, batch_size=2000)
    return run
