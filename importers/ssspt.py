"""Read an SSSPT run folder (https://github.com/ljishen/SSSPT, MIT license) into a SubmissionRecord.

Layout, one folder per run of one test: `wipc_bs<BS>[_read<MIX>].json` (a workload-independent preconditioning),
`wdpc_bs<BS>_read<MIX>_round<N>.json` (one fio json+ output per round of one cell), a README.md (the drive table and
what the authors wrote about the host, see ssspt_readme) and sometimes `cpu_util.log`. Which test a folder holds (IOPS,
throughput or latency) is read from its fio jobs and checked against the folder's name when that names a test.

Only what the folder shows is recorded. A purge is asserted only when the README documents one; the drive's state
before the first imported run is otherwise unknown (SSSPT ran WIPC once per host and its playbooks had no purge step
before 2018-10-30, so a folder usually follows earlier runs on the same drive), and reads are then not judged for
unwritten data. Each series is re-derived with the PTS rule; SSSPT's own verdict is kept as its claim (ssspt_roles).
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import date
from pathlib import Path

from analysis import crosscheck, unwritten
from analysis.identity import DriveIdentity, vendor_name
from analysis.limits import METADATA_CHARS, bounded
from analysis.records import FlagRecord, HostRecord, SubmissionRecord, TestRunRecord, WindowRecord
from analysis.steady import judge_series
from importers.common import (
    FioFile,
    ImportMetadata,
    check_fio_file,
    edition_from_options,
    fio_times,
    list_files,
    measurement_from_fio,
    read_fio,
    read_limited,
)
from importers.ssspt_readme import ReadmeFacts, parse_readme
from importers.ssspt_roles import DIRECTORY_TESTS, RULE, TESTS, SssptTest, detect_test, ssspt_rule

WDPC = re.compile(r"^wdpc_bs(?P<bs>[^_]+)_read(?P<read>\d+)_round(?P<round>\d+)\.json$")
WIPC = re.compile(r"^wipc_bs(?P<bs>[^_]+)(?:_read(?P<read>\d+))?\.json$")
NOT_IMPORTED = {"cpu_util.log": "SSSPT's CPU-use summary; each fio output holds its own usr_cpu and sys_cpu"}
LICENSE = "MIT"
REFERENCE = "https://github.com/ljishen/SSSPT"
PURGE_STEP_ADDED = date(2018, 10, 30)  # SSSPT commit c3485ca: "Add step to erase and discard block device ..."
NO_SMART = {"temperature": "SSSPT records no smart-log around its runs"}

Cell = tuple[int, int]  # (block size, read %)


def capacity_from_text(text: str) -> int | None:
    """'256 GB' -> 256000000000 (drive makers' capacities are decimal)."""
    match = re.match(r"^\s*([\d.]+)\s*(GB|TB|MB)\s*$", text or "", re.I)
    if not match:
        return None
    return int(float(match.group(1)) * {"mb": 10**6, "gb": 10**9, "tb": 10**12}[match.group(2).lower()])


def read_ssspt(root: Path, metadata: ImportMetadata | None = None) -> tuple[SubmissionRecord, list[Path]]:
    metadata = metadata or ImportMetadata()
    files = list_files(root)
    readme_path = next((p for p in files if p.name.lower() == "readme.md"), None)
    facts = parse_readme(read_limited(readme_path).decode(errors="replace")) if readme_path else ReadmeFacts()
    identity = _identity(facts.table, metadata)
    record = SubmissionRecord(
        source="ssspt",
        identity=identity,
        interface=_interface(metadata.interface or facts.table.get("Interface", "")),
        profile="imported",
        compliant=False,
        compliance_reasons=["imported from SSSPT: not a run of the nvmedb client"],
        source_license=metadata.license or LICENSE,
        source_reference=metadata.source_reference or REFERENCE,
        signed=False,
    )
    if not readme_path:
        record.missing["identity"] = "the folder has no README.md with SSSPT's drive table"
    record.host = _host(facts, metadata)
    record.evidence.update({f"host.{name}": where for name, where in facts.evidence.items() if name != "purge_method"})
    if metadata.kernel:
        record.evidence["host.kernel"] = "given on the import's command line"
    record.missing["pcie_link"] = "SSSPT does not record the PCIe link (lspci)"
    record.missing["write_cache"] = "the folder records no write cache state"
    record.compliance_reasons.append("the write cache state is not recorded")
    nand = facts.table.get("NAND Type")
    if nand and len(nand) <= METADATA_CHARS:
        record.drive_metadata["nand_type"] = nand
    elif nand:
        record.missing["nand_type"] = (
            f"the README's NAND Type is {len(nand)} characters, more than a drive's {METADATA_CHARS}"
        )

    skipped: list[str] = []
    wipc, cells = _read_outputs(root, files, readme_path, record, skipped)
    spec = _which_test(root, cells, record) if cells else None
    if spec is None:
        if not cells:
            record.reject_reasons.append(f"{root.name}: no wdpc_bs*_read*_round*.json outputs to import")
        _note_skipped(record, skipped)
        return record, files
    outputs = [(fio, 0) for fio in wipc.values()]
    outputs += [(fio, read_pct) for (_, read_pct), rounds in cells.items() for _, fio in rounds]
    for (block_size, read_pct), rounds in list(cells.items()):
        if not spec.accepts_mix(read_pct):
            skipped += [f"{fio.path} (SSSPT's {spec.role} test has no {read_pct}% read cell)" for _, fio in rounds]
            del cells[(block_size, read_pct)]
            continue
        for _, fio in rounds:
            declared = {"block_size_bytes": block_size, "read_pct": read_pct, "pattern": spec.pattern}
            check_fio_file(fio, declared=declared, record=record)
        cells[(block_size, read_pct)] = _in_order(sorted(rounds, key=lambda item: item[0]), record, skipped)
    for fio in wipc.values():
        own = crosscheck.parse_size(crosscheck.job_options(fio.doc).get("bs", ""))
        check_fio_file(fio, declared={"block_size_bytes": own, "read_pct": 0, "pattern": "write"}, record=record)
    _note_skipped(record, skipped)
    if not cells:
        record.reject_reasons.append(f"{root.name}: no cell of SSSPT's {spec.role} test to import")
        return record, files

    first_options = crosscheck.job_options(next(iter(cells.values()))[0][1].doc)
    record.evidence["test"] = f"fio rw={first_options.get('rw')}, iodepth={first_options.get('iodepth')}"
    _run_facts(record, first_options, metadata)
    test_run = TestRunRecord(test=spec.test)
    for (block_size, read_pct), rounds in sorted(cells.items()):
        _add_series(record, test_run, spec, block_size, read_pct, rounds)
    for (block_size, read_pct), fio in sorted(wipc.items(), key=lambda item: (item[0][0], item[0][1] or 0)):
        options = crosscheck.job_options(fio.doc)
        series = f"bs{block_size}" if read_pct is None else f"bs{block_size}.rw{read_pct:03d}"
        test_run.measurements.append(
            measurement_from_fio(
                fio,
                test=spec.test,
                phase="wipc",
                series=series,
                round_number=1,
                block_size_bytes=crosscheck.parse_size(options.get("bs", "")) or block_size,
                read_pct=0,
                pattern=options.get("rw", "write"),
                missing=dict(NO_SMART),
            )
        )
    _run_summary(record, test_run, first_options)
    record.test_runs.append(test_run)
    _provenance(record, spec, test_run, wipc, outputs, facts)
    return record, files


def _read_outputs(root, files, readme_path, record, skipped) -> tuple[dict, dict[Cell, list[tuple[int, FioFile]]]]:
    wipc: dict[tuple[int, int | None], FioFile] = {}
    cells: dict[Cell, list[tuple[int, FioFile]]] = defaultdict(list)
    for path in files:
        relative = str(path.relative_to(root))
        if path == readme_path:
            continue
        if path.name in NOT_IMPORTED:
            skipped.append(f"{relative} ({NOT_IMPORTED[path.name]})")
            continue
        wdpc_match, wipc_match = WDPC.match(path.name), WIPC.match(path.name)
        if not (wdpc_match or wipc_match):
            skipped.append(f"{relative} (not an SSSPT fio output)")
            continue
        size_text = (wdpc_match or wipc_match)["bs"]
        block_size = crosscheck.parse_size(size_text)
        if block_size is None:
            skipped.append(f"{relative} (block size {size_text!r} is a mix, not a PTS cell)")
            continue
        fio = read_fio(root, path, record)
        if fio is None:
            continue
        if wipc_match:
            wipc[(block_size, int(wipc_match["read"]) if wipc_match["read"] else None)] = fio
        else:
            cells[(block_size, int(wdpc_match["read"]))].append((int(wdpc_match["round"]), fio))
    return wipc, cells


def _which_test(root: Path, cells: dict, record: SubmissionRecord) -> SssptTest | None:
    """The test the fio jobs ran; every job must agree, and so must the folder's name when it names a test."""
    found = {detect_test(crosscheck.job_options(fio.doc)) for rounds in cells.values() for _, fio in rounds}
    if len(found) != 1:
        record.reject_reasons.append(f"{root.name}: the fio jobs belong to more than one test ({sorted(found)})")
        return None
    test = found.pop()
    named = next(
        (DIRECTORY_TESTS[p.name.lower()] for p in (root, root.parent) if p.name.lower() in DIRECTORY_TESTS), ""
    )
    named = named or next(
        (DIRECTORY_TESTS[p.name[7:].lower()] for p in (root, root.parent) if p.name.lower().startswith("output_")), ""
    )
    if named and named != test:
        record.reject_reasons.append(
            f"{root.name}: the folder is named for SSSPT's {named} test but its fio jobs are those of its {test} test"
        )
        return None
    return TESTS[test]


def _in_order(rounds: list[tuple[int, FioFile]], record: SubmissionRecord, skipped: list[str]) -> list:
    """The rounds of one series, which ran one after another: fio's own end time must grow with the round number.

    A round that finished before the series' first round started belongs to an earlier, abandoned attempt whose
    outputs SSSPT left in the folder (a rerun overwrites only the rounds it reaches): it and every later round are
    left out, with the reason. Any other disorder contradicts the layout and rejects the folder.
    """
    kept: list[tuple[int, FioFile]] = []
    first_start = None
    for index, (round_number, fio) in enumerate(rounds):
        started, finished = fio_times(fio.doc)
        if not kept:
            first_start = started or finished
        elif finished is not None and kept[-1][2] is not None and finished <= kept[-1][2]:
            if first_start is not None and finished < first_start:
                cell = re.sub(r"_round\d+\.json$", "", fio.path)
                skipped.append(
                    f"{cell}_round{round_number}..{rounds[-1][0]}.json ({len(rounds) - index} file(s) finished before "
                    f"round {rounds[0][0]} of the series started: an earlier, abandoned attempt)"
                )
                break
            record.reject_reasons.append(
                f"{fio.path}: round {round_number} finished ({finished:%Y-%m-%d %H:%M:%S}) no later than round "
                f"{kept[-1][0]}: timestamps are not monotonic"[:300]
            )
        kept.append((round_number, fio, finished))
    return [(round_number, fio) for round_number, fio, _ in kept]


def _add_series(record, test_run: TestRunRecord, spec: SssptTest, block_size: int, read_pct: int, rounds) -> None:
    phase = spec.phase(read_pct)
    measurements = [
        measurement_from_fio(
            fio,
            test=spec.test,
            phase=phase,
            series=spec.series(block_size, read_pct),
            round_number=round_number,
            block_size_bytes=block_size,
            read_pct=read_pct,
            pattern=crosscheck.job_options(fio.doc).get("rw", spec.pattern),
            missing=dict(NO_SMART),
        )
        for round_number, fio in rounds
    ]
    window = _window(spec, block_size, read_pct, rounds)
    for m in measurements:
        w = window.window
        m.in_steady_window = bool(window.steady and w and w["first_round"] <= m.round_number <= w["last_round"])
    test_run.measurements += measurements
    test_run.windows.append(window)
    if window.claim_differs:
        record.flags.append(FlagRecord("steady_state_claim_differs", window.note[:300], test=spec.test))


def _window(spec: SssptTest, block_size: int, read_pct: int, rounds: list[tuple[int, FioFile]]) -> WindowRecord:
    metric = spec.metric(read_pct)
    points = [(n, float(getattr(fio.summary, metric) or 0.0)) for n, fio in rounds]
    steady, steady_round, window, why = judge_series(points)
    tool_values = [spec.tool_value(fio.doc, read_pct) for _, fio in rounds]
    tool_round = next((rounds[i][0] for i in range(len(rounds)) if ssspt_rule(tool_values[: i + 1])), None)
    last = rounds[-1][0]
    claim = {
        "tool": "SSSPT",
        "rule": RULE,
        "tracked": spec.tracked,
        "steady": tool_round is not None,
        "steady_round": tool_round,
        "last_round_run": last,
    }
    record = WindowRecord(
        variable=spec.variable(block_size, read_pct),
        phase=spec.phase(read_pct),
        metric=metric,
        block_size_bytes=block_size,
        read_pct=read_pct,
        steady=steady,
        steady_round=steady_round,
        window=window,
        claimed=claim,
        claimed_steady=tool_round is not None,
        note=why,
    )
    if record.claim_differs:
        record.note = (
            f"SSSPT judged this series {'steady at round ' + str(tool_round) if tool_round else 'not steady'} "
            f"(it stopped after round {last}); by the PTS rule it is "
            f"{'steady at round ' + str(steady_round) if steady else 'not steady (' + why + ')'}."
        )
    return record


def _run_facts(record: SubmissionRecord, options: dict, metadata: ImportMetadata) -> None:
    """Edition, target and active range, from the fio job's own options."""
    size_option = options.get("size", "")
    evidence = record.evidence
    by_depth = edition_from_options(options)
    if metadata.edition:
        record.edition, evidence["edition"] = metadata.edition, "given on the import's command line"
    elif by_depth:
        record.edition = by_depth
        evidence["edition"] = f"fio numjobs={options.get('numjobs')}, iodepth={options.get('iodepth')}"
    elif size_option == "75%":
        record.edition = "client"  # 75 % is PTS-C's active range; PTS-E's is 100 %
        evidence["edition"] = "fio size=75%: PTS-C's active range"
    else:
        record.missing["edition"] = (
            "neither the thread count and queue depth nor the active range is PTS-E's or PTS-C's"
        )
    capacity = record.identity.capacity_bytes
    if size_option.endswith("%") and capacity:
        record.active_range_bytes = int(capacity * float(size_option[:-1]) / 100)
        record.target_size_bytes = capacity
        evidence["active_range_bytes"] = f"fio size={size_option} of the README's capacity ({capacity} bytes)"
    else:
        record.missing["active_range_bytes"] = f"fio size={size_option!r} and the capacity do not give the range"
    if str(options.get("filename", "")).startswith("/dev/"):
        record.target_kind, evidence["target_kind"] = "device", f"fio filename={options['filename']}"[:200]
    else:
        record.missing["target_kind"] = f"fio filename={options.get('filename', '')!r} is not a device node"


def _run_summary(record: SubmissionRecord, test_run: TestRunRecord, options: dict) -> None:
    test_run.threads = test_run.measurements[0].threads
    test_run.iodepth = test_run.measurements[0].iodepth
    test_run.fio_version = test_run.measurements[0].summary.fio_version or ""
    test_run.ioengine = options.get("ioengine", "")
    test_run.started_at = min((m.started_at for m in test_run.measurements if m.started_at), default=None)
    test_run.finished_at = max((m.finished_at for m in test_run.measurements if m.finished_at), default=None)
    test_run.missing["max_temperature_k"] = "SSSPT records no temperatures"
    not_steady = [w.variable for w in test_run.windows if not w.steady]
    if not_steady:
        record.flags.append(
            FlagRecord(
                "steady_state_not_reached",
                f"By the PTS rule, {len(not_steady)} of {len(test_run.windows)} series never reached steady state.",
                test=test_run.test,
            )
        )
    if test_run.test == "lat" and options.get("rw") not in (None, "randrw", "randwrite", "randread"):
        reason = (
            f"SSSPT's latency test issues sequential I/O (fio rw={options.get('rw')}); the PTS latency test issues "
            "random I/O, so these latencies are not the PTS's."
        )
        record.compliance_reasons.append(reason)
        record.flags.append(FlagRecord("non_compliant", reason, test="lat"))


def _provenance(record, spec: SssptTest, test_run: TestRunRecord, wipc: dict, outputs: list, facts) -> None:
    """Purge, preconditioning and unwritten reads: asserted only where the folder shows them."""
    if wipc:
        record.evidence["wipc"] = ", ".join(sorted(fio.path for fio in wipc.values()))[:300]
    else:
        record.missing["wipc"] = (
            "the folder holds no wipc_* output: whether and how the drive was preconditioned before these rounds "
            "is not recorded"
        )
        record.compliance_reasons.append("no preconditioning is recorded")
    if facts.purge_method:
        record.purge_method, record.evidence["purge_method"] = facts.purge_method, facts.evidence["purge_method"]
    else:
        reason = "the folder records no purge (its README names no purge command)"
        if test_run.finished_at and test_run.finished_at.date() < PURGE_STEP_ADDED:
            reason += (
                f"; SSSPT's playbooks gained a purge step only on {PURGE_STEP_ADDED} and this run ended on "
                f"{test_run.finished_at.date()}"
            )
        record.missing["purge_method"] = reason
        record.compliance_reasons.append("no purge is recorded")
        record.missing["unwritten_data"] = (
            "no purge is recorded, so what the drive held before the folder's first run is unknown; "
            "reads are not judged for unwritten data"
        )
        return
    if not record.active_range_bytes:
        record.missing["unwritten_data"] = "the active range is unknown, so written coverage cannot be estimated"
        return
    _unwritten(record, spec, test_run, outputs, facts)


def _unwritten(record, spec: SssptTest, test_run: TestRunRecord, outputs: list, facts: ReadmeFacts) -> None:
    """With a documented purge before the folder's runs, follow every write and read in fio's own time order (the
    outputs of abandoned attempts too: they wrote to the drive), and flag imported reads of a mostly unwritten range."""
    timed = []
    for fio, read_pct in outputs:
        finished = fio_times(fio.doc)[1]
        if finished is None:
            record.missing["unwritten_data"] = f"{fio.path} has no timestamp, so the order of writes is unknown"
            return
        options = crosscheck.job_options(fio.doc)
        io = unwritten.RunIO(fio.path, "purge", options.get("rw", ""), read_pct, fio.summary.write_bytes or 0)
        timed.append((finished, io))
    timed.sort(key=lambda entry: entry[0])
    imported = {m.run_key for m in test_run.measurements}
    where = facts.evidence.get("purge_method", "the README")
    flagged = unwritten.unwritten_reads([io for _, io in timed], active_range_bytes=record.active_range_bytes)
    for key, coverage in flagged.items():
        if key in imported:
            reason = f"{unwritten.reason(coverage)} Purge: {where}"
            record.flags.append(FlagRecord("unwritten_data", reason[:300], run_key=key, test=spec.test))


def _host(facts: ReadmeFacts, metadata: ImportMetadata) -> HostRecord:
    host = HostRecord(
        kernel=metadata.kernel or facts.kernel,
        architecture=facts.architecture,
        board_name=facts.board_name,
        cpu_model=facts.cpu_model,
        cpu_count=facts.cpu_count,
    )
    for name, what in (
        ("kernel", "kernel release"),
        ("architecture", "machine architecture (uname -a)"),
        ("board_name", "board"),
        ("cpu_model", "CPU model"),
        ("cpu_count", "number of CPUs"),
        ("os_name", "operating system release"),
        ("memory_bytes", "memory size"),
    ):
        if getattr(host, name) in ("", None):
            host.missing[name] = facts.conflicts.get(name) or f"the README states no {what}"
    return host


def _note_skipped(record: SubmissionRecord, skipped: list[str]) -> None:
    if skipped:
        record.missing["skipped_files"] = bounded(f"not imported ({len(skipped)}): " + "; ".join(skipped), 1000)


def _identity(table: dict, metadata: ImportMetadata) -> DriveIdentity:
    maker = metadata.vendor or table.get("Mfgr", "")
    model_number = metadata.model or table.get("Model No.", "")
    vendor = vendor_name(model_number=maker or model_number) if (maker or model_number) else "Unknown vendor"
    product = maker if maker.lower().startswith(vendor.lower()) else f"{vendor} {maker}".strip()
    name = f"{product} {model_number}".strip() if model_number else product or "Unknown drive"
    return DriveIdentity(
        vendor=vendor,
        pci_vendor_id=None,
        name=name,
        model_number=model_number,
        capacity_bytes=metadata.capacity_bytes or capacity_from_text(table.get("Capacity", "")),
        firmware=metadata.firmware or table.get("Firmware Ver.", ""),
        serial=metadata.serial or table.get("S/N", ""),
    )


def _interface(text: str) -> str:
    lowered = text.lower()
    for name in ("nvme", "sata", "sas"):
        if name in lowered:
            return name
    return "unknown"
