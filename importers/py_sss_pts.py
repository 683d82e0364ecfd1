"""Read a py-sss-pts result directory (https://github.com/ccrssaa/py-sss-pts, GPL-3.0-or-later) into a SubmissionRecord.

Layout (run.py, IOPS test): `round-N/rr-R/bs-B/wdpc/output.json` (fio json+ of one cell; B is fio's size such as
`4k` or `512b`), `round-N/rr-R/bs-B/smart-before/stdout.log` and `smart-after/stdout.log` (nvme smart-log JSON),
`pre-conditioning/wipc/output.json`, `device/nvme-id-ctrl/stdout.log`, `device/nvme-smart-log/stdout.log`,
`device/nvme-list/stdout.log`, `platform/lspci/stdout.log` (lspci -vv), `settings/queue/data.json`.

py-sss-pts runs PTS rounds (every cell once per round) and stops when its three tracking variables are steady by
its own check, which differs from the PTS rule in two ways: it tracks read_share × read IOPS + write_share × write
IOPS instead of total IOPS, and its limits are strict (< instead of ≤). The server re-derives steady state with the
PTS rule and records the tool's verdict, recomputed with the tool's rule, as its claim.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from analysis import crosscheck, thermal, unwritten
from analysis.bundle_reader import mark_windows
from analysis.bundle_system import link_end
from analysis.identity import DriveIdentity, identity_from_id_ctrl
from analysis.limits import SCHEDULER_CHARS
from analysis.overprovisioning import overprovisioning
from analysis.pcie import assess_link
from analysis.records import FlagRecord, HostRecord, SubmissionRecord, TestRunRecord, WindowRecord
from analysis.wear import wear_from_smart
from importers.common import (
    ImportMetadata,
    check_fio_file,
    edition_from_options,
    list_files,
    measurement_from_fio,
    read_fio,
    read_limited,
)
from nvmedb_client.steady_state import WINDOW_ROUNDS
from nvmedb_client.system import nvme
from nvmedb_client.system.lshw import parse_lshw
from nvmedb_client.system.lspci import parse_lspci
from nvmedb_client.tracking import evaluate_runs

CELL = re.compile(r"^round-(?P<round>\d+)/rr-(?P<read>\d+)/bs-(?P<bs>[^/]+)/wdpc/output\.json$")
LICENSE = "GPL-3.0-or-later"
REFERENCE = "https://github.com/ccrssaa/py-sss-pts"
TOOL_VARIABLES = ((0, 4096), (65, 65536), (100, 1048576))
SET_WRITE_CACHE = re.compile(r"set-feature:\s*0x0*6\b[^\n]*?value:\s*(?P<value>0x[0-9a-f]+|\d+)", re.I)


def tool_value(summary, read_pct: int) -> float:
    """What py-sss-pts tracks: read_share × read IOPS + write_share × write IOPS (run.py, iops())."""
    share = read_pct / 100
    return share * (summary.read_iops or 0) + (1 - share) * (summary.write_iops or 0)


def tool_rule(values: list[float]) -> bool:
    """py-sss-pts's in_steady_state(): range < 20 % and fitted range < 10 % of the average (strict)."""
    if len(values) < WINDOW_ROUNDS:
        return False
    window = values[-WINDOW_ROUNDS:]
    average = sum(window) / WINDOW_ROUNDS
    if max(window) - min(window) >= 0.2 * average:
        return False
    xs = list(range(len(values) - WINDOW_ROUNDS + 1, len(values) + 1))
    x_mean = sum(xs) / WINDOW_ROUNDS
    slope = sum((x - x_mean) * (y - average) for x, y in zip(xs, window, strict=True)) / sum(
        (x - x_mean) ** 2 for x in xs
    )
    return abs(slope) * (WINDOW_ROUNDS - 1) < 0.1 * average


def _text(root: Path, relative: str) -> str | None:
    path = root / relative
    if not path.is_file() or path.is_symlink():
        return None
    return read_limited(path).decode("utf-8", errors="replace")


def read_py_sss_pts(root: Path, metadata: ImportMetadata | None = None) -> tuple[SubmissionRecord, list[Path]]:
    metadata = metadata or ImportMetadata()
    files = list_files(root)
    missing: dict[str, str] = {}

    id_ctrl = _parse(root, "device/nvme-id-ctrl/stdout.log", nvme.parse_id_ctrl, missing, "id_ctrl")
    identity = identity_from_id_ctrl(id_ctrl) if id_ctrl else _identity_from_metadata(metadata, missing)
    record = SubmissionRecord(
        source="py-sss-pts",
        identity=identity,
        interface="nvme",
        profile="imported",
        compliant=False,
        compliance_reasons=["imported from py-sss-pts: not verified by a signed nvmedb client run"],
        source_license=metadata.license or LICENSE,
        source_reference=metadata.source_reference or REFERENCE,
        signed=False,
        missing=missing,
    )
    if id_ctrl:
        record.warning_temperature_k = id_ctrl.get("wctemp_k")
        record.critical_temperature_k = id_ctrl.get("cctemp_k")
    smart = _parse(root, "device/nvme-smart-log/stdout.log", nvme.parse_smart_log, missing, "smart_log")
    wear = wear_from_smart(smart)
    record.percentage_used, record.power_on_hours = wear.percentage_used, wear.power_on_hours
    record.data_written_before_bytes = wear.data_written_bytes
    missing.update(wear.missing)
    # py-sss-pts writes purge/nvme-format/ only after `nvme format` exited 0 (its run() exits on any failure)
    record.purge_method = "nvme format" if (root / "purge/nvme-format").is_dir() else ""
    if record.purge_method:
        record.evidence["purge_method"] = "purge/nvme-format/ (py-sss-pts writes it only after nvme format succeeded)"
    else:
        missing["purge_method"] = "no purge/nvme-format output: py-sss-pts skips the purge in its test mode"
    _write_cache(root, record)

    namespaces = _parse(root, "device/nvme-list/stdout.log", nvme.parse_list, missing, "nvme_list") or []
    tested = [e for e in namespaces if e.get("serial") == identity.serial] or namespaces
    sizes = {e.get("physical_size_bytes") for e in tested if e.get("physical_size_bytes")}
    if len(sizes) == 1:
        record.namespace_size_bytes = int(sizes.pop())
    record.overprovisioning, why = overprovisioning(
        raw_capacity_bytes=identity.capacity_bytes, exposed_bytes=record.namespace_size_bytes
    )
    if why:
        missing["overprovisioning"] = why
    _link(root, record, namespaces)
    record.host = _host(root, record, metadata)
    queue = _text(root, "settings/queue/data.json")
    if queue:
        try:
            scheduler = json.loads(queue).get("scheduler", "")
            active = re.search(r"\[([^\]]+)\]", scheduler)
            name = active.group(1) if active else scheduler
            if len(name) <= SCHEDULER_CHARS:
                record.scheduler = name
            else:
                missing["scheduler"] = f"settings/queue/data.json names a scheduler of {len(name)} characters"
        except (ValueError, AttributeError):
            missing["scheduler"] = "settings/queue/data.json is not the expected JSON"

    test_run = TestRunRecord(test="iops")
    runs, summaries, job_sizes = [], {}, set()
    for path in files:
        relative = str(path.relative_to(root))
        match = CELL.match(relative)
        if not match:
            continue
        block_size = crosscheck.parse_size(match["bs"])
        if block_size is None:
            missing.setdefault("skipped_files", "")
            missing["skipped_files"] += f"{relative} (block size {match['bs']!r} not understood); "
            continue
        fio = read_fio(root, path, record)
        if fio is None:
            continue
        read_pct, round_number = int(match["read"]), int(match["round"])
        job_sizes.add(crosscheck.job_options(fio.doc).get("size", ""))
        check_fio_file(
            fio, declared={"block_size_bytes": block_size, "read_pct": read_pct, "pattern": "randrw"}, record=record
        )
        cell_dir = path.parent.parent
        before = _parse(
            root, str((cell_dir / "smart-before/stdout.log").relative_to(root)), nvme.parse_smart_log, {}, ""
        )
        after = _parse(root, str((cell_dir / "smart-after/stdout.log").relative_to(root)), nvme.parse_smart_log, {}, "")
        if before and after:
            for failure in crosscheck.check_smart_counters(
                before=before,
                after=after,
                read_bytes=fio.summary.read_bytes or 0,
                write_bytes=fio.summary.write_bytes or 0,
                label=relative,
            ):
                record.hold_reasons.append(failure.reason[:300])
                record.flags.append(FlagRecord("crosscheck", failure.reason[:300], test="iops"))
        test_run.measurements.append(
            measurement_from_fio(
                fio,
                phase="wdpc",
                series="",
                round_number=round_number,
                block_size_bytes=block_size,
                read_pct=read_pct,
                pattern="randrw",
                missing={} if before and after else {"temperature": "no smart-log around this cell"},
                temperature_before_k=thermal.temperature_k(before),
                temperature_after_k=thermal.temperature_k(after),
                smart_before=before,
                smart_after=after,
            )
        )
        runs.append(
            {
                "id": relative,
                "test": "iops",
                "phase": "wdpc",
                "round": round_number,
                "block_size_bytes": block_size,
                "read_pct": read_pct,
            }
        )
        summaries[relative] = fio.summary
    if not test_run.measurements:
        record.reject_reasons.append(f"{root.name}: no round-N/rr-R/bs-B/wdpc/output.json outputs to import")
        return record, files

    test_run.measurements.sort(key=lambda m: (m.round_number, -m.read_pct, -m.block_size_bytes))
    first = test_run.measurements[0]
    record.edition = metadata.edition or edition_from_options(
        {"numjobs": str(first.threads), "iodepth": str(first.iodepth)}
    )
    if not record.edition:
        missing["edition"] = "the thread count and queue depth are neither PTS-E's nor PTS-C's"
    test_run.threads, test_run.iodepth = first.threads, first.iodepth
    test_run.fio_version = first.summary.fio_version or ""
    test_run.started_at = min((m.started_at for m in test_run.measurements if m.started_at), default=None)
    test_run.finished_at = max((m.finished_at for m in test_run.measurements if m.finished_at), default=None)
    verdict = thermal.assess(
        [(m.smart_before, m.smart_after) for m in test_run.measurements],
        warning_k=record.warning_temperature_k,
        critical_k=record.critical_temperature_k,
    )
    test_run.max_temperature_k, test_run.throttled = verdict.max_temperature_k, verdict.throttled
    if verdict.throttled:
        record.flags.append(FlagRecord("thermal_throttle", f"The drive ran hot: {verdict.reason}."[:300], test="iops"))

    claim = _tool_claim(test_run)
    for entry in evaluate_runs(runs, summaries):
        window = WindowRecord.from_evaluation(entry, claimed=claim, claimed_steady=claim["steady"])
        if window.claim_differs:
            window.note = (
                f"py-sss-pts judged the test {'steady at round ' + str(claim['steady_round']) if claim['steady'] else 'not steady'}"
                f" with its own rule; by the PTS rule it is "
                f"{'steady at round ' + str(window.steady_round) if window.steady else 'not steady'}."
            )
            record.flags.append(FlagRecord("steady_state_claim_differs", window.note[:300], test="iops"))
        test_run.windows.append(window)
    mark_windows(test_run)
    if not all(w.steady for w in test_run.windows):
        record.flags.append(
            FlagRecord("steady_state_not_reached", "Steady state was not reached by the PTS rule.", test="iops")
        )
    _wipc(root, record, test_run)
    record.test_runs.append(test_run)
    _unwritten(record, test_run, job_sizes)
    return record, files


def _tool_claim(test_run: TestRunRecord) -> dict:
    series: dict[tuple[int, int], dict[int, float]] = {}
    for m in test_run.measurements:
        if (m.read_pct, m.block_size_bytes) in TOOL_VARIABLES:
            series.setdefault((m.read_pct, m.block_size_bytes), {})[m.round_number] = tool_value(m.summary, m.read_pct)
    rounds = sorted({r for points in series.values() for r in points})
    steady_round = None
    if len(series) == len(TOOL_VARIABLES):
        for r in rounds:
            if all(tool_rule([points[k] for k in sorted(points) if k <= r]) for points in series.values()):
                steady_round = r
                break
    return {
        "tool": "py-sss-pts",
        "rule": "weighted IOPS (read share × read IOPS + write share × write IOPS); range < 20%, fit < 10% (strict)",
        "steady": steady_round is not None,
        "steady_round": steady_round,
        "last_round_run": rounds[-1] if rounds else None,
    }


def _parse(root: Path, relative: str, parser, missing: dict, name: str):
    text = _text(root, relative)
    if text is None:
        if name:
            missing[name] = f"{relative} is not in the directory"
        return None
    try:
        return parser(text)
    except ValueError as exc:
        if name:
            missing[name] = f"{relative} could not be parsed: {exc}"[:300]
        return None


def _identity_from_metadata(metadata: ImportMetadata, missing: dict) -> DriveIdentity:
    missing["identity"] = "no device/nvme-id-ctrl/stdout.log; identity from the command line"
    vendor = metadata.vendor or "Unknown vendor"
    model = metadata.model or ""
    return DriveIdentity(
        vendor,
        None,
        f"{vendor} {model}".strip() if model else "Unknown drive",
        model,
        metadata.capacity_bytes,
        metadata.firmware,
        metadata.serial,
    )


def _link(root: Path, record: SubmissionRecord, namespaces: list[dict]) -> None:
    text = _text(root, "platform/lspci/stdout.log")
    if text is None:
        record.missing["pcie_link"] = "platform/lspci/stdout.log is not in the directory"
        return
    drives = [d for d in parse_lspci(text) if d.is_nvme]
    # nvme list (2.11+) names each controller's PCI address: pick the one whose serial is the tested drive's
    addresses = {
        str(e["pci_address"]).removeprefix("0000:")
        for e in namespaces
        if e.get("pci_address") and e.get("serial") == record.identity.serial
    }
    if len(drives) > 1 and len(addresses) == 1:
        drives = [d for d in drives if d.slot.removeprefix("0000:") in addresses]
    if len(drives) != 1:
        record.missing["pcie_link"] = (
            f"lspci lists {len(drives)} NVMe controllers; which one was tested is not recorded"
        )
        return
    record.link = assess_link(link_end(drives[0]))
    record.link_source_file = "platform/lspci/stdout.log"


def _wipc(root: Path, record: SubmissionRecord, test_run: TestRunRecord) -> None:
    """The preconditioning run, stored as a measurement of phase "wipc" (never inside a steady-state window)."""
    path = root / "pre-conditioning/wipc/output.json"
    if not path.is_file():
        record.missing["wipc"] = "no pre-conditioning/wipc/output.json: py-sss-pts skips WIPC in its test mode"
        return
    fio = read_fio(root, path, record)
    if fio is None:
        return
    options = crosscheck.job_options(fio.doc)
    block_size = crosscheck.parse_size(options.get("bs", "")) or 128 * 1024
    check_fio_file(fio, declared={"block_size_bytes": block_size, "read_pct": 0, "pattern": "write"}, record=record)
    test_run.measurements.insert(
        0,
        measurement_from_fio(
            fio,
            phase="wipc",
            series=f"bs{block_size}",
            round_number=1,
            block_size_bytes=block_size,
            read_pct=0,
            pattern="write",
            missing={"temperature": "py-sss-pts records no smart-log around its preconditioning"},
        ),
    )


def _host(root: Path, record: SubmissionRecord, metadata: ImportMetadata) -> HostRecord:
    """The host as lshw described it (py-sss-pts saves `lshw -json`); the kernel only when the import is told it."""
    host = HostRecord(kernel=metadata.kernel)
    if metadata.kernel:
        record.evidence["host.kernel"] = "given on the import's command line"
    else:
        host.missing["kernel"] = "py-sss-pts records no kernel release"
    host.missing["os_name"] = "py-sss-pts records no operating system release"
    hardware = _parse(root, "platform/lshw/stdout.log", parse_lshw, host.missing, "lshw")
    if hardware is None:
        why = host.missing.pop("lshw")
        for name in ("cpu_model", "cpu_count", "memory_bytes", "board_vendor", "board_name"):
            host.missing[name] = why
        return host
    host.cpu_model = hardware["cpu_model"] or ""
    host.cpu_count = hardware["cpu_threads"]  # logical CPUs, as the client records them
    host.memory_bytes = hardware["memory_bytes"]
    host.board_vendor = hardware["board_vendor"] or ""
    host.board_name = hardware["board_product"] or ""
    for name, key in (
        ("cpu_model", "cpu_model"),
        ("cpu_count", "cpu_threads"),
        ("memory_bytes", "memory_bytes"),
        ("board_vendor", "board_vendor"),
        ("board_name", "board_product"),
    ):
        if hardware[key] in (None, ""):
            host.missing[name] = hardware["missing"].get(key, "lshw does not report it")
        else:
            record.evidence[f"host.{name}"] = "platform/lshw/stdout.log (lshw -json)"
    return host


def _write_cache(root: Path, record: SubmissionRecord) -> None:
    """The volatile write cache (feature 0x06) as py-sss-pts set it before preconditioning, from nvme-cli's reply."""
    text = _text(root, "pre-conditioning/nvme-set-feature/stdout.log")
    match = SET_WRITE_CACHE.search(text or "")
    if match:
        record.write_cache = "enabled" if int(match["value"], 0) & 1 else "disabled"
        record.evidence["write_cache"] = f"pre-conditioning/nvme-set-feature/stdout.log: {match[0]}"[:300]
    else:
        record.missing["write_cache"] = (
            "pre-conditioning/nvme-set-feature/stdout.log does not show the write cache (feature 0x06) being set"
        )


def _active_range(record: SubmissionRecord, sizes: set[str]) -> int | None:
    """The active range from the fio jobs' own `size` (py-sss-pts writes it in KiB; a share needs the namespace)."""
    if len(sizes) != 1 or not next(iter(sizes)):
        record.missing["active_range_bytes"] = f"the fio jobs state {len(sizes - {''})} different sizes"
        return None
    size = next(iter(sizes))
    record.evidence["active_range_bytes"] = f"fio size={size}" + ("" if not size.endswith("%") else " of the namespace")
    if size.endswith("%"):
        if not record.namespace_size_bytes:
            record.missing["active_range_bytes"] = f"fio size={size} and the namespace size is unknown"
            return None
        return int(record.namespace_size_bytes * float(size[:-1]) / 100)
    parsed = crosscheck.parse_size(size)
    if parsed is None:
        record.missing["active_range_bytes"] = f"fio size={size!r} is not a size"
    return parsed


def _unwritten(record: SubmissionRecord, test_run: TestRunRecord, sizes: set[str]) -> None:
    active = _active_range(record, sizes)
    if active is None:
        record.missing["unwritten_data"] = "the active range is unknown, so written coverage cannot be estimated"
        return
    record.active_range_bytes = active
    if not record.purge_method:
        record.missing["unwritten_data"] = (
            "no purge is recorded, so what the drive held before the first run is unknown; "
            "reads are not judged for unwritten data"
        )
        return
    runs = [
        unwritten.RunIO(m.run_key, "iops", m.pattern, m.read_pct, m.summary.write_bytes or 0)
        for m in test_run.measurements  # the wipc run comes first
    ]
    for key, coverage in unwritten.unwritten_reads(runs, active_range_bytes=active).items():
        record.flags.append(FlagRecord("unwritten_data", unwritten.reason(coverage), run_key=key, test="iops"))
