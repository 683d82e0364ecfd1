"""Parsers for nvme-cli's JSON output (`-o json`), in the shapes nvme-cli 1.x and 2.x print.

Every parser takes the raw text (str or bytes) or the already decoded JSON and returns a plain dict with fixed keys.
A field this nvme-cli version (or this controller) does not report is None and its key appears in `missing` with the
reason; nothing is guessed. Numbers arrive as ints, floats ("310.0") or strings ("310", "1,234"); all become ints
where they are whole.

Units (NVMe Base Specification 2.0):
- temperatures arrive in Kelvin; `*_c` keys hold degrees Celsius (K - 273, as nvme-cli converts them);
- a data unit is 1000 blocks of 512 bytes: `data_read_bytes = data_units_read * 512_000`;
- controller_busy_time, warning_temp_time and critical_comp_time count minutes (`*_min`), the thermal-management
  total times count seconds (`*_s`), power_on_hours counts hours; each also appears converted to seconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nvmedb_client import jsonload

DATA_UNIT_BYTES = 512_000
KELVIN_OFFSET = 273
# nvme-cli's largest JSON (id-ctrl with its power states, a full id-ns) is a few KiB, nested 3 deep
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 16
MAX_MAGNITUDE = 2**64
# an LBA data size is 2**ds bytes; NVMe requires ds >= 9 (512 B) and no drive formats blocks beyond 64 KiB
LBA_DS_RANGE = range(9, 17)


class NvmeParseError(ValueError):
    """The text is not nvme-cli JSON of the expected kind."""


def load_json(data: str | bytes | Mapping[str, Any] | list) -> Any:
    if isinstance(data, (Mapping, list)):
        return data
    if not (data.strip() if isinstance(data, (str, bytes)) else data):
        raise NvmeParseError("nvme-cli printed nothing")
    try:
        return jsonload.loads(
            data, what="nvme-cli output", max_bytes=MAX_OUTPUT_BYTES, max_depth=MAX_DEPTH, replace_invalid_utf8=True
        )
    except jsonload.JsonError as exc:
        raise NvmeParseError(str(exc)) from exc


_SENSOR_KEY = re.compile(r"temperature_sensor_\d{1,3}")
_DECIMAL = re.compile(r"[+-]?\d+")
_HEXADECIMAL = re.compile(r"0[xX][0-9a-fA-F]+")


def to_number(value: Any) -> int | float | None:
    """An nvme-cli number (int, float or decimal string, commas allowed) as int when whole; None when not a number or
    not below 2**64 in size (no NVMe field nvme-cli prints is wider in practice; a 128-bit counter that large would
    mean 10^25 bytes)."""
    if type(value) is int:  # most of a smart-log's fields: hundreds of logs per bundle
        return value if -MAX_MAGNITUDE < value < MAX_MAGNITUDE else None
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = _parse_text(value)
    if isinstance(value, float):
        if value != value or not -MAX_MAGNITUDE < value < MAX_MAGNITUDE:
            return None
        value = int(value) if value.is_integer() else value
    if isinstance(value, int):
        return value if -MAX_MAGNITUDE < value < MAX_MAGNITUDE else None
    return value if isinstance(value, float) else None


def _parse_text(value: str) -> int | float | None:
    text = value.strip().replace(",", "").replace("_", "")
    if len(text) > 64:  # 2**64 has 20 digits: a longer text is no number of ours, and int() of it costs time
        return None
    if _DECIMAL.fullmatch(text):
        return int(text)
    if _HEXADECIMAL.fullmatch(text):
        return int(text, 16)
    try:
        return float(text)
    except ValueError:
        return None


class _Fields:
    """Collects parsed fields and the reason for each one that is missing."""

    def __init__(self, source: Mapping[str, Any], what: str):
        self.source = source
        self.what = what
        self.out: dict[str, Any] = {}
        self.missing: dict[str, str] = {}

    def number(self, key: str, name: str | None = None) -> int | float | None:
        name = name or key
        if key not in self.source:
            self.out[name] = None
            self.missing[name] = f"this nvme-cli {self.what} output has no '{key}' field"
            return None
        value = to_number(self.source[key])
        if value is None:
            self.missing[name] = f"'{key}' is not a number below 2**64: {str(self.source[key])[:40]!r}"
        self.out[name] = value
        return value

    def text(self, key: str, name: str) -> str | None:
        if key not in self.source or self.source[key] is None:
            self.out[name] = None
            self.missing[name] = f"this nvme-cli {self.what} output has no '{key}' field"
            return None
        value = str(self.source[key]).strip()
        self.out[name] = value
        return value

    def derived(self, name: str, value: Any, reason_if_none: str) -> None:
        self.out[name] = value
        if value is None:
            self.missing[name] = reason_if_none

    def result(self) -> dict[str, Any]:
        return {**self.out, "missing": dict(self.missing)}


def _celsius(kelvin: int | float | None) -> int | float | None:
    return None if kelvin is None else kelvin - KELVIN_OFFSET


def _scaled(value: int | float | None, factor: int) -> int | float | None:
    return None if value is None else value * factor


def parse_smart_log(data: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """The SMART / Health Information log page (`nvme smart-log DEV -o json`)."""
    doc = load_json(data)
    if not isinstance(doc, Mapping):
        raise NvmeParseError("nvme smart-log JSON is not an object")
    if "temperature" not in doc and "data_units_written" not in doc:
        raise NvmeParseError(
            "this JSON is not an nvme smart-log: it has neither 'temperature' nor 'data_units_written'"
        )
    f = _Fields(doc, "smart-log")

    # 2.x (since ~2.8) prints critical_warning as an object with the raw byte under "value" and one key per bit.
    warning = doc.get("critical_warning")
    if isinstance(warning, Mapping):
        f.derived("critical_warning", to_number(warning.get("value")), "critical_warning object has no 'value'")
    else:
        f.number("critical_warning")

    kelvin = f.number("temperature", "temperature_k")
    f.derived("temperature_c", _celsius(kelvin), "no composite temperature reported")
    sensors = []
    for key in sorted(
        (k for k in doc if k.startswith("temperature_sensor_") and _SENSOR_KEY.fullmatch(k)),
        key=lambda k: int(k.rsplit("_", 1)[1]),
    ):
        sensors.append({"sensor": int(key.rsplit("_", 1)[1]), "temperature_c": _celsius(to_number(doc[key]))})
    f.out["temperature_sensors"] = sensors

    f.number("avail_spare", "avail_spare_pct")
    f.number("spare_thresh", "spare_thresh_pct")
    f.number("percent_used")
    units_read = f.number("data_units_read")
    units_written = f.number("data_units_written")
    f.derived("data_read_bytes", _scaled(units_read, DATA_UNIT_BYTES), "data_units_read missing")
    f.derived("data_written_bytes", _scaled(units_written, DATA_UNIT_BYTES), "data_units_written missing")
    f.number("host_read_commands")
    f.number("host_write_commands")
    busy = f.number("controller_busy_time", "controller_busy_time_min")
    f.derived("controller_busy_time_s", _scaled(busy, 60), "controller_busy_time missing")
    f.number("power_cycles")
    hours = f.number("power_on_hours")
    f.derived("power_on_s", _scaled(hours, 3600), "power_on_hours missing")
    f.number("unsafe_shutdowns")
    f.number("media_errors")
    f.number("num_err_log_entries")
    warn_min = f.number("warning_temp_time", "warning_temp_time_min")
    f.derived("warning_temp_time_s", _scaled(warn_min, 60), "warning_temp_time missing")
    crit_min = f.number("critical_comp_time", "critical_comp_time_min")
    f.derived("critical_comp_time_s", _scaled(crit_min, 60), "critical_comp_time missing")
    for sensor in (1, 2):
        f.number(f"thm_temp{sensor}_trans_count")
        f.number(f"thm_temp{sensor}_total_time", f"thm_temp{sensor}_total_time_s")
    return f.result()


def parse_id_ctrl(data: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """Identify Controller (`nvme id-ctrl DEV -o json`)."""
    doc = load_json(data)
    if not isinstance(doc, Mapping) or "mn" not in doc:
        raise NvmeParseError("this JSON is not an nvme id-ctrl: it has no 'mn' (model number) field")
    f = _Fields(doc, "id-ctrl")
    f.text("mn", "model")
    f.text("sn", "serial")
    f.text("fr", "firmware")
    vid = f.number("vid")
    ssvid = f.number("ssvid")
    f.out["vid_hex"] = f"{vid:04x}" if isinstance(vid, int) and 0 <= vid <= 0xFFFF else None
    f.out["ssvid_hex"] = f"{ssvid:04x}" if isinstance(ssvid, int) and 0 <= ssvid <= 0xFFFF else None
    f.number("ver")
    f.number("cntlid")
    f.number("nn")
    f.number("mdts")

    # TNVMCAP/UNVMCAP are optional (zero when the controller does not report them).
    for key in ("tnvmcap", "unvmcap"):
        value = f.number(key, f"{key}_bytes")
        if value == 0 and key == "tnvmcap":
            f.derived(f"{key}_bytes", None, "the controller reports 0 (total NVM capacity is optional)")

    # A threshold of 0 K means "not reported" (NVMe Base 2.0, 5.17.2.1).
    for key in ("wctemp", "cctemp"):
        kelvin = f.number(key, f"{key}_k")
        if kelvin == 0:
            f.derived(f"{key}_k", None, "the controller reports no threshold (0)")
            kelvin = None
        f.derived(f"{key}_c", _celsius(kelvin), f"no {key} threshold")

    oacs = f.number("oacs")
    f.derived("format_nvm_supported", _bit(oacs, 1), "oacs missing")
    f.derived("namespace_management_supported", _bit(oacs, 3), "oacs missing")
    fna = f.number("fna")
    f.derived("format_applies_to_all_namespaces", _bit(fna, 0), "fna missing")
    f.derived("secure_erase_applies_to_all_namespaces", _bit(fna, 1), "fna missing")
    f.derived("crypto_erase_supported", _bit(fna, 2), "fna missing")
    sanicap = f.number("sanicap")
    f.derived("sanitize_crypto_erase_supported", _bit(sanicap, 0), "sanicap missing")
    f.derived("sanitize_block_erase_supported", _bit(sanicap, 1), "sanicap missing")
    f.derived("sanitize_overwrite_supported", _bit(sanicap, 2), "sanicap missing")
    vwc = f.number("vwc")
    f.derived("volatile_write_cache_present", _bit(vwc, 0), "vwc missing")
    f.number("oncs")
    return f.result()


def _bit(value: int | float | None, bit: int) -> bool | None:
    if value is None or not isinstance(value, int):
        return None
    return bool(value >> bit & 1)


def parse_id_ns(data: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """Identify Namespace (`nvme id-ns DEV -o json`): sizes in blocks and bytes of the current LBA format."""
    doc = load_json(data)
    if not isinstance(doc, Mapping) or "nsze" not in doc:
        raise NvmeParseError("this JSON is not an nvme id-ns: it has no 'nsze' (namespace size) field")
    f = _Fields(doc, "id-ns")
    nsze = f.number("nsze", "nsze_blocks")
    ncap = f.number("ncap", "ncap_blocks")
    nuse = f.number("nuse", "nuse_blocks")
    flbas = f.number("flbas")
    f.number("nlbaf")

    formats = []
    lbafs = doc.get("lbafs")
    for index, entry in enumerate(lbafs if isinstance(lbafs, list) else []):
        if not isinstance(entry, Mapping):
            continue
        ds = to_number(entry.get("ds"))
        if ds is not None and ds not in LBA_DS_RANGE:
            f.missing[f"lba_format_{index}"] = f"LBA format {index} has ds={str(entry.get('ds'))[:40]}, outside 9..16"
            ds = None
        formats.append(
            {
                "index": index,
                "data_size_bytes": None if ds is None else 2**ds,
                "metadata_size_bytes": to_number(entry.get("ms")),
                "relative_performance": to_number(entry.get("rp")),
            }
        )
    f.out["lba_formats"] = formats

    current = None
    if isinstance(flbas, int):
        # FLBAS bits 3:0 are the low and bits 6:5 the high part of the format index (NVMe Base 2.0, 4.1.5.1).
        current = (flbas & 0xF) | ((flbas >> 5 & 0x3) << 4)
    f.derived("lba_format_index", current, "flbas missing")
    chosen = next((fmt for fmt in formats if fmt["index"] == current), None)
    block = chosen["data_size_bytes"] if chosen else None
    reason = "flbas missing" if current is None else f"no LBA format {current} in 'lbafs'"
    f.derived("lba_data_size_bytes", block, reason)
    f.derived("lba_metadata_size_bytes", chosen["metadata_size_bytes"] if chosen else None, reason)
    # What a Format must repeat to keep the namespace as it is (NVMe Base 2.0, 5.23): FLBAS bit 4 is the metadata
    # setting (extended LBA), DPS bits 2:0 the protection information type and bit 3 its location (first/last bytes).
    f.derived("metadata_extended", _bit(flbas, 4), "flbas missing")
    dps = f.number("dps")
    f.derived("pi_type", None if not isinstance(dps, int) else dps & 0x7, "dps missing")
    f.derived("pi_first", _bit(dps, 3), "dps missing")
    f.derived("size_bytes", _product(nsze, block), "namespace size or LBA size missing")
    f.derived("capacity_bytes", _product(ncap, block), "namespace capacity or LBA size missing")
    f.derived("used_bytes", _product(nuse, block), "namespace utilization or LBA size missing")
    return f.result()


def _product(count: int | float | None, size: int | None) -> int | None:
    if count is None or size is None:
        return None
    return int(count) * size


def parse_list(data: str | bytes | Mapping[str, Any]) -> list[dict[str, Any]]:
    """`nvme list -o json`: one entry per namespace, from the flat 1.x/2.x shape or the 2.11+ subsystem tree."""
    doc = load_json(data)
    if not isinstance(doc, Mapping) or not isinstance(doc.get("Devices"), list):
        raise NvmeParseError("this JSON is not an nvme list: it has no 'Devices' array")
    entries: list[dict[str, Any]] = []
    for device in doc["Devices"]:
        if not isinstance(device, Mapping):
            continue
        if "Subsystems" in device:
            for subsystem in _objects(device.get("Subsystems")):
                for controller in _objects(subsystem.get("Controllers")):
                    for namespace in _objects(controller.get("Namespaces")):
                        entries.append(_list_entry(namespace, controller, subsystem))
                for namespace in _objects(subsystem.get("Namespaces")):
                    controllers = _objects(subsystem.get("Controllers")) or [{}]
                    entries.append(_list_entry(namespace, controllers[0], subsystem))
        else:
            entries.append(_list_entry(device, device, {}))
    return entries


def _objects(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _list_entry(namespace: Mapping, controller: Mapping, subsystem: Mapping) -> dict[str, Any]:
    name = namespace.get("NameSpace")
    device_path = namespace.get("DevicePath")
    if device_path is None and isinstance(name, str):
        device_path = f"/dev/{name}"
    nsid = namespace.get("NSID")
    if nsid is None and isinstance(name, int):
        nsid = name
    return {
        "device_path": device_path,
        "nsid": to_number(nsid),
        "model": _stripped(controller.get("ModelNumber")),
        "serial": _stripped(controller.get("SerialNumber")),
        "firmware": _stripped(controller.get("Firmware")),
        "controller": controller.get("Controller"),
        "pci_address": controller.get("Address") or None,
        "transport": controller.get("Transport"),
        "subsystem": subsystem.get("Subsystem"),
        "used_bytes": to_number(namespace.get("UsedBytes")),
        "physical_size_bytes": to_number(namespace.get("PhysicalSize")),
        "maximum_lba": to_number(namespace.get("MaximumLBA")),
        "sector_size_bytes": to_number(namespace.get("SectorSize")),
    }


def _stripped(value: Any) -> str | None:
    return None if value is None else str(value).strip()


def parse_volatile_write_cache(text: str) -> dict[str, Any]:
    """`nvme get-feature DEV -f 0x06 -H`: whether the volatile write cache is enabled (bit 0 of the value)."""
    match = re.search(r"Current value:\s*(?:0x)?([0-9a-fA-F]+)", text)
    if not match:
        raise NvmeParseError("no 'Current value:' in the get-feature 0x06 output")
    value = int(match.group(1), 16)
    return {"value": value, "enabled": bool(value & 1)}


def parse_version(text: str) -> dict[str, str | None]:
    """`nvme version`: {"nvme-cli": "2.3", "libnvme": "1.3"} (libnvme None before nvme-cli 2.0).

    1.x prints `nvme version 1.9` (git builds: `nvme version 1.9.12.gabcd`); 2.x prints
    `nvme version 2.3 (git 2.3)` and a second line `libnvme version 1.3 (git 1.3)`."""
    cli = re.search(r"^nvme version\s+v?(\S+)", text, re.MULTILINE)
    lib = re.search(r"libnvme version\s+v?(\S+)", text)
    return {"nvme-cli": cli.group(1) if cli else None, "libnvme": lib.group(1) if lib else None}


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """ "1.9" -> (1, 9); "2.3-rc1" -> (2, 3); None when the text does not start with a number."""
    if not version:
        return None
    match = re.match(r"v?(\d+(?:\.\d+)*)", version.strip())
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


# SSTAT bits 2:0 (NVMe Base 2.0, Figure 290).
SANITIZE_STATES = {0: "never", 1: "succeeded", 2: "in_progress", 3: "failed", 4: "succeeded"}


def parse_sanitize_log(data: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """`nvme sanitize-log DEV -o json`.

    Every nvme-cli from 1.9 to 2.11 prints `{"nvme0n1": {"sprog": 65535, "sstat": {"global_erased": 1,
    "no_cmplted_passes": 0, "status": "(1) Most Recent Sanitize Command Completed Successfully."}, ...}}`: the status
    is text that starts with the SSTAT bits 2:0 in parentheses. A plain integer SSTAT (raw value) is read too.
    `state` is never, succeeded, in_progress, failed or unknown; `progress` is SPROG / 65536 (None when unknown)."""
    doc = load_json(data)
    if not isinstance(doc, Mapping):
        raise NvmeParseError("nvme sanitize-log JSON is not an object")
    entry: Any = doc
    if "sstat" not in doc and len(doc) == 1:
        entry = next(iter(doc.values()))
    if not isinstance(entry, Mapping) or "sstat" not in entry:
        raise NvmeParseError("this JSON is not an nvme sanitize-log: it has no 'sstat' field")
    sstat = entry["sstat"]
    status: int | None = None
    text: str | None = None
    raw = sstat.get("status", sstat.get("value")) if isinstance(sstat, Mapping) else sstat
    if isinstance(raw, str):
        text = raw.strip()
        match = re.match(r"\(\s*(\d+)\s*\)", text)
        number = int(match.group(1)) if match else to_number(text)
        status = number & 0x7 if isinstance(number, int) else None
    elif isinstance(raw, int) and not isinstance(raw, bool):
        status = raw & 0x7
    sprog = to_number(entry.get("sprog"))
    state = SANITIZE_STATES.get(status, "unknown") if status is not None else "unknown"
    return {
        "status": status,
        "status_text": text,
        "state": state,
        "sprog": sprog,
        "progress": sprog / 65536 if isinstance(sprog, int) and state == "in_progress" else None,
    }
