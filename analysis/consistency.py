"""Does a client bundle agree with itself? Each rule compares two things the bundle declares that must agree.

The plan, the target, the compliance reasons, the namespace id-ns describes, the block sizes fio ran, the clocks and
the smart-log counters each come from a different part of the bundle. When two of them contradict each other, one
is wrong, and nothing in the bundle says which: the submission is held for review with the reason (never published
silently) and is not compliant. Each rule is one function returning `GateFailure`s in the shape of
`analysis.plausibility`; `RULES` lists them with the sentence the methodology page shows. Checks that crosscheck and
plausibility already make (the arithmetic of fio's figures, runs in time order, smart-log counters against fio's
bytes, the active range inside the target) are not repeated here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from analysis import plausibility
from analysis.crosscheck import CLOCK_SLACK_S
from analysis.plausibility.limits import HOLD, GateFailure, finite, show
from analysis.records import FlagRecord, SubmissionRecord

RULES = {
    "plan_missing": "the manifest carries a plan with at least one test block, so every run can be checked against it",
    "plan_agrees": "the plan was made for this bundle: its target kind, size, active range, profile, edition and "
    "non-compliance reasons are the manifest's",
    "target_kind": "a device target's compliance reasons never speak of a file target; a file target's always do, "
    "and never of a purge or a write cache only a drive has",
    "namespace_size": "on a device, the target and its active range fit in the namespace (id-ns nsze × LBA size)",
    "lba_block_size": "on a device, every block fio ran with direct I/O is a whole number of the namespace's LBAs, "
    "and the plan was made for that LBA size",
    "timestamps_present": "every run has a start and a finish with a time zone, fio's output its own timestamp, and "
    "the bundle was created after its last run",
    "smart_counters_present": "on a device, every smart-log around a run carries the data-unit counters that are "
    "compared with fio's bytes",
}

# The client's marker for a file target (nvmedb_client.plan.build_plan): "file target: a file on a filesystem ...".
FILE_TARGET_MARK = "file target"
# Reasons only an NVMe device can produce (nvmedb_client.runner and .device): a purge and the write cache read-back.
DEVICE_ONLY_MARKS = ("purged with blkdiscard", "write cache at ", "the drive reports its write cache")
TRUE_OPTIONS = ("1", "true", "yes", "on")


def _plan(manifest: Mapping) -> Mapping:
    plan = manifest.get("plan")
    return plan if isinstance(plan, Mapping) else {}


def usable_plan(plan) -> bool:
    """A plan the runs can be checked against: an object whose `blocks` is a non-empty list of test blocks."""
    blocks = plan.get("blocks") if isinstance(plan, Mapping) else None
    return isinstance(blocks, list) and any(isinstance(b, Mapping) and b.get("test") for b in blocks)


def check_plan_present(manifest: Mapping) -> list[GateFailure]:
    """Without a plan, no run can be shown to be the run that was meant: held, never published unchecked."""
    if usable_plan(_plan(manifest)):
        return []
    plan = manifest.get("plan")
    what = "no plan" if not plan else "a plan with no test blocks"
    return [GateFailure("plan_missing", HOLD, f"the manifest has {what}: its runs cannot be checked against one")]


def _runs(manifest: Mapping) -> list[Mapping]:
    runs = manifest.get("runs")
    return [run for run in runs if isinstance(run, Mapping)] if isinstance(runs, list) else []


def _reasons(manifest: Mapping) -> list[str]:
    compliance = manifest.get("compliance")
    compliance = compliance if isinstance(compliance, Mapping) else {}
    reasons = compliance.get("reasons")
    found = [r for r in reasons if isinstance(r, str)] if isinstance(reasons, list) else []
    tests = compliance.get("tests")
    for items in tests.values() if isinstance(tests, Mapping) else ():
        found += [r for r in items if isinstance(r, str)] if isinstance(items, list) else []
    return found


def _name(value) -> object:
    """A profile or edition as the plan stores it: an object with a name, or the name itself."""
    return value.get("name") if isinstance(value, Mapping) else value


def check_plan_agrees(manifest: Mapping) -> list[GateFailure]:
    """Every fact the plan states about the run must be the manifest's: a plan copied from another run, or a header
    edited after planning, is caught. A fact the plan does not state is not compared."""
    plan = _plan(manifest)
    if not usable_plan(plan):
        return []
    target = manifest.get("target") if isinstance(manifest.get("target"), Mapping) else {}
    pairs = (
        ("target kind", plan.get("target_kind"), target.get("kind")),
        ("capacity", plan.get("capacity_bytes"), target.get("size_bytes")),
        ("active range", plan.get("active_range_bytes"), target.get("active_range_bytes")),
        ("profile", _name(plan.get("profile")), manifest.get("profile")),
        ("edition", _name(plan.get("edition")), manifest.get("edition")),
    )
    problems = [
        f"the plan's {what} is {show(planned)}, the manifest's {show(declared)}"
        for what, planned, declared in pairs
        if planned is not None and planned != declared
    ]
    compliance = plan.get("compliance") if isinstance(plan.get("compliance"), Mapping) else {}
    planned_reasons = compliance.get("reasons") if isinstance(compliance.get("reasons"), list) else []
    declared = set(_reasons(manifest))
    dropped = [r for r in planned_reasons if isinstance(r, str) and r not in declared]
    if dropped:
        problems.append(f"the plan's non-compliance reason {show(dropped[0])} is not in the manifest's reasons")
    return [GateFailure("plan_agrees", HOLD, problem) for problem in problems]


def check_target_kind(manifest: Mapping, record: SubmissionRecord) -> list[GateFailure]:
    """The target kind against the compliance reasons and the purge record: a device is never called a file target;
    a file target says so, and was neither purged nor had a write cache to check."""
    reasons = _reasons(manifest)
    kind = record.target_kind
    named_file = [r for r in reasons if FILE_TARGET_MARK in r.lower()]
    failures = []
    if kind == "device" and named_file:
        failures.append(
            GateFailure("target_kind", HOLD, f"a device target whose compliance reasons say {show(named_file[0])}")
        )
    if kind == "file":
        if not named_file:
            failures.append(
                GateFailure(
                    "target_kind", HOLD, "a file target whose compliance reasons do not say it is a file target"
                )
            )
        device_only = [r for r in reasons if any(mark in r for mark in DEVICE_ONLY_MARKS)]
        if device_only:
            failures.append(
                GateFailure("target_kind", HOLD, f"a file target whose compliance reasons say {show(device_only[0])}")
            )
        if record.purge_method:
            failures.append(
                GateFailure("target_kind", HOLD, f"a file target that run.json says was purged ({record.purge_method})")
            )
    return failures


def _size(value) -> int | None:
    return int(value) if finite(value) and value > 0 else None


def check_namespace_size(record: SubmissionRecord, id_ns: Mapping | None) -> list[GateFailure]:
    """A device target is the namespace id-ns describes: neither it nor its active range can be larger. (The active
    range against the target's own size is plausibility's `sizes` rule.) A file target's namespace is unknown."""
    namespace = _size((id_ns or {}).get("size_bytes"))
    if record.target_kind != "device" or namespace is None:
        return []
    failures = []
    for what, value in (("target", record.target_size_bytes), ("active range", record.active_range_bytes)):
        if _size(value) is not None and value > namespace:
            failures.append(
                GateFailure(
                    "namespace_size",
                    HOLD,
                    f"the {what} is {value} B, larger than the namespace ({namespace} B, id-ns nsze × LBA size)",
                )
            )
    return failures


def _direct(options: Mapping) -> bool:
    direct = str(options.get("direct", "")).strip().lower()
    buffered = str(options.get("buffered", "")).strip().lower()
    return direct in TRUE_OPTIONS or buffered in ("0", "false", "no", "off")


def check_lba_block_size(
    manifest: Mapping, record: SubmissionRecord, id_ns: Mapping | None, options: Mapping[str, Mapping]
) -> list[GateFailure]:
    """With direct I/O the kernel refuses a block that is not a whole number of the namespace's LBAs (EINVAL), so a
    512-byte cell on a 4096-byte-LBA namespace cannot have run; and a plan made for another LBA size is not this
    namespace's plan."""
    lba = _size((id_ns or {}).get("lba_data_size_bytes"))
    if record.target_kind != "device" or lba is None:
        return []
    failures = []
    planned = _plan(manifest).get("lba_size_bytes")
    if planned is not None and planned != lba:
        failures.append(
            GateFailure("lba_block_size", HOLD, f"the plan was made for {show(planned)}-byte LBAs, id-ns says {lba}")
        )
    for run in _runs(manifest):
        run_id = str(run.get("id"))
        block = _size(run.get("block_size_bytes"))
        if block is None or block % lba == 0 or not _direct(options.get(run_id) or {}):
            continue
        failures.append(
            GateFailure(
                "lba_block_size",
                HOLD,
                f"run {run_id}: a {block}-byte block with direct I/O on a namespace of {lba}-byte LBAs cannot run",
            )
        )
    return failures


def _moment(value) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def check_timestamps_present(manifest: Mapping, fio_timestamps: Mapping[str, object]) -> list[GateFailure]:
    """crosscheck orders the runs in time and holds fio's clock to each run's window, but only where both are
    there: a run without a start or finish (or one without a time zone, which cannot be ordered against the others)
    or a fio output without its timestamp would pass unchecked. The bundle is also created after its last run."""
    problems = []
    timing = manifest.get("timing") if isinstance(manifest.get("timing"), Mapping) else {}
    for key in ("started_at", "finished_at"):
        moment = _moment(timing.get(key))
        if moment is None or moment.tzinfo is None:
            problems.append(f"the bundle's timing.{key} is {show(timing.get(key))}, not a time with a time zone")
    for run in _runs(manifest):
        run_id = str(run.get("id"))
        for key in ("started_at", "finished_at"):
            moment = _moment(run.get(key))
            if moment is None or moment.tzinfo is None:
                problems.append(f"run {run_id}: {key} is {show(run.get(key))}, not a time with a time zone")
        stamp = fio_timestamps.get(run_id)
        # fio writes whole epoch seconds; crosscheck compares only those, so anything else would pass unchecked
        if run_id in fio_timestamps and (isinstance(stamp, bool) or not isinstance(stamp, int)):
            problems.append(
                f"run {run_id}: its fio output has no timestamp (whole epoch seconds, as fio writes it) of when fio "
                f"finished, but {show(stamp)}"
            )
    created, finished = _moment(manifest.get("created_at")), _moment(timing.get("finished_at"))
    zoned = created is not None and finished is not None and created.tzinfo and finished.tzinfo
    if zoned and (created - finished).total_seconds() < -CLOCK_SLACK_S:
        problems.append(
            f"the bundle was created ({created.isoformat()}) before its runs finished ({finished.isoformat()})"
        )
    return [GateFailure("timestamps_present", HOLD, problem) for problem in problems]


def check_smart_counters_present(record: SubmissionRecord) -> list[GateFailure]:
    """crosscheck compares the data-unit counters with fio's bytes only where a snapshot carries them; on a device,
    a smart-log without them would skip that comparison silently. (Absent smart-logs are plausibility's
    `smart_logs_missing`.)"""
    if record.target_kind != "device":
        return []
    failures = []
    for m in (m for tr in record.test_runs for m in tr.measurements):
        for side, smart in (("before", m.smart_before), ("after", m.smart_after)):
            if not smart:
                continue
            lacking = [k for k in ("data_units_read", "data_units_written") if not finite(smart.get(k))]
            if lacking:
                failures.append(
                    GateFailure(
                        "smart_counters_present",
                        HOLD,
                        f"run {m.run_key}: its smart-log {side} has no {' or '.join(lacking)} to compare with "
                        "fio's bytes",
                    )
                )
    return failures


def bundle_failures(
    record: SubmissionRecord,
    *,
    manifest: Mapping,
    id_ns: Mapping | None,
    options: Mapping[str, Mapping],
    fio_timestamps: Mapping[str, object],
) -> list[GateFailure]:
    """Every rule, in the order of RULES."""
    failures = check_plan_present(manifest)
    failures += check_plan_agrees(manifest)
    failures += check_target_kind(manifest, record)
    failures += check_namespace_size(record, id_ns)
    failures += check_lba_block_size(manifest, record, id_ns, options)
    failures += check_timestamps_present(manifest, fio_timestamps)
    failures += check_smart_counters_present(record)
    return list(dict.fromkeys(failures))


def apply(
    record: SubmissionRecord,
    *,
    manifest: Mapping,
    id_ns: Mapping | None,
    options: Mapping[str, Mapping],
    documents: Mapping[str, Mapping],
) -> list[GateFailure]:
    """Hold `record` for every contradiction, with `<rule>: <reason>` (at most five per rule, then a count), a
    `crosscheck` flag, and the reason among its compliance reasons: a contradicted bundle is never compliant."""
    fio_timestamps = {run_id: doc.get("timestamp") for run_id, doc in documents.items()}
    failures = bundle_failures(record, manifest=manifest, id_ns=id_ns, options=options, fio_timestamps=fio_timestamps)
    for failure in plausibility.summarised(failures):
        reason = f"{failure.rule}: {failure.reason}"[:300]
        record.hold_reasons.append(reason)
        record.flags.append(FlagRecord("crosscheck", reason))
        record.compliant = False
        if reason not in record.compliance_reasons:
            record.compliance_reasons.append(reason)
    return failures


def rule_names(failures: Sequence[GateFailure]) -> set[str]:
    return {f.rule for f in failures}
