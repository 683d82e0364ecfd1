"""Read a verified client bundle into a SubmissionRecord: parse every fio output, check it, normalise the hardware.

Nothing here writes to the database. Everything the server believes comes from the raw files: the manifest's own
steady-state verdicts are kept only as the client's claim, to compare with the server's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from analysis import compliance, consistency, crosscheck, plausibility, thermal, unwritten
from analysis.bundle_checks import MIXED_BLOCK_SIZE_TESTS, CrossChecked, cross_check, parse_time
from analysis.bundle_system import (
    ListedFiles,
    declared_pci_path,
    host_from_facts,
    link_from_lspci,
    not_strict_json,
    parsed,
    read_json,
    run_facts,
    system_files,
    undeclared_system_files,
)
from analysis.identity import DriveIdentity, identity_from_id_ctrl
from analysis.overprovisioning import overprovisioning
from analysis.poison import reading
from analysis.pts import demand_intensity as pts_demand_intensity
from analysis.pts import recovery
from analysis.pts.surface import read_surface
from analysis.records import (
    FlagRecord,
    MeasurementRecord,
    SubmissionRecord,
    TestRunRecord,
    WindowRecord,
)
from analysis.run_conditions import run_condition_problems
from analysis.values import optional_int
from analysis.wear import wear_from_smart
from nvmedb_client.fio_output import FioOutputError, FioSummary
from nvmedb_client.system import nvme
from nvmedb_client.tracking import evaluate_runs

if TYPE_CHECKING:
    from nvmedb_client.bundle import VerifiedBundle

TEST_ORDER = (
    "iops", "tp", "lat", "wsat", "hir", "xsr", "ecw", "dirth", "ws-oltp", "ws-vod", "ws-meta", "ws-comp", "surface"
)  # fmt: skip
# nvme-cli's smart-log JSON is about a kilobyte: a larger one is parsed where it is read, never kept by its content
SHARED_SMART_BYTES = 64 * 1024


def read_bundle(verified: VerifiedBundle) -> SubmissionRecord:
    manifest = verified.manifest
    bundle = ListedFiles(verified)
    files = {entry["path"] for entry in manifest.get("files", []) if isinstance(entry, Mapping) and "path" in entry}
    system = system_files(manifest, files)
    missing: dict[str, str] = {}
    rejects: list[str] = []

    id_ctrl = parsed(bundle, system.get("nvme-id-ctrl"), nvme.parse_id_ctrl, missing, "id_ctrl", rejects=rejects)
    id_ns = parsed(bundle, system.get("nvme-id-ns"), nvme.parse_id_ns, missing, "id_ns", rejects=rejects)
    for key, reason in ((id_ns or {}).get("missing") or {}).items():
        if key.startswith("lba_format_"):  # a block size no NVMe drive can have: not a real id-ns
            rejects.append(f"{system['nvme-id-ns']}: {reason}"[:300])
    facts = read_json(bundle, system.get("facts"), missing, "facts", rejects=rejects)
    target = manifest.get("target") or {}

    identity = _identity(id_ctrl, missing)
    record = SubmissionRecord(
        source="client",
        identity=identity,
        interface="nvme" if id_ctrl else "unknown",
        profile=str(manifest.get("profile") or ""),
        edition=str(manifest.get("edition") or ""),
        # the client's claim: analysis.compliance keeps it only when the server finds the PTS plan ran
        compliant=bool((manifest.get("compliance") or {}).get("compliant")),
        compliance_reasons=[str(r) for r in (manifest.get("compliance") or {}).get("reasons") or []],
        target_kind=str(target.get("kind") or ""),
        target_size_bytes=optional_int(target.get("size_bytes")),
        active_range_bytes=optional_int(target.get("active_range_bytes")),
        tool_versions={str(k): v for k, v in (manifest.get("tools") or {}).items()},
        signed=True,
        missing=missing,
        reject_reasons=rejects,
    )
    undeclared_system_files(manifest, record)
    with reading("run.json"):
        run_facts(bundle, files, facts, record)
        # run_facts already rejected a run.json that is not strict JSON: this second read adds no reason
        recorded = read_json(bundle, "run.json" if "run.json" in files else None, {}, "run.json", rejects=[]) or {}
        for problem in run_condition_problems(recorded, manifest):  # the server's own check of cache and idle time
            record.compliant = False
            if problem not in record.compliance_reasons:
                record.compliance_reasons.append(problem)

    # Namespace size: id-ns when the target is a device, otherwise what the client measured.
    record.namespace_size_bytes = (id_ns or {}).get("size_bytes") or (
        record.target_size_bytes if record.target_kind == "device" else None
    )
    record.overprovisioning, reason = overprovisioning(
        raw_capacity_bytes=identity.capacity_bytes, exposed_bytes=record.namespace_size_bytes
    )
    if reason:
        missing["overprovisioning"] = reason
    if id_ctrl:
        record.warning_temperature_k = id_ctrl.get("wctemp_k")
        record.critical_temperature_k = id_ctrl.get("cctemp_k")

    with reading(system.get("facts") or "the system facts"):
        record.host, record.scheduler = host_from_facts(facts)
    with reading(system.get("lspci-vvv") or "the lspci output"):
        link_from_lspci(bundle, system.get("lspci-vvv"), declared_pci_path(manifest, facts), record)

    runs = [run for run in manifest.get("runs") or [] if isinstance(run, Mapping)]
    summaries, documents = _parse_runs(bundle, runs, record)
    checked = cross_check(bundle, manifest, runs, summaries, documents, record)
    options = checked.options
    _build_test_runs(bundle, runs, summaries, documents, checked, record)
    with reading("the steady-state evaluation of the fio outputs"):
        _steady_state(manifest, runs, summaries, record)
    with reading("the HIR and XSR figures from the fio outputs and per-interval logs"):
        recovery.rederive(verified, record)
    with reading("the demand-intensity derivation of the fio outputs"):
        pts_demand_intensity.apply(manifest, runs, bundle, record)
    with reading("the written-coverage estimate of the fio outputs"):
        _unwritten(runs, summaries, record)
    with reading("the surface figures of the fio outputs"):
        read_surface(manifest, summaries, record)

    first_smart = next((m.smart_before for tr in record.test_runs for m in tr.measurements if m.smart_before), None)
    if first_smart is None and system.get("nvme-smart-log"):
        first_smart = parsed(
            bundle, system["nvme-smart-log"], nvme.parse_smart_log, missing, "smart_log", rejects=record.reject_reasons
        )
    wear = wear_from_smart(first_smart)
    record.percentage_used = wear.percentage_used
    record.power_on_hours = wear.power_on_hours
    record.data_written_before_bytes = wear.data_written_bytes
    missing.update(wear.missing)
    record.plan = manifest.get("plan") if isinstance(manifest.get("plan"), dict) else {}
    plausibility.apply(record)  # first: its evidence gates judge the compliance the bundle declared
    with reading("the agreement of the manifest, its plan and the system files"):
        consistency.apply(record, manifest=manifest, id_ns=id_ns, options=options, documents=documents)
    with reading("the cells, rounds and stop rule of the runs against the PTS plan"):
        compliance.apply(record, manifest=manifest, runs=runs)  # last: the claim and every gate lowered it first
    if not record.compliant:
        reasons = "; ".join(record.compliance_reasons) or compliance.NOT_CLAIMED
        record.flags.append(FlagRecord("non_compliant", f"Not a PTS-compliant run: {reasons}"[:300]))
    else:
        for test_run in record.test_runs:
            if test_run.compliance_reasons:
                reasons = "; ".join(test_run.compliance_reasons)
                flag = FlagRecord("non_compliant", f"Not a PTS-compliant run: {reasons}"[:300], test=test_run.test)
                record.flags.append(flag)
    return record


def _identity(id_ctrl: dict | None, missing: dict) -> DriveIdentity:
    if id_ctrl:
        return identity_from_id_ctrl(id_ctrl)
    missing["identity"] = "no nvme id-ctrl in the bundle (a file target or a non-NVMe drive): the drive is unknown"
    return DriveIdentity(
        vendor="Unknown vendor",
        pci_vendor_id=None,
        name="Unknown drive",
        model_number="",
        capacity_bytes=None,
        firmware="",
        serial="",
    )


def _parse_runs(
    bundle, runs: Sequence[Mapping], record: SubmissionRecord
) -> tuple[dict[str, FioSummary], dict[str, dict]]:
    summaries: dict[str, FioSummary] = {}
    documents: dict[str, dict] = {}
    for run in runs:
        run_id, path = str(run.get("id")), run.get("output_file")
        try:
            with reading(f"run {run_id}: {path}", expected=(FioOutputError,)):
                doc = bundle.fio_output(path)
                summaries[run_id] = bundle.fio_summary(path)
            documents[run_id] = doc
        except (FioOutputError, KeyError) as exc:
            record.reject_reasons.append(f"run {run_id}: its fio output {path} holds no usable result: {exc}"[:300])
    return summaries, documents


def _smart(bundle, path: str | None, record: SubmissionRecord, parsed_logs: dict[bytes, dict]) -> dict | None:
    """The parsed smart-log at `path`. `parsed_logs` keeps each content's parse (of a log up to SHARED_SMART_BYTES):
    a run's log after is often the next run's log before, byte for byte, and the measurements share the one parse
    (read only, as every reader of a measurement's smart-log does)."""
    if not path:
        return None
    try:
        data = bundle.read_bytes(path)
        smart = parsed_logs.get(data)
        if smart is None:
            with reading(path, expected=(ValueError,)):
                smart = nvme.parse_smart_log(data)
            if len(data) <= SHARED_SMART_BYTES:
                parsed_logs[data] = smart
        return smart
    except (ValueError, KeyError) as exc:
        if not_strict_json(exc):
            record.reject_reasons.append(f"{path}: {exc}"[:300])
        record.missing.setdefault("smart_log", f"{path} could not be read: {exc}"[:300])
        return None


def _build_test_runs(
    bundle, runs, summaries, documents: dict[str, dict], checked: CrossChecked, record: SubmissionRecord
) -> None:
    options = checked.options
    by_test: dict[str, TestRunRecord] = {}
    smart_checks: list[crosscheck.CheckFailure] = []
    parsed_logs: dict[bytes, dict] = {}
    for run in runs:
        run_id = str(run.get("id"))
        with reading(f"run {run_id}: {run.get('output_file')}"):
            test = str(run.get("test"))
            test_run = by_test.setdefault(test, TestRunRecord(test=test))
            summary = summaries.get(run_id)
            if summary is None:
                continue
            phase = str(run.get("phase") or "")  # wipc runs are stored too (phase "wipc"), outside every window
            before = _smart(bundle, run.get("smart_before"), record, parsed_logs)
            after = _smart(bundle, run.get("smart_after"), record, parsed_logs)
            measurement_missing = {}
            if not run.get("smart_before") or not run.get("smart_after"):
                measurement_missing["temperature"] = (
                    "no smart-log snapshot around this run (file target or no nvme-cli)"
                )
            block_size = optional_int(run.get("block_size_bytes")) or 0
            if test in MIXED_BLOCK_SIZE_TESTS or "bssplit" in options.get(run_id, {}):
                block_size = 0  # a mix of block sizes (ECW, ws-comp): the plausibility gates and the dataset read 0
            series = f"bs{block_size}" if test == "tp" or phase == "wipc" else ""
            test_run.measurements.append(
                MeasurementRecord(
                    run_key=run_id,
                    test=test,
                    phase=phase,
                    series=series,
                    round_number=optional_int(run.get("round")) or 0,
                    block_size_bytes=block_size,
                    read_pct=optional_int(run.get("read_pct")) or 0,
                    summary=summary,
                    raw_file=str(run.get("output_file")),
                    json_path="$.jobs[*]" if "jobs" in documents[run_id] else "$.client_stats[*]",
                    threads=optional_int(run.get("threads")),
                    iodepth=optional_int(run.get("iodepth")),
                    started_at=parse_time(run.get("started_at")),
                    finished_at=parse_time(run.get("finished_at")),
                    temperature_before_k=thermal.temperature_k(before),
                    temperature_after_k=thermal.temperature_k(after),
                    smart_before=before,
                    smart_after=after,
                    pattern=str(run.get("pattern") or ""),
                    declared_runtime_s=run.get("runtime_s"),
                    runtime_s=crosscheck.direction_runtime_s(documents[run_id], checked.figures.get(run_id)),
                    missing=measurement_missing,
                )
            )
            if before and after:
                smart_checks += crosscheck.check_smart_counters(
                    before=before,
                    after=after,
                    read_bytes=summary.read_bytes or 0,
                    write_bytes=summary.write_bytes or 0,
                    label=f"run {run_id}",
                )
    for failure in smart_checks:
        record.hold_reasons.append(failure.reason[:300])
        record.flags.append(FlagRecord("crosscheck", failure.reason[:300]))

    for test in TEST_ORDER:
        test_run = by_test.get(test)
        if test_run is None:
            continue
        with reading(f"the {test} test's smart-log snapshots and fio versions"):
            _summarize_test_run(test_run, options, record)


def _summarize_test_run(test_run: TestRunRecord, options: dict[str, dict], record: SubmissionRecord) -> None:
    measured = list(test_run.measurements)
    if measured:
        tested = [m for m in measured if m.phase != "wipc"] or measured
        test_run.threads = tested[0].threads
        test_run.iodepth = tested[0].iodepth
        test_run.started_at = min((m.started_at for m in measured if m.started_at), default=None)
        test_run.finished_at = max((m.finished_at for m in measured if m.finished_at), default=None)
        test_run.fio_version = measured[0].summary.fio_version or "" if measured[0].summary else ""
    ioengine = {str(options.get(m.run_key, {}).get("ioengine", "")) for m in measured}
    test_run.ioengine = ",".join(sorted(e for e in ioengine if e))
    verdict = thermal.assess(
        [(m.smart_before, m.smart_after) for m in measured],
        warning_k=record.warning_temperature_k,
        critical_k=record.critical_temperature_k,
    )
    test_run.max_temperature_k = verdict.max_temperature_k
    test_run.throttled = verdict.throttled
    if verdict.throttled:
        record.flags.append(
            FlagRecord("thermal_throttle", f"The drive ran hot: {verdict.reason}."[:300], test=test_run.test)
        )
    if verdict.max_temperature_k is None:
        test_run.missing["max_temperature_k"] = "no smart-log temperatures around the runs"
    record.test_runs.append(test_run)


def _steady_state(manifest, runs, summaries, record: SubmissionRecord) -> None:
    claims = {}
    for claim in manifest.get("steady_state") or []:
        if isinstance(claim, Mapping):
            key = (claim.get("test"), claim.get("metric"), claim.get("block_size_bytes"), claim.get("read_pct"))
            claims[key] = claim
    measured_runs = [run for run in runs if run.get("phase") != "wipc"]
    entries = evaluate_runs(measured_runs, summaries)
    by_test = {tr.test: tr for tr in record.test_runs}
    for entry in entries:
        test_run = by_test.get(entry["test"])
        if test_run is None:
            continue
        key = (entry["test"], entry["metric"], entry["block_size_bytes"], entry["read_pct"])
        claim = claims.pop(key, None)
        window = WindowRecord.from_evaluation(
            entry, claimed=dict(claim) if claim else None, claimed_steady=bool(claim.get("steady")) if claim else None
        )
        if claim is None:
            window.note = (window.note + "; " if window.note else "") + "the client made no claim for this variable"
        elif window.claim_differs:
            difference = (
                f"The client claimed {'steady' if window.claimed_steady else 'not steady'}"
                f"{' at round ' + str(claim.get('steady_round')) if claim.get('steady_round') else ''}; the server "
                f"finds {'steady at round ' + str(window.steady_round) if window.steady else 'not steady'} "
                "from the raw data, and its verdict stands."
            )
            window.note = difference
            record.flags.append(FlagRecord("steady_state_claim_differs", difference[:300], test=entry["test"]))
        test_run.windows.append(window)
    for claim in claims.values():
        # a verdict on a variable no measured run belongs to: kept on record, never believed
        record.flags.append(
            FlagRecord(
                "steady_state_claim_differs",
                f"The client claimed a verdict on {claim.get('variable')}, which no measured run of this bundle "
                "belongs to; the server ignores it.",
                test=str(claim.get("test")) if claim.get("test") in by_test else None,
            )
        )
    for test_run in record.test_runs:
        mark_windows(test_run)
        not_steady = [w for w in test_run.windows if not w.steady]
        if not_steady:
            names = ", ".join(w.variable for w in not_steady)
            record.flags.append(
                FlagRecord(
                    "steady_state_not_reached",
                    f"Steady state was not reached for {names}: results are from the last rounds."[:300],
                    test=test_run.test,
                )
            )


def mark_windows(test_run: TestRunRecord) -> None:
    """Mark the measurements inside a steady measurement window (a throughput window covers its own block size)."""
    for m in test_run.measurements:
        for w in test_run.windows:
            if not w.steady or not w.window or w.phase != m.phase:
                continue
            if m.test == "tp" and w.block_size_bytes != m.block_size_bytes:
                continue
            if w.window["first_round"] <= m.round_number <= w.window["last_round"]:
                m.in_steady_window = True
                break


def _unwritten(runs, summaries, record: SubmissionRecord) -> None:
    if not record.active_range_bytes:
        record.missing["unwritten_data"] = "the active range is unknown, so written coverage cannot be estimated"
        return
    ios = []
    for run in runs:
        summary = summaries.get(str(run.get("id")))
        test = str(run.get("test"))
        block = test if test != "tp" else f"tp-{run.get('block_size_bytes')}"
        ios.append(
            unwritten.RunIO(
                key=str(run.get("id")),
                block=block,
                pattern=str(run.get("pattern") or ("write" if run.get("phase") == "wipc" else "")),
                read_pct=optional_int(run.get("read_pct")) or 0 if run.get("phase") != "wipc" else 0,
                write_bytes=(summary.write_bytes or 0) if summary else 0,
            )
        )
    tests = {}
    for run in runs:
        tests.setdefault(str(run.get("id")), str(run.get("test")))
    for key, coverage in unwritten.unwritten_reads(ios, active_range_bytes=record.active_range_bytes).items():
        test = tests.get(key)
        record.flags.append(FlagRecord("unwritten_data", unwritten.reason(coverage), run_key=key, test=test))
