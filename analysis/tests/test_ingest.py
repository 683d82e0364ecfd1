"""Ingest of real bundles end to end: rows, provenance, cross-checks, idempotence and all-or-nothing."""

import json
from pathlib import Path

import pytest

import bundle_factory
from analysis.ingest import IngestOutcome, ingest_submission
from analysis.models import DriveModelAggregate, Flag, Measurement, PcieLink, Round, SteadyStateWindow, TestRun
from analysis.services import refresh_aggregates
from nvmedb_client.bundle import verify_bundle
from nvmedb_client.fio_output import parse_fio_output, summarize
from submissions.services import submission_withdraw

LAPTOP_LSPCI = "lspci/linuxhw__LsPCI__Notebook__Framework__Laptop__Laptop_13__0EFA89DC0461__FEDORA-41__6.11.5-300.FC41.X86_64__X86_64__4C8183FD48"
PHY32_LSPCI = "lspci/local__lspci-3.9.0__rendered_from_pciutils_tests_cap-phy32.txt"
SMART = "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json"


def rows(submission):
    """Every dataset row of a submission, without database ids, in a stable order."""

    def strip(values, *drop):
        return {k: v for k, v in values.items() if k not in ("id", *drop)}

    runs = TestRun.objects.filter(submission=submission)
    return {
        "runs": [strip(r, "pcie_link_id") for r in runs.order_by("test").values()],
        "rounds": [
            strip(r, "test_run_id")
            for r in Round.objects.filter(test_run__in=runs).order_by("phase", "series", "number").values()
        ],
        "measurements": [
            strip(m, "round_id", "test_run_id")
            for m in Measurement.objects.filter(test_run__in=runs).order_by("run_key").values()
        ],
        "windows": [
            strip(w, "test_run_id")
            for w in SteadyStateWindow.objects.filter(test_run__in=runs).order_by("variable").values()
        ],
        "flags": sorted(
            (f.kind, f.reason, f.measurement.run_key if f.measurement else None)
            for f in Flag.objects.filter(submission=submission)
        ),
    }


def count_rows(submission):
    runs = TestRun.objects.filter(submission=submission)
    return (
        runs.count(),
        Round.objects.filter(test_run__in=runs).count(),
        Measurement.objects.filter(test_run__in=runs).count(),
        Flag.objects.filter(submission=submission).count(),
    )


def test_a_quick_bundle_is_ingested_end_to_end(submission, make_verified):
    bundle = make_verified()
    outcome = ingest_submission(submission=submission, bundle=bundle)

    assert isinstance(outcome, IngestOutcome) and outcome.status == "published", outcome.reasons
    run = TestRun.objects.get(submission=submission)
    assert (run.test, run.profile, run.compliant, run.signed, run.source) == ("iops", "quick", False, True, "client")
    assert run.drive_model.vendor.name == "Samsung" and run.firmware.revision == "EDA76F2Q"
    assert run.unit is not None and "S43ANA0M405593" not in run.unit.serial_hash
    assert run.host.kernel == "5.10.0-23-amd64" and run.scheduler == "none" and run.write_cache == "disabled"
    assert run.missing["purge_method"] and run.missing["id_ns"]  # recorded as missing, with the reason

    measurements = list(Measurement.objects.filter(test_run=run))
    assert len(measurements) == len(bundle.manifest["runs"]) == 15
    for m in measurements:
        summary = summarize(parse_fio_output(bundle.read_bytes(m.raw_file)))  # every value traces to its raw file
        assert m.json_path == "$.jobs[*]"
        assert m.total_iops == pytest.approx(summary.total_iops)
        assert m.read_bw_bytes_per_s == pytest.approx(summary.read_bw_bytes_per_s)  # bytes/s, not fio's KiB/s
        assert m.lat_mean_ns == pytest.approx(summary.lat_mean_ns)
        assert m.total_bw_bytes_per_s == pytest.approx(m.read_bw_bytes_per_s + m.write_bw_bytes_per_s)
        assert m.link_utilization == pytest.approx(
            max(m.read_bw_bytes_per_s, m.write_bw_bytes_per_s) / run.pcie_link.usable_bandwidth_bytes_per_s
        )
    link = run.pcie_link
    assert (link.generation, link.width, link.max_payload_bytes, link.below_capability) == (3, 4, 256, False)

    windows = {w.variable: w for w in SteadyStateWindow.objects.filter(test_run=run)}
    assert set(windows) == {
        "iops.total_iops.rw000.bs4096",
        "iops.total_iops.rw065.bs65536",
        "iops.total_iops.rw100.bs1048576",
    }
    claims = {c["variable"]: c for c in bundle.manifest["steady_state"]}
    for variable, window in windows.items():
        assert window.claimed == claims[variable] and window.claim_differs is False
        assert window.steady == claims[variable]["steady"] and len(window.rounds) == 5
    assert Flag.objects.filter(submission=submission, kind="non_compliant").exists()


def test_ingesting_twice_yields_the_same_rows(submission, make_verified):
    bundle = make_verified()
    ingest_submission(submission=submission, bundle=bundle)
    first = rows(submission)
    ingest_submission(submission=submission, bundle=bundle)
    assert rows(submission) == first
    assert PcieLink.objects.count() == 1  # the replaced link row is gone too


def test_an_exception_mid_ingest_leaves_no_rows_and_a_rerun_completes(submission, make_verified, monkeypatch):
    bundle = make_verified()

    def fail(*args, **kwargs):
        assert Measurement.objects.filter(test_run__submission=submission).count() == 15  # written, not committed
        raise RuntimeError("injected failure after the measurements were written")

    monkeypatch.setattr("analysis.dataset_rows.window_row", fail)
    with pytest.raises(RuntimeError):
        ingest_submission(submission=submission, bundle=bundle)
    assert count_rows(submission) == (0, 0, 0, 0)
    assert PcieLink.objects.count() == 0

    monkeypatch.undo()
    assert ingest_submission(submission=submission, bundle=bundle).status == "published"
    assert count_rows(submission)[:3] == (1, 5, 15)


def _edit_fio(run_dir: Path, manifest: dict, change) -> str:
    run = next(r for r in manifest["runs"] if r["read_pct"] == 65)
    path = run_dir / run["output_file"]
    doc = json.loads(path.read_text())
    change(doc["jobs"][0])
    path.write_text(json.dumps(doc))
    return run["output_file"]


def _assert_rejected_for(outcome, submission, words):
    assert outcome.status == "rejected"
    assert any(words in reason for reason in outcome.reasons), outcome.reasons
    assert count_rows(submission) == (0, 0, 0, 0)


def test_inflated_iops_in_one_output_reject_the_submission(submission, make_verified):
    def mutate(run_dir, manifest, files):
        _edit_fio(run_dir, manifest, lambda job: job["read"].update(iops=job["read"]["iops"] * 2))

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_rejected_for(outcome, submission, "IOPS ×")


def test_inflated_byte_counts_reject_the_submission(submission, make_verified):
    def mutate(run_dir, manifest, files):
        _edit_fio(
            run_dir,
            manifest,
            lambda job: job["write"].update(
                io_bytes=job["write"]["io_bytes"] * 2, io_kbytes=job["write"]["io_kbytes"] * 2
            ),
        )

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_rejected_for(outcome, submission, "bw × runtime")


def test_a_run_that_is_not_the_declared_one_rejects_the_submission(submission, make_verified):
    def mutate(run_dir, manifest, files):
        manifest["runs"][3]["iodepth"] = 32  # fio's output and job say 16

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_rejected_for(outcome, submission, "the plan declared iodepth 32")


def test_timestamps_that_go_backwards_reject_the_submission(submission, make_verified):
    def mutate(run_dir, manifest, files):
        runs = manifest["runs"]
        runs[4]["started_at"], runs[4]["finished_at"] = runs[2]["started_at"], runs[2]["finished_at"]

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_rejected_for(outcome, submission, "started")


def test_smart_counters_that_did_not_move_hold_the_submission(submission, make_verified, shared_samples):
    def mutate(run_dir, manifest, files):
        (run_dir / "smart").mkdir()
        sample = (shared_samples / SMART).read_bytes()
        run = next(r for r in manifest["runs"] if r["read_pct"] == 65)
        for side in ("before", "after"):
            (run_dir / f"smart/{run['id']}.{side}.json").write_bytes(sample)  # identical: the drive saw no I/O
            run[f"smart_{side}"] = f"smart/{run['id']}.{side}.json"
            files.append(run[f"smart_{side}"])

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    assert outcome.status == "held"
    assert any("data_units_written moved by only 0 bytes" in r for r in outcome.reasons), outcome.reasons
    assert any("data_units_read moved by only 0 bytes" in r for r in outcome.reasons), outcome.reasons
    assert Flag.objects.filter(submission=submission, kind="held_for_review").exists()
    (m,) = Measurement.objects.filter(test_run__submission=submission, temperature_before_k__isnull=False)
    assert m.read_pct == 65 and m.temperature_before_k == 310 and m.temperature_after_k == 310


def test_a_held_submission_queues_its_own_figures_once_committed(
    submission, make_verified, shared_samples, monkeypatch, django_capture_on_commit_callbacks
):
    def mutate(run_dir, manifest, files):  # smart counters that did not move: held, as above
        (run_dir / "smart").mkdir()
        run = next(r for r in manifest["runs"] if r["read_pct"] == 65)
        for side in ("before", "after"):
            (run_dir / f"smart/{run['id']}.{side}.json").write_bytes((shared_samples / SMART).read_bytes())
            run[f"smart_{side}"] = f"smart/{run['id']}.{side}.json"
            files.append(run[f"smart_{side}"])

    queued = []
    monkeypatch.setattr("analysis.ingest.queue_held_figures", queued.append)
    with django_capture_on_commit_callbacks(execute=True):
        outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    assert outcome.status == "held" and queued == [submission.pk]
    queued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert ingest_submission(submission=submission, bundle=make_verified()).status == "published"
    assert queued == []  # a published unit is in the drive's own refit


def test_a_false_steady_state_claim_is_overruled_and_recorded(submission, make_verified):
    def mutate(run_dir, manifest, files):
        for claim in manifest["steady_state"]:
            claim["steady"], claim["steady_round"] = True, 5

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    assert outcome.status == "published"
    differing = SteadyStateWindow.objects.filter(test_run__submission=submission, claim_differs=True)
    assert differing.exists()
    for window in differing:
        assert window.steady is False and window.claimed_steady is True
        assert "the server finds not steady" in window.note
    assert Flag.objects.filter(submission=submission, kind="steady_state_claim_differs").count() == differing.count()


def _with_link(shared_samples, lspci: str, path: list[str]):
    def mutate(run_dir, manifest, files):
        (run_dir / "system/lspci.txt").write_bytes((shared_samples / lspci).read_bytes())
        facts = json.loads((run_dir / "system/facts.json").read_text())
        facts["block_device"]["pci_path"] = path
        (run_dir / "system/facts.json").write_text(json.dumps(facts))

    return mutate


def test_results_above_90_percent_of_the_path_bandwidth_are_flagged_bus_bound(
    submission, make_verified, shared_samples
):
    # the laptop's Gen2 x1 port (00:02.2) placed above its drive: the SATA-speed results of the sample saturate it
    mutate = _with_link(shared_samples, LAPTOP_LSPCI, ["0000:00:02.2", "0000:02:00.0"])
    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    assert outcome.status == "published"
    link = TestRun.objects.get(submission=submission).pcie_link
    assert (link.path_speed_gts, link.path_width) == (5.0, 1)
    flagged = Measurement.objects.filter(test_run__submission=submission, flags__kind="bus_bound")
    assert flagged.exists()
    assert all(m.link_utilization >= 0.9 for m in flagged)
    assert (
        not Measurement.objects.filter(test_run__submission=submission, link_utilization__gte=0.9)
        .exclude(id__in=flagged)
        .exists()
    )


def test_a_downgraded_link_is_flagged_below_capability(submission, make_verified, shared_samples):
    mutate = _with_link(shared_samples, PHY32_LSPCI, ["0000:2e:00.0"])
    ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    flag = Flag.objects.get(submission=submission, kind="link_below_capability")
    assert "16 GT/s (Gen4)" in flag.reason and "32 GT/s (Gen5)" in flag.reason


def test_a_bundle_without_system_files_records_the_drive_as_unknown(submission, make_verified):
    outcome = ingest_submission(submission=submission, bundle=make_verified(system=False))
    assert outcome.status == "published"
    run = TestRun.objects.get(submission=submission)
    assert run.drive_model.name == "Unknown drive" and run.unit is None and run.pcie_link is None
    assert "id-ctrl" in run.missing["identity"] and run.missing["pcie_link"]
    assert all(
        m.link_utilization is None and m.missing["link_utilization"] for m in Measurement.objects.filter(test_run=run)
    )


def _second_submission(submission):
    from submissions.models import Submission

    return Submission.objects.create(
        uploader=submission.uploader, sha256="f" * 64, size=1, storage_name="second.nvmedb.tar.gz", status="ingesting"
    )


def _peers(run, factor):
    from analysis.tests.factories import TestRunFactory

    for i in range(6):
        TestRunFactory(
            drive_model=run.drive_model,
            test=run.test,
            profile=run.profile,
            edition=run.edition,
            headline={key: value * factor * (1 + 0.01 * i) for key, value in run.headline.items()},
        )


def test_a_result_far_from_its_models_peers_is_published_with_an_outlier_label_not_held(submission, make_verified):
    """Issue 21: a crowd that disagrees proves nothing about a unit; the verdict is a label for readers."""
    bundle = make_verified()
    ingest_submission(submission=submission, bundle=bundle)
    _peers(TestRun.objects.get(submission=submission), factor=3.0)  # six published runs at three times the IOPS

    second = _second_submission(submission)
    outcome = ingest_submission(submission=second, bundle=bundle)
    assert outcome.status == "published"
    assert outcome.reasons == []
    flags = Flag.objects.filter(submission=second, kind="outlier")
    assert flags and all("robust z" in f.reason and "6 independent contributors" in f.reason for f in flags)
    assert not Flag.objects.filter(submission=second, kind="held_for_review").exists()


def test_a_result_among_its_peers_is_published_and_counted(submission, make_verified, shared_samples):
    from analysis.tests.test_plausibility_ingest import _device

    def device_run(run_dir, manifest, files):  # a trial (file target, quick profile) never enters the aggregates
        _device(run_dir, manifest, files, shared_samples)
        manifest["profile"] = manifest["plan"]["profile"]["name"] = "pts"

    bundle = make_verified(mutate=device_run)
    ingest_submission(submission=submission, bundle=bundle)
    run = TestRun.objects.get(submission=submission)
    _peers(run, factor=1.0)
    second = _second_submission(submission)
    assert ingest_submission(submission=second, bundle=bundle).status == "published"
    aggregate = run.drive_model.aggregates.get(metric="iops_4k_write", factor="all")
    assert aggregate.n_runs == 7  # six published peers and the submission being published


QUIRKY = (
    "local__fio-3.33__stdout_psync_iodepth_note_prefix.json",  # text before the JSON
    "local__fio-3.33__status_interval_concatenated.json",  # several JSON objects
    "louwrentius__fio-plot__test-data02__randread-01-01.json",  # fio 2.x µs latency keys
    "local__fio-3.33__unified_rw_reporting_mixed.json",  # only a "mixed" direction
    "local__fio-3.33__numjobs3_group_reporting.json",
    "local__fio-3.33__numjobs3_no_group_reporting.json",  # three job entries to add up
    "local__fio-3.33__normal_plus_json_combined.txt",  # normal text around the JSON
    "local__fio-3.33__client_server_client_stats.json",  # client/server: client_stats, not jobs
)
CUT_SHORT = "louwrentius__fio-plot__deleteme__fio__4k__randread-1-1.json"  # 'fio: terminating on signal 2'


def _fio_order(shared_samples, names):
    docs = {name: parse_fio_output((shared_samples / "fio" / name).read_bytes()) for name in names}
    return sorted(names, key=lambda name: docs[name]["timestamp"]), docs


def _quirky_runs(shared_samples, names=QUIRKY):
    from analysis import crosscheck
    from analysis.tests.bundles import iso

    def mutate(run_dir, manifest, files):
        ordered, docs = _fio_order(shared_samples, names)
        manifest["runs"], manifest["steady_state"] = [], []  # these samples span 2017-2026: a bundle of their own
        # Their job options differ from sample to sample: the plan gives each run a series of its own.
        block = {"test": "wsat", "label": "wsat", "purge": True, "wipc": None, "series": []}
        manifest["plan"] = {"profile": manifest["plan"]["profile"], "tests": ["wsat"], "blocks": [block]}
        previous_end = ""
        for number, name in enumerate(ordered, start=1):
            data = (shared_samples / "fio" / name).read_bytes()
            doc = docs[name]
            options = crosscheck.job_options(doc)
            rw = options.get("rw", "read")
            read_pct = {"randread": 100, "read": 100, "randwrite": 0, "write": 0}.get(
                rw, int(options.get("rwmixread", 50))
            )
            end = float(doc["timestamp"])
            start = max(iso(end - crosscheck.direction_runtime_s(doc)), previous_end)  # samples ran close together
            previous_end = iso(end)
            run = {
                "id": f"wsat-r{number:04d}",
                "test": "wsat",
                "phase": "wsat",
                "round": number,
                "pattern": rw,
                "block_size_bytes": crosscheck.parse_size(options["bs"]),
                "read_pct": read_pct,
                "threads": int(options.get("numjobs", 1)),
                "iodepth": int(options.get("iodepth", 1)),
                "runtime_s": crosscheck.parse_seconds(options["runtime"]),
                "job_file": f"jobs/wsat-{number}.fio",
                "output_file": f"fio/wsat-{number}.json",
                "smart_before": None,
                "smart_after": None,
                "started_at": start,
                "finished_at": iso(end),
            }
            (run_dir / run["output_file"]).write_bytes(data)
            (run_dir / run["job_file"]).write_text(f"[wsat]\nrw={rw}\n")
            files += [run["job_file"], run["output_file"]]
            manifest["runs"].append(run)
            cell = {key: run[key] for key in ("pattern", "block_size_bytes", "read_pct")}
            series = {key: run[key] for key in ("phase", "threads", "iodepth")}  # cell times: each run's own
            block["series"].append(series | {"runtime_s": None, "max_rounds": None, "cells": [cell]})
        manifest["runs"].sort(key=lambda r: r["started_at"])
        manifest["timing"] = {
            "started_at": manifest["runs"][0]["started_at"],
            "finished_at": manifest["runs"][-1]["finished_at"],
        }
        manifest["created_at"] = manifest["timing"]["finished_at"]

    return mutate


def test_fio_outputs_in_every_shape_are_ingested(submission, make_verified, shared_samples):
    bundle = make_verified(mutate=_quirky_runs(shared_samples))
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "published", outcome.reasons
    wsat = Measurement.objects.filter(test_run__submission=submission, test_run__test="wsat").order_by("round__number")
    assert wsat.count() == len(QUIRKY)
    for m in wsat:
        summary = summarize(parse_fio_output(bundle.read_bytes(m.raw_file)))
        assert m.total_iops == pytest.approx(summary.total_iops) and m.total_iops > 0
        assert m.lat_mean_ns == pytest.approx(summary.lat_mean_ns)
    ordered, _ = _fio_order(shared_samples, QUIRKY)
    old = wsat.get(raw_file=f"fio/wsat-{ordered.index(QUIRKY[2]) + 1}.json")  # fio 2.18 reports µs; stored in ns
    raw_read = json.loads((shared_samples / "fio" / QUIRKY[2]).read_text())["jobs"][0]["read"]
    assert old.lat_mean_ns == pytest.approx(raw_read["lat"]["mean"] * 1000)  # total latency
    assert old.clat_mean_ns == pytest.approx(raw_read["clat"]["mean"] * 1000)
    assert old.slat_mean_ns == pytest.approx(raw_read["slat"]["mean"] * 1000)
    # fio 2.x had completion-latency percentiles only: the total ones are missing, with the reason
    assert old.lat_p9999_ns is None and "lat_percentiles" in old.missing["lat_p9999_ns"]
    assert old.clat_p9999_ns is not None
    mixed = wsat.get(raw_file=f"fio/wsat-{ordered.index(QUIRKY[3]) + 1}.json")
    assert mixed.read_iops is None and "unified_rw_reporting" in mixed.missing["read_iops"]
    written = [m.cumulative_write_bytes for m in wsat]
    assert written == sorted(written)


def test_a_run_cut_short_by_a_signal_is_rejected_with_the_reason(submission, make_verified, shared_samples):
    outcome = ingest_submission(
        submission=submission, bundle=make_verified(mutate=_quirky_runs(shared_samples, (CUT_SHORT,)))
    )
    assert outcome.status == "rejected"
    assert any("of the 10 s the plan declared" in reason for reason in outcome.reasons), outcome.reasons


def test_a_drive_that_throttled_during_a_run_is_flagged(submission, make_verified, shared_samples):
    import math

    def mutate(run_dir, manifest, files):
        (run_dir / "smart").mkdir()
        before = json.loads((shared_samples / SMART).read_text())
        run = next(r for r in manifest["runs"] if r["read_pct"] == 65)
        summary = summarize(parse_fio_output((run_dir / run["output_file"]).read_bytes()))
        after = dict(before)
        after["data_units_read"] += math.ceil(summary.read_bytes / 512_000)  # the drive saw exactly fio's I/O
        after["data_units_written"] += math.ceil(summary.write_bytes / 512_000)
        after["temperature"], after["thm_temp1_trans_count"], after["thm_temp1_total_time"] = 349, 2, 40
        for side, doc in (("before", before), ("after", after)):
            (run_dir / f"smart/{run['id']}.{side}.json").write_text(json.dumps(doc))
            run[f"smart_{side}"] = f"smart/{run['id']}.{side}.json"
            files.append(run[f"smart_{side}"])

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    assert outcome.status == "published", outcome.reasons  # the counters agree with fio: nothing to hold
    flag = Flag.objects.get(submission=submission, kind="thermal_throttle")
    assert "thm_temp1_trans_count +2" in flag.reason and "thm_temp1_total_time_s +40" in flag.reason
    run = TestRun.objects.get(submission=submission)
    assert run.max_temperature_k == 349 and run.warning_temperature_k == 353 and run.critical_temperature_k == 365


def test_the_client_factory_bundle_publishes(submission, tmp_path, shared_samples):
    """The intake tests upload bundle_factory bundles; they must be ones the dataset accepts, not rejects."""

    path = bundle_factory.make_bundle(tmp_path, fio_samples=bundle_factory.default_fio_samples(shared_samples))
    outcome = ingest_submission(submission=submission, bundle=verify_bundle(path, extract_to=tmp_path / "x"))

    assert outcome.status == "published", outcome.reasons
    assert Measurement.objects.filter(test_run__submission=submission).count() == 15


def test_a_withdrawn_submission_leaves_its_models_aggregates(submission, tmp_path, shared_samples):

    path = bundle_factory.make_bundle(tmp_path, fio_samples=bundle_factory.default_fio_samples(shared_samples))
    ingest_submission(submission=submission, bundle=verify_bundle(path, extract_to=tmp_path / "x"))
    submission.status = "published"
    submission.save()
    # the sample bundle is a file-target trial, which never has aggregates: stand in for a device run
    TestRun.objects.filter(submission=submission).update(target_kind="device", profile="pts")
    run = TestRun.objects.get(submission=submission)
    refresh_aggregates(drive_model=run.drive_model)
    assert DriveModelAggregate.objects.filter(drive_model=run.drive_model, n_runs=1).exists()

    submission_withdraw(submission=submission, by=submission.uploader)

    assert not DriveModelAggregate.objects.filter(drive_model=run.drive_model).exists()


def test_the_bundles_identifiers_are_cached_from_memory_once_the_rows_are_committed(
    submission, make_verified, monkeypatch, django_capture_on_commit_callbacks
):
    from analysis import raw_identifiers

    cached = {}
    monkeypatch.setattr(raw_identifiers, "remember", lambda name, found: cached.setdefault(name, found))
    bundle = make_verified()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status in ("published", "held"), outcome.reasons
    assert cached == {}, "nothing runs before the rows are committed"
    for callback in callbacks:
        callback()
    assert cached == {submission.storage_name: raw_identifiers.identifiers_of_verified(bundle)}
    assert cached[submission.storage_name], "a real bundle names its host at least"


def test_the_identifiers_walk_the_documents_the_ingest_parsed(
    submission, make_verified, monkeypatch, django_capture_on_commit_callbacks
):
    from analysis import privacy, raw_identifiers
    from nvmedb_client import jsonload

    bundle = make_verified()
    with django_capture_on_commit_callbacks(execute=False):
        outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status in ("published", "held"), outcome.reasons
    outputs = {run["output_file"] for run in bundle.manifest["runs"]}
    assert all(bundle.fio_output(path) is bundle.json_document(path) for path in outputs)  # one parse, shared
    loads, loaded = jsonload.orjson.loads, []
    # the one orjson module: the bundle's parse and the walk's own both call it
    monkeypatch.setattr(jsonload.orjson, "loads", lambda data: loaded.append(bytes(data)) or loads(data))
    found = raw_identifiers.identifiers_of_verified(bundle)
    assert loaded, "the smart-logs and system files were not parsed by the ingest"
    assert not {bundle.read_bytes(path) for path in outputs} & set(loaded), "a fio output was parsed again"
    monkeypatch.undo()
    one_by_one = raw_identifiers.identifiers_of_manifest(bundle.manifest)
    for entry in bundle.manifest["files"]:
        one_by_one |= privacy.identifiers_in_file(entry["path"], bundle.read_bytes(entry["path"]))
    assert found == one_by_one and found


def test_a_rejected_bundle_caches_nothing(submission, make_verified, monkeypatch, django_capture_on_commit_callbacks):
    from analysis import raw_identifiers

    cached = []
    monkeypatch.setattr(raw_identifiers, "remember", lambda name, found: cached.append(name))

    def inflate_iops(run_dir, manifest, files):
        _edit_fio(run_dir, manifest, lambda job: job["read"].update(iops=job["read"]["iops"] * 2))

    with django_capture_on_commit_callbacks(execute=True):
        outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=inflate_iops))
    assert outcome.status == "rejected"
    assert cached == []


def test_a_bundle_unreadable_at_the_commit_does_not_fail_the_ingest(submission, make_verified, monkeypatch, caplog):
    from analysis import raw_identifiers

    bundle = make_verified()

    def closed(path):
        raise ValueError("I/O operation on closed file")  # what a held bundle's files say once it is closed

    monkeypatch.setattr(bundle, "open", closed)
    raw_identifiers.remember_verified("bundles/never-cached.nvmedb.tar.gz", bundle)  # logs, does not raise
    assert raw_identifiers.cached("bundles/never-cached.nvmedb.tar.gz") is None
    assert "not gathered at ingest" in caplog.text
