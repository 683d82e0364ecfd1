"""Read an SSSPT result directory (https://github.com/ljishen/SSSPT, MIT license) into a SubmissionRecord.

Layout, one directory per IOPS run: `wipc_bs<BS>.json` (the workload-independent preconditioning before the rounds
of each block size), `wdpc_bs<BS>_read<MIX>_round<N>.json` (one fio json+ output per round of one block size and R/W
mix), and a README.md whose HTML table describes the drive (Mfgr, Model No., S/N, Firmware Ver., Capacity,
Interface, NAND Type) and whose first line names the kernel.

SSSPT repeats each (block size, mix) pair on its own until its own check calls it steady, so every pair is a series
of its own here. Its check (playbooks/roles/throughput/files/verify_ss.py) is not the PTS rule: every value and both
ends of the fitted line must lie within ±10 % of the window's average. The server re-derives every series with the
PTS rule and records SSSPT's verdict (recomputed with SSSPT's rule from the same values) as the tool's claim.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from pathlib import Path

from analysis import crosscheck, unwritten
from analysis.identity import DriveIdentity, clean, vendor_name
from analysis.importers.common import (
    FioFile,
    ImportMetadata,
    check_fio_file,
    edition_from_options,
    list_files,
    measurement_from_fio,
    read_fio,
)
from analysis.records import FlagRecord, HostRecord, SubmissionRecord, TestRunRecord, WindowRecord
from analysis.steady import judge_series
from nvmedb_client.steady_state import WINDOW_ROUNDS

WDPC = re.compile(r"^wdpc_bs(?P<bs>[^_]+)_read(?P<read>\d+)_round(?P<round>\d+)\.json$")
WIPC = re.compile(r"^wipc_bs(?P<bs>[^_]+)\.json$")
README_ROW = re.compile(r"<td>\s*<b>(?P<label>[^<]+)</b>\s*</td>\s*<td>(?P<value>.*?)</td>", re.S | re.I)
SSSPT_EXCURSION = 0.10
LICENSE = "MIT"
REFERENCE = "https://github.com/ljishen/SSSPT"


def parse_readme(text: str) -> dict[str, str]:
    """The drive table of an SSSPT README (labels as written, values without tags) plus the kernel release."""
    table = {
        html.unescape(m["label"]).strip(): clean(html.unescape(re.sub(r"<[^>]+>", " ", m["value"])))
        for m in README_ROW.finditer(text)
    }
    kernel = re.search(r"kernel release\s+([\w.+~-]+?)\.?(?:\s|$)", text)
    if kernel:
        table["kernel"] = kernel.group(1)
    return table


def capacity_from_text(text: str) -> int | None:
    """'256 GB' -> 256000000000 (drive makers' capacities are decimal)."""
    match = re.match(r"^\s*([\d.]+)\s*(GB|TB|MB)\s*$", text or "", re.I)
    if not match:
        return None
    return int(float(match.group(1)) * {"mb": 10**6, "gb": 10**9, "tb": 10**12}[match.group(2).lower()])


def ssspt_rule(values: list[float]) -> bool:
    """SSSPT's own steady-state check on the last 5 values (verify_ss.py): all within ±10 % of their average, and
    the fitted line's two ends too."""
    if len(values) < WINDOW_ROUNDS:
        return False
    window = values[-WINDOW_ROUNDS:]
    average = sum(window) / WINDOW_ROUNDS
    low, high = average * (1 - SSSPT_EXCURSION), average * (1 + SSSPT_EXCURSION)
    if max(window) > high or min(window) < low:
        return False
    xs = list(range(len(values) - WINDOW_ROUNDS + 1, len(values) + 1))
    x_mean = sum(xs) / WINDOW_ROUNDS
    slope = sum((x - x_mean) * (y - average) for x, y in zip(xs, window, strict=True)) / sum(
        (x - x_mean) ** 2 for x in xs
    )
    ends = [average + slope * (xs[0] - x_mean), average + slope * (xs[-1] - x_mean)]
    return max(ends) <= high and min(ends) >= low


def ssspt_tracking_value(doc: dict) -> float:
    """What SSSPT tracks (roles/iops/tasks/save_value.yml): (read + write total_ios) ÷ the runtime in seconds."""
    job = doc["jobs"][0]
    ios = sum(float(job.get(d, {}).get("total_ios", 0)) for d in ("read", "write"))
    runtimes = [job.get(d, {}).get("runtime", 0) for d in ("read", "write") if job.get(d, {}).get("runtime")]
    return ios / (runtimes[0] / 1000) if runtimes else 0.0


def read_ssspt(root: Path, metadata: ImportMetadata | None = None) -> tuple[SubmissionRecord, list[Path]]:
    metadata = metadata or ImportMetadata()
    files = list_files(root)
    readme_path = next((p for p in files if p.name.lower() == "readme.md"), None)
    readme = parse_readme(readme_path.read_text(errors="replace")) if readme_path else {}

    identity = _identity(readme, metadata)
    record = SubmissionRecord(
        source="ssspt",
        identity=identity,
        interface=_interface(metadata.interface or readme.get("Interface", "")),
        profile="imported",
        compliant=False,
        compliance_reasons=[
            "imported from SSSPT: the purge, the write cache and the host were not recorded in a form nvmedb can verify"
        ],
        source_license=metadata.license or LICENSE,
        source_reference=metadata.source_reference or REFERENCE,
        signed=False,
    )
    if not readme_path:
        record.missing["identity"] = "the directory has no README.md with SSSPT's drive table"
    record.host = HostRecord(kernel=metadata.kernel or readme.get("kernel", ""))
    record.host.missing = {
        "cpu_model": "SSSPT does not record the host's CPU",
        "os_name": "SSSPT does not record the OS",
    }
    if not record.host.kernel:
        record.host.missing["kernel"] = "the README names no kernel release"
    record.missing["pcie_link"] = "SSSPT does not record the PCIe link (lspci)"
    record.missing["purge_method"] = "SSSPT does not record how the drive was purged"
    record.missing["write_cache"] = "SSSPT does not record the write cache state"
    if readme.get("NAND Type"):
        record.drive_metadata["nand_type"] = readme["NAND Type"][:100]

    skipped = []
    wipc: dict[int, FioFile] = {}
    cells: dict[tuple[int, int], list[tuple[int, FioFile]]] = defaultdict(list)
    test_run = TestRunRecord(test="iops")
    for path in files:
        if path == readme_path:
            continue
        wdpc_match, wipc_match = WDPC.match(path.name), WIPC.match(path.name)
        if not (wdpc_match or wipc_match):
            skipped.append(f"{path.relative_to(root)} (not an SSSPT IOPS output)")
            continue
        size_text = (wdpc_match or wipc_match)["bs"]
        block_size = crosscheck.parse_size(size_text)
        if block_size is None:
            skipped.append(f"{path.relative_to(root)} (block size {size_text!r} is a mix, not a PTS cell)")
            continue
        fio = read_fio(root, path, record)
        if fio is None:
            continue
        if wipc_match:
            own = crosscheck.parse_size(crosscheck.job_options(fio.doc).get("bs", "")) or block_size
            check_fio_file(fio, declared={"block_size_bytes": own, "read_pct": 0, "pattern": "write"}, record=record)
            wipc[block_size] = fio
            continue
        read_pct, round_number = int(wdpc_match["read"]), int(wdpc_match["round"])
        declared = {"block_size_bytes": block_size, "read_pct": read_pct, "pattern": "randrw"}
        check_fio_file(fio, declared=declared, record=record)
        cells[(block_size, read_pct)].append((round_number, fio))
    if skipped:
        record.missing["skipped_files"] = ("not imported: " + "; ".join(skipped))[:1000]
    if not cells:
        record.reject_reasons.append(f"{root.name}: no wdpc_bs*_read*_round*.json outputs to import")
        return record, files

    first_options = crosscheck.job_options(next(iter(cells.values()))[0][1].doc)
    record.edition = metadata.edition or edition_from_options(first_options)
    if not record.edition:
        record.missing["edition"] = "the thread count and queue depth are neither PTS-E's nor PTS-C's"
    size_option = first_options.get("size", "")
    if size_option.endswith("%") and identity.capacity_bytes:
        record.active_range_bytes = int(identity.capacity_bytes * float(size_option[:-1]) / 100)
        record.target_size_bytes = identity.capacity_bytes
    else:
        record.missing["active_range_bytes"] = f"fio size={size_option!r} and the capacity do not give the range"
    record.target_kind = "device"

    for (block_size, read_pct), rounds in sorted(cells.items()):
        rounds.sort(key=lambda item: item[0])
        _check_order(rounds, record)
        series = f"bs{block_size}.rw{read_pct:03d}"
        measurements = []
        for round_number, fio in rounds:
            measurements.append(
                measurement_from_fio(
                    fio,
                    phase="wdpc",
                    series=series,
                    round_number=round_number,
                    block_size_bytes=block_size,
                    read_pct=read_pct,
                    pattern="randrw",
                    missing={"temperature": "SSSPT records no smart-log around its runs"},
                )
            )
        window = _window(block_size, read_pct, rounds)
        for m in measurements:
            if (
                window.steady
                and window.window
                and window.window["first_round"] <= m.round_number <= window.window["last_round"]
            ):
                m.in_steady_window = True
        test_run.measurements += measurements
        test_run.windows.append(window)
        if window.claim_differs:
            record.flags.append(FlagRecord("steady_state_claim_differs", window.note[:300], test="iops"))

    for block_size, fio in sorted(wipc.items()):
        options = crosscheck.job_options(fio.doc)
        test_run.measurements.append(
            measurement_from_fio(
                fio,
                phase="wipc",
                series=f"bs{block_size}",
                round_number=1,
                block_size_bytes=crosscheck.parse_size(options.get("bs", "")) or block_size,
                read_pct=0,
                pattern=options.get("rw", "write"),
                missing={"temperature": "SSSPT records no smart-log around its runs"},
            )
        )
    test_run.threads = test_run.measurements[0].threads
    test_run.iodepth = test_run.measurements[0].iodepth
    test_run.fio_version = test_run.measurements[0].summary.fio_version or ""
    test_run.ioengine = first_options.get("ioengine", "")
    test_run.started_at = min((m.started_at for m in test_run.measurements if m.started_at), default=None)
    test_run.finished_at = max((m.finished_at for m in test_run.measurements if m.finished_at), default=None)
    test_run.missing["max_temperature_k"] = "SSSPT records no temperatures"
    not_steady = [w.variable for w in test_run.windows if not w.steady]
    if not_steady:
        record.flags.append(
            FlagRecord(
                "steady_state_not_reached",
                f"By the PTS rule, {len(not_steady)} of {len(test_run.windows)} series never reached steady state."[
                    :300
                ],
                test="iops",
            )
        )
    record.test_runs.append(test_run)
    _unwritten(record, wipc, test_run)
    return record, files


def _identity(readme: dict, metadata: ImportMetadata) -> DriveIdentity:
    maker = metadata.vendor or readme.get("Mfgr", "")
    model_number = metadata.model or readme.get("Model No.", "")
    vendor = vendor_name(model_number=maker or model_number) if (maker or model_number) else "Unknown vendor"
    product = maker if maker.lower().startswith(vendor.lower()) else f"{vendor} {maker}".strip()
    name = f"{product} {model_number}".strip() if model_number else product or "Unknown drive"
    return DriveIdentity(
        vendor=vendor,
        pci_vendor_id=None,
        name=name,
        model_number=model_number,
        capacity_bytes=metadata.capacity_bytes or capacity_from_text(readme.get("Capacity", "")),
        firmware=metadata.firmware or readme.get("Firmware Ver.", ""),
        serial=metadata.serial or readme.get("S/N", ""),
    )


def _interface(text: str) -> str:
    lowered = text.lower()
    for name in ("nvme", "sata", "sas"):
        if name in lowered:
            return name
    return "unknown"


def _check_order(rounds: list[tuple[int, FioFile]], record: SubmissionRecord) -> None:
    """Rounds of one series ran one after another: fio's own end time must grow with the round number."""
    previous = None
    for round_number, fio in rounds:
        stamp = fio.doc.get("timestamp")
        if isinstance(stamp, (int, float)) and previous is not None and stamp <= previous[1]:
            record.reject_reasons.append(
                f"{fio.path}: round {round_number} finished (fio timestamp {stamp}) no later than round "
                f"{previous[0]} ({previous[1]}): timestamps are not monotonic"[:300]
            )
        if isinstance(stamp, (int, float)):
            previous = (round_number, stamp)


def _window(block_size: int, read_pct: int, rounds: list[tuple[int, FioFile]]) -> WindowRecord:
    points = [(n, fio.summary.total_iops) for n, fio in rounds]
    steady, steady_round, window, why = judge_series(points)
    tool_values = [ssspt_tracking_value(fio.doc) for _, fio in rounds]
    tool_round = next((rounds[i][0] for i in range(len(rounds)) if ssspt_rule(tool_values[: i + 1])), None)
    last = rounds[-1][0]
    claim = {
        "tool": "SSSPT",
        "rule": "every value and the fitted line's ends within ±10% of the 5-round average (verify_ss.py)",
        "steady": tool_round is not None,
        "steady_round": tool_round,
        "last_round_run": last,
    }
    record = WindowRecord(
        variable=f"iops.total_iops.rw{read_pct:03d}.bs{block_size}",
        phase="wdpc",
        metric="total_iops",
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


def _unwritten(record: SubmissionRecord, wipc: dict[int, FioFile], test_run: TestRunRecord) -> None:
    if not record.active_range_bytes:
        return
    runs = []
    for block_size, fio in wipc.items():
        runs.append(
            (
                fio.doc.get("timestamp") or 0,
                unwritten.RunIO(fio.path, f"bs{block_size}", "write", 0, fio.summary.write_bytes or 0),
            )
        )
    for m in test_run.measurements:
        if m.phase == "wipc":
            continue
        stamp = m.finished_at.timestamp() if m.finished_at else 0
        runs.append(
            (
                stamp,
                unwritten.RunIO(m.run_key, f"bs{m.block_size_bytes}", "randrw", m.read_pct, m.summary.write_bytes or 0),
            )
        )
    runs.sort(key=lambda item: item[0])
    # SSSPT preconditions before each block size's series; a block without its wipc output started unwritten.
    for key, coverage in unwritten.unwritten_reads(
        [r for _, r in runs], active_range_bytes=record.active_range_bytes
    ).items():
        if not key.startswith("wipc"):
            record.flags.append(FlagRecord("unwritten_data", unwritten.reason(coverage), run_key=key, test="iops"))
