"""Does every value of a read submission fit the column it is stored in? Checked before the database sees it.

PostgreSQL refuses a string longer than its varchar, an integer beyond its type, a NUL character or NaN in JSON;
SQLite stores all of them. Checking here, against limits read from the model fields themselves, gives both databases
the same answer: a submission whose values do not fit is rejected, each reason naming the value and its limit,
instead of crashing the worker on one database and being published on the other. Nothing is truncated here: the
values come from the bundle, and a shortened identifier would be another drive's or another run's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from functools import cache

import orjson
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

from analysis.models import (
    DriveModel,
    Firmware,
    Flag,
    Host,
    Measurement,
    PcieLink,
    Round,
    SteadyStateWindow,
    TestRun,
    Vendor,
)
from analysis.records import SubmissionRecord

# The integer ranges Django documents for every backend (PostgreSQL's own): used whatever the database, so SQLite
# (whose integers are all 64-bit) refuses the same values.
INTEGER_RANGES = BaseDatabaseOperations.integer_field_ranges
MAX_PROBLEMS = 20
_WINDOW_COLUMNS = (
    "first_round",
    "last_round",
    "rounds",
    "values",
    "average",
    "data_excursion",
    "data_excursion_limit",
    "slope",
    "intercept",
    "slope_excursion",
    "slope_excursion_limit",
)
_MEASUREMENT_COLUMNS = (
    "block_size_bytes",
    "read_pct",
    "threads",
    "iodepth",
    "raw_file",
    "json_path",
    "temperature_before_k",
    "temperature_after_k",
    "runtime_s",
    "missing",
)
_SUMMARY_COLUMNS = (
    "read_iops",
    "write_iops",
    "total_iops",
    "read_bw_bytes_per_s",
    "write_bw_bytes_per_s",
    "total_bw_bytes_per_s",
    "read_bytes",
    "write_bytes",
    "lat_mean_ns",
    "read_lat_mean_ns",
    "write_lat_mean_ns",
    "lat_max_ns",
    "read_lat_max_ns",
    "write_lat_max_ns",
)


@cache
def _field(model: type[models.Model], name: str) -> models.Field:
    return model._meta.get_field(name)


@cache
def _kind(model: type[models.Model], name: str) -> tuple[models.Field, type | None]:
    """The field, and FloatField when it is a plain float column (checked once per column, not once per value)."""
    field = _field(model, name)
    plain_float = isinstance(field, models.FloatField) and not isinstance(
        field, (models.JSONField, models.CharField, models.TextField, models.BooleanField, models.IntegerField)
    )
    return field, models.FloatField if plain_float else None


@cache
def _fits(model: type[models.Model], name: str) -> Callable[[object], bool]:
    """A quick test passing only values `problem` finds nothing wrong with (None, a finite float in a float column,
    an in-range int, a short str without NUL): a bundle's ~13,000 measurement values are mostly such, and their
    reasons' words need not be spelled to be dropped. Anything else goes to `problem`."""
    field = _field(model, name)
    if isinstance(field, models.JSONField):
        return _is_none
    if isinstance(field, (models.CharField, models.TextField)):
        limit = field.max_length if field.max_length is not None else math.inf
        return lambda value: value is None or (type(value) is str and len(value) <= limit and "\x00" not in value)
    if isinstance(field, models.BooleanField):
        return lambda value: True
    if isinstance(field, models.IntegerField):
        low, high = INTEGER_RANGES[field.get_internal_type()]
        return lambda value: value is None or (type(value) is int and low <= value <= high)
    if isinstance(field, models.FloatField):
        return lambda value: value is None or (type(value) is float and math.isfinite(value))
    return _is_none


def _is_none(value: object) -> bool:
    return value is None


def max_length(model: type[models.Model], name: str) -> int:
    """The length limit of a text column, from its model field (the one place the limit is written down)."""
    return _field(model, name).max_length


def problem(model: type[models.Model], name: str, value: object, what: str) -> str | None:
    """Why `value` cannot be stored in `model.name`, or None when it fits. `what` names the value for the reason."""
    if value is None:
        return None
    field, kind = _kind(model, name)
    if kind is models.FloatField and type(value) is float and math.isfinite(value):
        return None  # the usual case, decided without the checks below
    column = f"{model.__name__}.{name}"
    if isinstance(field, models.JSONField):
        return _json_problem(value, what, column)
    if isinstance(field, (models.CharField, models.TextField)):
        text = str(value)
        if "\x00" in text:
            return f"{what} contains a NUL character, which the dataset cannot store"
        if field.max_length is not None and len(text) > field.max_length:
            return f"{what} is {len(text)} characters long, more than the {field.max_length} of {column}"
        return None
    if isinstance(field, models.BooleanField):
        return None
    if isinstance(field, models.IntegerField):
        low, high = INTEGER_RANGES[field.get_internal_type()]
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{what} is {_shown(value)}, not a whole number"
        if not low <= value <= high:
            return f"{what} is {_shown(value)}, outside the range {low}..{high} of {column}"
        return None
    if isinstance(field, models.FloatField):
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            return f"{what} is {_shown(value)}, not a number a double can hold"
        if not math.isfinite(number):
            return f"{what} is {_shown(value)}, not a finite number"
    return None


def _json_problem(value: object, what: str, column: str) -> str | None:
    try:
        # orjson's text first (a bundle's ~900 percentile maps and missing notes): a value it writes without a
        # null (its NaN and infinities) nor a NUL is one the standard library writes too, without either
        text = orjson.dumps(value)
    except orjson.JSONEncodeError:  # a key that is no string, an integer beyond 64 bits, deep nesting: see below
        text = None
    if text is not None and b"null" not in text and b"\\u0000" not in text:
        return None
    return standard_json_problem(value, what)


def standard_json_problem(value: object, what: str) -> str | None:
    """Why `value` cannot be stored as JSON, as the standard library writes it; None when it can."""
    try:
        text = json.dumps(value, allow_nan=False, default=str)
    except ValueError:
        return f"{what} holds NaN or Infinity, which is not JSON"
    except RecursionError:
        return f"{what} is nested too deeply to store"
    if "\\u0000" in text:
        return f"{what} contains a NUL character, which the dataset cannot store"
    return None


def _shown(value: object) -> str:
    text = str(value) if not isinstance(value, int) or abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
    return text if len(text) <= 40 else text[:37] + "..."


def record_problems(record: SubmissionRecord) -> list[str]:
    """Every value of `record` that does not fit its column, as reasons (at most MAX_PROBLEMS)."""
    found: list[str] = []
    for model, name, value, what in _values(record):
        reason = problem(model, name, value, what)
        if reason and reason not in found:
            found.append(reason)
            if len(found) >= MAX_PROBLEMS:
                break
    return found


def _values(record: SubmissionRecord) -> Iterable[tuple[type[models.Model], str, object, str]]:
    identity = record.identity
    yield Vendor, "name", identity.vendor, "the drive's vendor name"
    yield DriveModel, "name", identity.name, "the drive's model name"
    yield DriveModel, "model_number", identity.model_number, "the id-ctrl model number (mn)"
    yield DriveModel, "capacity_bytes", identity.capacity_bytes, "the drive's capacity (id-ctrl tnvmcap)"
    yield Vendor, "pci_vendor_id", identity.pci_vendor_id, "the PCI vendor id (id-ctrl vid)"
    yield Firmware, "revision", identity.firmware, "the firmware revision (id-ctrl fr)"
    for key, value in record.drive_metadata.items():
        yield DriveModel, key, value, f"the drive's {key}"
    for name in (
        "edition",
        "profile",
        "compliance_reasons",
        "target_kind",
        "target_size_bytes",
        "active_range_bytes",
        "namespace_size_bytes",
        "overprovisioning",
        "write_cache",
        "purge_method",
        "scheduler",
        "tool_versions",
        "source_license",
        "source_reference",
        "percentage_used",
        "power_on_hours",
        "data_written_before_bytes",
        "warning_temperature_k",
        "critical_temperature_k",
        "missing",
    ):
        yield TestRun, name, getattr(record, name), f"the submission's {name}"
    if record.host is not None:
        for name in (
            "cpu_model",
            "cpu_count",
            "memory_bytes",
            "board_vendor",
            "board_name",
            "os_name",
            "kernel",
            "architecture",
            "missing",
        ):
            yield Host, name, getattr(record.host, name), f"the host's {name}"
    yield from _link_values(record)
    for test_run in record.test_runs:
        label = f"the {test_run.test} test"
        yield TestRun, "test", test_run.test, "a test name"
        for name in ("threads", "iodepth", "fio_version", "ioengine", "max_temperature_k", "missing"):
            yield TestRun, name, getattr(test_run, name), f"{label}'s {name}"
        for m in test_run.measurements:
            yield from _measurement_values(m)
        for w in test_run.windows:
            what = f"{label}'s steady-state window {str(w.variable)[:40]!r}"
            yield SteadyStateWindow, "variable", w.variable, f"{label}'s steady-state variable"
            for name in ("phase", "metric", "block_size_bytes", "read_pct", "steady_round", "claimed"):
                yield SteadyStateWindow, name, getattr(w, name), f"{what} {name}"
            for name, value in (w.window or {}).items():
                if name in _WINDOW_COLUMNS:
                    yield SteadyStateWindow, name, value, f"{what} {name}"
        cumulative = 0
        for m in test_run.measurements:
            cumulative += (m.summary.write_bytes or 0) if m.summary else 0
        yield Measurement, "cumulative_write_bytes", cumulative, f"{label}'s total of bytes written"
    for flag in record.flags:
        yield Flag, "kind", flag.kind, "a flag kind"
        yield Flag, "reason", flag.reason[:300], f"the reason of a {str(flag.kind)[:40]} flag"
    for reason in record.hold_reasons:
        yield Flag, "reason", reason[:300], "a reason to hold the submission"


def _link_values(record: SubmissionRecord):
    yield PcieLink, "source_file", record.link_source_file, "the lspci file name"
    link = record.link
    if link is None:
        return
    device = link.device
    for name, value in (
        ("pci_address", device.address),
        ("capable_speed_gts", device.capable_speed_gts),
        ("capable_width", device.capable_width),
        ("speed_gts", device.speed_gts),
        ("width", device.width),
        ("status_note", device.status_note),
        ("max_payload_bytes", device.max_payload_bytes),
        ("max_read_request_bytes", device.max_read_request_bytes),
        ("generation", link.generation),
        ("path_speed_gts", link.path_speed_gts),
        ("path_width", link.path_width),
        ("raw_bandwidth_bytes_per_s", link.raw_bandwidth_bytes_per_s),
        ("usable_bandwidth_bytes_per_s", link.usable_bandwidth_bytes_per_s),
        ("missing", link.missing),
    ):
        yield PcieLink, name, value, f"the PCIe link's {name} (lspci)"


def _measurement_values(m) -> Iterable[tuple[type[models.Model], str, object, str]]:
    label = f"run {str(m.run_key)[:40]}"
    # only what may not fit: the rest would give no reason, and spelling what each value is was most of the time
    for model, name, attribute, what, fits in _measurement_checks():
        value = getattr(m, attribute)
        if not fits(value):
            yield model, name, value, what.format(label=label, name=name)
    summary = m.summary
    if summary is not None:
        for name, fits in _summary_checks():
            value = getattr(summary, name)
            if not fits(value):
                yield Measurement, name, value, f"{label}'s {name}"
        yield Measurement, "percentiles_ns", summary.percentiles_ns, f"{label}'s latency percentiles"


@cache
def _measurement_checks() -> tuple:
    """(model, column, the record's attribute, what the value is, _fits) of a measurement record's own values."""
    checks = [
        (Measurement, "run_key", "run_key", "the id of {label}"),
        (Round, "phase", "phase", "{label}'s phase"),
        (Round, "series", "series", "{label}'s series"),
        (Round, "number", "round_number", "{label}'s round"),
        *((Measurement, name, name, "{label}'s {name}") for name in _MEASUREMENT_COLUMNS),
    ]
    return tuple((*check, _fits(*check[:2])) for check in checks)


@cache
def _summary_checks() -> tuple:
    return tuple((name, _fits(Measurement, name)) for name in _SUMMARY_COLUMNS)
