"""What of each raw file the public may see: every served file is re-emitted from the fields of its kind that are on
an allow-list, and nothing else.

A bundle may be written by any tool and may carry files and fields the nvmedb client never writes (docs/bundle-format.md
allows both), so scrubbing what is known to identify (analysis.privacy) is not enough on its own: a tool that puts the
host's name, a DMI serial or the user's environment into a field nobody thought of would have it published. Here a
file is served only when its role is known from the manifest (`file_kind`), and then only what the allow-list of that
kind names:

- JSON files (fio output, nvme-cli id-ctrl / id-ns / smart-log / list, lshw, facts.json, run.json, commands.json) are
  parsed and written again with the allowed keys at each level; any other key is dropped without a marker (the page
  says the file is served by allow-list). A few allowed keys hold a unit's or a machine's identity (`sn`, `subnqn`,
  an lshw machine node's `id`, ...): they are kept with the value `[scrubbed]`, so the file keeps its shape.
- Text files (fio job files, lspci -vvv, fio's interval logs, get-feature 0x06) keep only the lines of known form: job
  file options from a list of fio option names (`directory=` replaced, `filename=` kept only as a kernel device name
  or a bare file name), lspci lines by their label, log lines that are numbers only.

Every string that is kept is still scrubbed of the bundle's identifiers and of what the patterns match
(analysis.privacy.Scrubber, case-insensitive). A file of an unknown kind (a format-2 `other` file, an undeclared
system file, a file a format-1 bundle names in no way the server knows) is not served at all; its contributor keeps
the original bundle.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping

from analysis import privacy
from nvmedb_client.fio_output import parse_fio_output
from nvmedb_client.system_files import V1_NAME_PATTERNS, declared_files
from submissions.content import MEASURED_KEYS

SCRUBBED = privacy.SCRUBBED

# --- which files are served, and as what ---------------------------------------------------------------------------

FIO_OUTPUT = "fio-output"
FIO_JOB = "fio-job"
FIO_LOG = "fio-log"
SMART_LOG = "nvme-smart-log"
RUN = "run"

KINDS = {
    FIO_OUTPUT: "fio's JSON output of one run",
    FIO_JOB: "the fio job file of one run",
    FIO_LOG: "fio's per-interval log of one job",
    SMART_LOG: "nvme smart-log JSON",
    RUN: "run.json: what happened during the run",
    "nvme-id-ctrl": "nvme id-ctrl JSON",
    "nvme-id-ns": "nvme id-ns JSON",
    "nvme-list": "nvme list JSON",
    "nvme-get-feature-vwc": "nvme get-feature 0x06 (volatile write cache)",
    "lspci-vvv": "lspci -vvv text",
    "lshw": "lshw JSON",
    "facts": "facts.json: the parsed host and drive facts",
    "commands": "commands.json: the commands the system collection ran",
}
NOT_SERVED = "not served: unknown file kind"

# Format 1 declared nothing: the client's own names beyond the ones the server reads (system_files.V1_NAME_PATTERNS)
V1_MORE_NAMES = {
    "nvme-list": re.compile(r"(^|/)nvme[-_]list[^/]*\.json$"),
    "lshw": re.compile(r"(^|/)lshw[^/]*\.json$"),
    "commands": re.compile(r"(^|/)commands\.json$"),
    "nvme-get-feature-vwc": re.compile(r"(^|/)nvme[-_]get[-_]feature[-_]0x0?6[^/]*\.txt$"),
}
# A run set aside when its test restarted keeps its files under superseded/<block>-<attempt>/ in the client's layout
SUPERSEDED = (
    (FIO_OUTPUT, re.compile(r"^superseded/[^/]+/fio/[^/]+\.json$")),
    (FIO_JOB, re.compile(r"^superseded/[^/]+/jobs/[^/]+\.fio$")),
    (SMART_LOG, re.compile(r"^superseded/[^/]+/smart/[^/]+\.json$")),
    (FIO_LOG, re.compile(r"^superseded/[^/]+/logs/[^/]+\.log$")),
)


def file_kinds(manifest: Mapping) -> dict[str, str]:
    """The kind of every file the manifest gives a role (path relative to files/); a listed file missing here is of
    no known kind and is not served."""
    listed = [str(e["path"]) for e in manifest.get("files") or [] if isinstance(e, Mapping) and "path" in e]
    kinds: dict[str, str] = {}

    def put(path, kind: str) -> None:
        if isinstance(path, str) and path:
            kinds.setdefault(path, kind)

    for run in manifest.get("runs") or []:
        if not isinstance(run, Mapping):
            continue
        put(run.get("output_file"), FIO_OUTPUT)
        put(run.get("job_file"), FIO_JOB)
        put(run.get("smart_before"), SMART_LOG)
        put(run.get("smart_after"), SMART_LOG)
        for log in run.get("log_files") or [] if isinstance(run.get("log_files"), list) else []:
            put(log, FIO_LOG)
    put("run.json", RUN)
    if isinstance(manifest.get("system"), Mapping):  # format 2: the declared kind, nothing else
        for entry in declared_files(manifest):
            if entry.get("kind") in KINDS:
                put(entry.get("path"), str(entry["kind"]))
    else:
        for path in listed:
            for kind, pattern in (*V1_NAME_PATTERNS.items(), *V1_MORE_NAMES.items()):
                if path.startswith("system/") and pattern.search(path):
                    put(path, kind)
                    break
    for path in listed:
        for kind, pattern in SUPERSEDED:
            if pattern.match(path):
                put(path, kind)
    return {path: kinds[path] for path in listed if path in kinds}


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# --- the allow-lists ----------------------------------------------------------------------------------------------
# A spec is one of these strings, a dict {key: spec} ("*" for any other key that is a plain token), or a one-element
# list [spec] for an array.
S = "scalar"  # a string (scrubbed), number, boolean or null
N = "number"  # a number, boolean or null
R = "redact"  # kept as "[scrubbed]": the field is there, its value names a unit or a machine
SS = "scalars"  # a scalar or an array of scalars
STATS = "stats"  # a tree of numbers under plain-token keys (fio's statistics, histograms, percentiles)
OPTIONS = "fio-options"  # fio's "job options" / "global options": allowed option names, path values replaced
DEVICE = "device"  # a device or file name: kept as a kernel device name or a bare name, else replaced
LSHW_NODE = "lshw-node"  # one lshw node, its children the same
NB = "number-or-bits"  # a number, or an object of numbers by name
MISSING = "missing"  # {"missing": reason} in place of a fact, or {"missing": {field: reason}}

TOKEN = re.compile(r"[A-Za-z0-9_.:<>=%+\-]{1,80}\Z")
_NUMERIC_KEY = re.compile(r"[<>=]{0,2}\d{1,30}(?:\.\d{1,30})?\Z")  # histogram bins, percentiles, depths
KERNEL_DEVICE = re.compile(r"/dev/[a-z]+[0-9a-z]*\Z")
BARE_NAME = re.compile(r"[A-Za-z0-9_.+\-]{1,255}\Z")

# fio options that describe the workload (job files, and fio's echo of them in its output)
FIO_OPTION_NAMES = frozenset(
    _words("""
    rw readwrite rwmixread rwmixwrite bs blocksize bsrange blocksize_range bssplit ba blockalign bs_unaligned
    bs_is_seq_rand iodepth iodepth_batch iodepth_batch_submit iodepth_batch_complete iodepth_batch_complete_min
    iodepth_batch_complete_max iodepth_low numjobs runtime timeout time_based ramp_time startdelay size io_size
    io_limit filesize offset offset_increment offset_align number_ios loops direct buffered sync fsync fdatasync
    end_fsync ioengine thread group_reporting new_group stonewall wait_for_previous randrepeat allrandrepeat randseed
    norandommap random_generator random_distribution percentage_random softrandommap refill_buffers zero_buffers
    scramble_buffers buffer_compress_percentage buffer_compress_chunk dedupe_percentage lat_percentiles
    clat_percentiles slat_percentiles percentile_list unified_rw_reporting log_avg_msec log_hist_msec log_max_value
    log_offset per_job_logs allow_file_create invalidate do_verify verify verify_fatal rate rate_iops rate_min
    rate_iops_min rate_process rate_cycle thinktime thinktime_blocks thinktime_spin hipri fixedbufs registerfiles
    sqthread_poll nonvectored cmd_type zonemode zonesize zonerange zoneskip trim_percentage fadvise_hint exitall
    exitall_on_error continue_on_error kb_base unit_base disk_util clocksource gtod_reduce nrfiles
    file_service_type openfiles create_on_open overwrite iomem mem ioscheduler name thinktime_iotime
    """)
)
PATH_OPTIONS = frozenset({"filename", "directory", "write_iops_log", "write_bw_log", "write_lat_log", "write_hist_log"})
_FIO_MEASURED = (*MEASURED_KEYS, "mixed")  # the measured keys of a job entry, and unified_rw_reporting's
FIO_JOB_ENTRY = {
    **dict.fromkeys(_FIO_MEASURED, STATS),
    **dict.fromkeys(
        _words("groupid job_start error eta elapsed latency_depth latency_target latency_percentile latency_window"), N
    ),
    "jobname": S,
    "job options": OPTIONS,
    "hostname": R,  # client/server mode names the server
}
FIO_DISK_UTIL = {
    "name": DEVICE,
    "hostname": R,
    **dict.fromkeys(
        _words("""read_ios write_ios read_merges write_merges read_sectors write_sectors read_ticks write_ticks
            in_queue util aggr_read_ios aggr_write_ios aggr_read_merges aggr_write_merge aggr_write_merges
            aggr_read_ticks aggr_write_ticks aggr_in_queue aggr_util"""),
        N,
    ),
}
FIO = {
    "fio version": S,
    "timestamp": N,
    "timestamp_ms": N,
    "time": S,
    "global options": OPTIONS,
    "jobs": [FIO_JOB_ENTRY],
    "client_stats": [FIO_JOB_ENTRY],
    "disk_util": [FIO_DISK_UTIL],
}

ID_CTRL = {
    **dict.fromkeys(
        _words("""vid ssvid mn fr rab ieee cmic mdts cntlid ver rtd3r rtd3e oaes ctratt ctrattr rrls cntrltype
        crdt1 crdt2 crdt3 nvmsr vwci mec oacs acl aerl frmw lpa elpe npss avscc apsta wctemp cctemp mtfa hmpre
        hmmin tnvmcap unvmcap rpmbs edstt dsto fwug kas hctma mntmt mxtmt sanicap
        hmminds hmmaxd nsetidmax endgidmax anatt anacap
        anagrpmax nanagrpid pels domainid megcap sqes cqes maxcmd nn oncs fuses fna vwc awun awupf icsvscc nvscc nwpc
        acwu ocfs sgls mnan maxdna maxcna oaqd ioccsz iorcsz icdoff fcatt msdbd ofcs dctype"""),
        S,
    ),
    **dict.fromkeys(_words("sn subnqn fguid"), R),
    "psds": [
        dict.fromkeys(
            _words("""max_power max_power_scale flags entry_lat exit_lat read_tput read_lat write_tput write_lat
            idle_power idle_scale active_power active_power_work active_work_scale active_scale"""),
            N,
        )
    ],
}
ID_NS = {
    **dict.fromkeys(
        _words("""nsze ncap nuse nsfeat nlbaf flbas mc dpc dps nmic rescap fpi dlfeat nawun nawupf nacwu nabsn nabo
        nabspf noiob nvmcap npwg npwa npdg npda nows mssrl mcl msrc kpios nulbaf kpiodaag anagrpid nsattr
        nvmsetid endgid         lbstm"""),
        S,
    ),
    **dict.fromkeys(_words("nguid eui64"), R),
    "lbafs": [{"ms": N, "ds": N, "rp": N}],
}
_SMART_COUNTERS = _words("""critical_warning critical_warrning temperature avail_spare spare_thresh percent_used
    percentage_used endurance_grp_critical_warning_summary data_units_read data_units_written host_read_commands
    host_write_commands controller_busy_time power_cycles power_on_hours unsafe_shutdowns media_errors
    num_err_log_entries warning_temp_time critical_comp_time thm_temp1_trans_count thm_temp2_trans_count
    thm_temp1_total_time thm_temp2_total_time""")
SMART = {
    **dict.fromkeys(_SMART_COUNTERS, S),
    **{f"temperature_sensor_{i}": S for i in range(1, 9)},
}
SMART["critical_warning"] = NB  # a number, or (nvme-cli 2.x) its bits by name
NVME_LIST_NAMESPACE = dict.fromkeys(
    ("NameSpace", "Generic", "NSID", "UsedBytes", "MaximumLBA", "PhysicalSize", "SectorSize"), S
)
NVME_LIST = {
    "Devices": [
        {
            **dict.fromkeys(
                _words(
                    """NameSpace DevicePath GenericPath Firmware Index ModelNumber ProductName UsedBytes MaximumLBA
                    PhysicalSize SectorSize"""
                ),
                S,
            ),
            **dict.fromkeys(_words("SerialNumber HostNQN HostID"), R),
            "Subsystems": [
                {
                    "Subsystem": S,
                    "SubsystemNQN": R,
                    "Controllers": [
                        {
                            **dict.fromkeys(_words("Controller Cntlid ModelNumber Firmware Transport Address Slot"), S),
                            "SerialNumber": R,
                            "Namespaces": [NVME_LIST_NAMESPACE],
                            "Paths": [{"Path": S, "ANAState": S}],
                        }
                    ],
                    "Namespaces": [NVME_LIST_NAMESPACE],
                }
            ],
        }
    ]
}
LSHW_CONFIGURATION = {
    **dict.fromkeys(
        _words("""ansiversion autonegotiation boot broadcast chassis cores driver driverversion duplex enabledcores
        errordetection family filesystem firmware latency level link logicalsectorsize maxpower multicast port
        sectorsize sku slots speed state status threads voltage wireless microcode"""),
        S,
    ),
    "mount.fstype": S,
}
LSHW_FIELDS = {
    **dict.fromkeys(
        _words("""class claimed handle description product vendor physid businfo version slot units size capacity width
        clock date disabled dev"""),
        S,
    ),
    "serial": R,
    "logicalname": DEVICE,
    "configuration": LSHW_CONFIGURATION,
    "capabilities": {"*": S},
}
PARSED_ID_CTRL = {
    **dict.fromkeys(
        _words("""cctemp_c cctemp_k cntlid crypto_erase_supported firmware fna format_applies_to_all_namespaces
        format_nvm_supported mdts model namespace_management_supported nn oacs oncs sanicap
        sanitize_block_erase_supported sanitize_crypto_erase_supported sanitize_overwrite_supported
        secure_erase_applies_to_all_namespaces ssvid ssvid_hex tnvmcap_bytes unvmcap_bytes ver vid vid_hex
        volatile_write_cache_present vwc wctemp_c wctemp_k"""),
        S,
    ),
    "serial": R,
    "missing": MISSING,
}
PARSED_ID_NS = {
    **dict.fromkeys(_words("flbas nlbaf nsze nsze_blocks ncap ncap_blocks nuse nuse_blocks lba_size_bytes"), S),
    "lbafs": [dict.fromkeys(_words("index data_size_bytes metadata_size_bytes relative_performance"), S)],
    "missing": MISSING,
}
PARSED_SMART = {
    **dict.fromkeys(
        _words("""avail_spare_pct controller_busy_time_min controller_busy_time_s critical_comp_time_min
        critical_comp_time_s critical_warning data_read_bytes data_units_read data_units_written data_written_bytes
        host_read_commands host_write_commands media_errors num_err_log_entries percent_used power_cycles
        power_on_hours power_on_s spare_thresh_pct temperature_c temperature_k thm_temp1_total_time_s
        thm_temp1_trans_count thm_temp2_total_time_s thm_temp2_trans_count unsafe_shutdowns warning_temp_time_min
        warning_temp_time_s"""),
        S,
    ),
    "sensors": [{"sensor": N, "temperature_c": N}],
    "missing": MISSING,
}
PCI_DEVICE = {
    **dict.fromkeys(
        _words("""address is_nvme capabilities_denied class_id class_name description device_id device_name driver
        express_type link_cap_speed_gts link_cap_width link_speed_gts link_speed_note link_unreadable link_width
        link_width_note max_payload_bytes max_payload_supported_bytes max_read_request_bytes numa_node prog_if
        revision slot subsystem vendor_id vendor_name"""),
        SS,
    ),
    "missing": MISSING,
}
FACTS = {
    "collected_at": S,
    "device": DEVICE,
    "privileges": {"root": N},
    "tools": {"*": S},
    "host": {
        "cpu": {"model": S, "logical_cpus": N, "sockets": N, "cores_per_socket": N, "missing": MISSING},
        "memory_bytes": N,
        "kernel": {"name": S, "release": S, "version": S, "machine": S, "missing": MISSING},
        "distribution": {"id": S, "version_id": S, "pretty_name": S, "name": S, "version": S, "missing": MISSING},
        "nvme_driver": {"*": {"*": S}},
        "cpufreq_governor": {"per_cpu_count": {"*": N}, "missing": MISSING},
        "missing": MISSING,
    },
    "block_device": {
        "block_name": S,
        "block_queue": {"*": SS},
        "pci_path": SS,
        "numa_node": N,
        "missing": MISSING,
    },
    "volatile_write_cache": {"value": N, "enabled": N, "missing": MISSING},
    "pcie": {"path": SS, "devices": [PCI_DEVICE], "raw_file": S, "missing": MISSING},
    "id_ctrl": PARSED_ID_CTRL,
    "id_ns": PARSED_ID_NS,
    "smart_log": PARSED_SMART,
    "lshw": {
        **dict.fromkeys(
            _words("""system_vendor system_product system_description board_vendor board_product board_version cpu_model
            cpu_count cpu_cores cpu_threads memory_bytes note"""),
            S,
        ),
        "missing": MISSING,
    },
    "nvme_list": [
        {
            **dict.fromkeys(
                _words("""device_path nsid model firmware controller pci_address transport subsystem used_bytes
                physical_size_bytes maximum_lba sector_size_bytes"""),
                S,
            ),
            "serial": R,
        }
    ],
    "commands_file": S,
}
RUN_ENTRY = {
    **dict.fromkeys(
        _words("""id test phase round pattern block_size_bytes read_pct threads iodepth runtime_s job_file output_file
        smart_before smart_after started_at finished_at block attempt"""),
        S,
    ),
    "log_files": SS,
}
RUN_JSON = {
    "purges": [
        {
            **dict.fromkeys(
                _words("""block method scope nvme_cli_version started_at at reason superseded
                per_namespace_fallback"""),
                S,
            ),
            "command": SS,
            "erased_namespaces": SS,
            "failed_attempts": SS,
            "skipped_attempts": SS,
        }
    ],
    "write_cache": S,
    "ioengine": {"engine": S, "note": S},
    "wsat": {"bytes_written": N, "target_bytes": N, "stop_reason": S},
    "wsat_workloads": {"*": {"bytes_written": N, "target_bytes": N, "stop_reason": S}},
    "smart_missing": [{"file": S, "reason": S}],
    "sessions": [{"started_at": S, "resumed": S, "ended_at": S, "outcome": S}],
    "interruptions": [
        {
            **dict.fromkeys(_words("started_at resumed_at length_s block stage round action"), S),
            "superseded_runs": SS,
        }
    ],
    "superseded_runs": [RUN_ENTRY],
    "write_cache_checks": [dict.fromkeys(_words("block when value enabled wanted_enabled problem"), S)],
}
COMMANDS = [{"args": SS, "returncode": N, "duration_s": N, "error": S, "output_file": S}]

JSON_SPECS = {
    FIO_OUTPUT: FIO,
    SMART_LOG: SMART,
    RUN: RUN_JSON,
    "nvme-id-ctrl": ID_CTRL,
    "nvme-id-ns": ID_NS,
    "nvme-list": NVME_LIST,
    "lshw": LSHW_NODE,
    "facts": FACTS,
    "commands": COMMANDS,
}
TEXT_KINDS = frozenset({FIO_JOB, FIO_LOG, "lspci-vvv", "nvme-get-feature-vwc"})


# --- JSON: parse, keep what the spec allows, write again -----------------------------------------------------------


class _Filter:
    def __init__(self, scrubber: privacy.Scrubber):
        self.scrubber = scrubber
        self._keys: dict[str, str | None] = {}  # a json+ output repeats the same few thousand keys in every job

    def string(self, value: str) -> str:
        return self.scrubber.text(value)

    def scalar(self, value, *, numbers_only: bool = False):
        """The value as served, or `_DROP`."""
        if value is None or isinstance(value, bool):
            return value
        if type(value) is int and value >= 100_000:  # a serial number written as a number
            return SCRUBBED if self.scrubber.names(str(value)) else value
        if isinstance(value, (int, float)):
            return value
        if isinstance(value, str) and not numbers_only:
            return self.string(value)
        return _DROP

    def key(self, key: str) -> str | None:
        """A key taken by a "*" spec: a plain token that names no identifier."""
        try:
            return self._keys[key]
        except KeyError:
            pass
        kept = key if TOKEN.match(key) and (_NUMERIC_KEY.match(key) or self.string(key) == key) else None
        if len(self._keys) < 100_000:
            self._keys[key] = kept
        return kept

    def device(self, value):
        if isinstance(value, list):
            return [d for d in (self.device(v) for v in value) if d is not _DROP]
        if not isinstance(value, str):
            return self.scalar(value)
        return device_name(value, self.scrubber)

    def apply(self, spec, value):
        if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("missing"), str):
            return {"missing": self.string(value["missing"])}  # a fact that could not be had, wherever it stands
        if isinstance(spec, dict):
            if not isinstance(value, dict):
                return _DROP
            out = {}
            for key, item in value.items():
                sub = spec.get(key, MISSING if key == "missing" else None)
                if sub is None and "*" in spec:
                    if self.key(str(key)) is None:
                        continue
                    sub = spec["*"]
                if sub is None:
                    continue
                kept = self.apply(sub, item)
                if kept is not _DROP:
                    out[key] = kept
            return out
        if isinstance(spec, list):
            if not isinstance(value, list):
                return _DROP
            return [kept for kept in (self.apply(spec[0], item) for item in value) if kept is not _DROP]
        if spec == S:
            return self.scalar(value)
        if spec == N:
            return self.scalar(value, numbers_only=True)
        if spec == R:
            return SCRUBBED if value not in (None, "", [], {}) else value
        if spec == SS:
            if isinstance(value, list):
                return [kept for kept in (self.scalar(item) for item in value) if kept is not _DROP]
            return self.scalar(value)
        if spec == STATS:
            return self.stats(value)
        if spec == NB:
            return self.stats(value) if isinstance(value, dict) else self.scalar(value)
        if spec == OPTIONS:
            if not isinstance(value, dict):
                return _DROP
            out = {}
            for name, option in value.items():
                kept = fio_option(str(name), option, self.scrubber) if isinstance(option, (str, int, float)) else None
                if kept is not None:
                    out[name] = kept
            return out
        if spec == DEVICE:
            return self.device(value)
        if spec == MISSING:
            if isinstance(value, dict):
                return self.apply({"*": S}, value)
            return self.scalar(value)
        if spec == LSHW_NODE:
            return self.lshw(value)
        raise ValueError(f"unknown spec {spec!r}")

    def stats(self, value):
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if self.key(str(key)) is None:
                    continue
                kept = self.stats(item)
                if kept is not _DROP:
                    out[key] = kept
            return out
        if isinstance(value, list):
            return [kept for kept in (self.stats(item) for item in value) if kept is not _DROP]
        return self.scalar(value, numbers_only=True)

    def lshw(self, node):
        if isinstance(node, list):
            return [kept for kept in (self.lshw(item) for item in node) if kept is not _DROP]
        if not isinstance(node, dict):
            return _DROP
        out = self.apply(LSHW_FIELDS, node)
        if "id" in node:  # the machine node is named after the host; any other id names a part ("disk", "cpu:0")
            identifier = SCRUBBED if node.get("class") == "system" else self.scalar(node["id"])
            if identifier is not _DROP:
                out = {"id": identifier, **out}
        if isinstance(node.get("children"), list):
            out["children"] = self.lshw(node["children"])
        return out


class _Drop:
    def __repr__(self) -> str:
        return "<dropped>"


_DROP = _Drop()


def device_name(value: str, scrubber: privacy.Scrubber) -> str:
    """A device or file name as served: a kernel device name (`/dev/nvme0n1`) or a bare file name, scrubbed; a by-id
    path as `/dev/disk/by-id/[scrubbed]`; any other path (it names a directory of somebody's machine) replaced."""
    parts = []
    for part in value.split(":") if not privacy.BY_ID_PATH.search(value) else [value]:
        if KERNEL_DEVICE.match(part) or BARE_NAME.match(part):
            parts.append(scrubber.text(part))
        elif privacy.BY_ID_PATH.match(part):
            parts.append(privacy.BY_ID_PATH.match(part).group(1) + SCRUBBED)
        else:
            parts.append(SCRUBBED)
    return ":".join(parts)


OPTION_VALUE = re.compile(r"[A-Za-z0-9_.,:/%+=<>${}\-]{0,400}\Z")


def fio_option(name: str, value, scrubber: privacy.Scrubber) -> str | None:
    """One fio option as served (its value; "" for a flag), or None when it is not on the allow-list."""
    text = str(value)
    if name == "directory":
        return SCRUBBED
    if name == "filename":
        return device_name(text, scrubber)
    if name in PATH_OPTIONS:  # a log file prefix: its last component
        return scrubber.text(text.rstrip("/").rsplit("/", 1)[-1]) if OPTION_VALUE.match(text) else SCRUBBED
    if name not in FIO_OPTION_NAMES or not OPTION_VALUE.match(text):
        return None
    return scrubber.text(text)


def reemit_json(kind: str, data: bytes, scrubber: privacy.Scrubber) -> str:
    """The served form of a JSON file of `kind`: its allowed fields, laid out two spaces an indent. A file that is
    not readable as its kind is not shown (a sentence says so)."""
    try:
        if kind == FIO_OUTPUT:
            document = parse_fio_output(data)  # text around it, several documents: the one that counts
        else:
            text = data.decode("utf-8", errors="replace")
            document = privacy._loads(data, text)
        kept = _Filter(scrubber).apply(JSON_SPECS[kind], document)
        if kept is _DROP:
            raise ValueError("not the shape of its kind")
        return _dumps(kept)
    except (ValueError, RecursionError, TypeError):
        return f"[not shown: this file could not be read as {KINDS[kind]}]\n"
    except Exception:  # noqa: BLE001 - parse_fio_output's own errors; never a server error for a hostile file
        return f"[not shown: this file could not be read as {KINDS[kind]}]\n"


def _dumps(document) -> str:
    """Two spaces an indent; orjson when it can write the document (the standard library's indenting encoder is pure
    Python, ten times slower on a large fio output)."""
    if privacy.orjson is not None:
        with contextlib.suppress(TypeError, privacy.orjson.JSONEncodeError):
            return privacy.orjson.dumps(document, option=privacy.orjson.OPT_INDENT_2).decode() + "\n"
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# --- text: keep the lines of known form ---------------------------------------------------------------------------

JOB_SECTION = re.compile(r"\[([A-Za-z0-9_.:\-]{1,100})\]\s*\Z")
JOB_OPTION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*(.*?))?\s*\Z")
LOG_LINE = re.compile(r"\s*\d+,\s*-?\d+(?:\.\d+)?(?:,\s*\d+){2,4}\s*\Z")
VWC_LINE = re.compile(
    r"(?:get-feature:\s*0x0?6 \(Volatile Write Cache\), Current value:\s*(?:0x)?[0-9a-fA-F]+"
    r"|\s*Volatile Write Cache Enable \(WCE\):\s*(?:Enabled|Disabled))\s*\Z"
)
PCI_HEADER = re.compile(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7] \S")
PCI_LABEL = re.compile(r"([A-Za-z][A-Za-z0-9 /#_.()\-]*?):(?:\s|\Z)")
# a continuation line holds lspci's flags ("ExtTag- RBE+") or sizes ("MaxPayload 256 bytes, MaxReadReq 512 bytes")
PCI_FLAGS = re.compile(r"[A-Za-z0-9)][+-](?:[\s,]|\Z)|\d+ bytes|Not Supported|Supported|=\d+[a-z]*s\b")
PCI_LABELS = frozenset(
    [
        "Subsystem",
        "Control",
        "Status",
        "Latency",
        "Interrupt",
        "NUMA node",
        "IOMMU group",
        "Physical Slot",
        "Bus",
        "I/O behind bridge",
        "\n    Memory behind bridge",
        "Prefetchable memory behind bridge",
        "Secondary status",
        "BridgeCtl",
        "Capabilities",
        "Flags",
        "DevCap",
        "DevCtl",
        "\n    DevSta",
        "LnkCap",
        "LnkCtl",
        "LnkSta",
        "SltCap",
        "SltCtl",
        "SltSta",
        "RootCap",
        "RootCtl",
        "RootSta",
        "DevCap2",
        "DevCtl2",
        "DevSta2",
        "LnkCap2",
        "LnkCtl2",
        "\n    LnkSta2",
        "LnkCtl3",
        "LaneErrStat",
        "AtomicOpsCap",
        "AtomicOpsCtl",
        "Transmit Margin",
        "Compliance De-emphasis",
        "\n    Compliance Preset/De-emphasis",
        "Address",
        "Vector table",
        "PBA",
        "Masking",
        "Pending",
        "UESta",
        "UEMsk",
        "UESvrt",
        "CESta",
        "CEMsk",
        "AERCap",
        "\n    HeaderLog",
        "RootCmd",
        "ErrorSrc",
        "ACSCap",
        "ACSCtl",
        "L1SubCap",
        "L1SubCtl1",
        "L1SubCtl2",
        "Max snoop latency",
        "Max no snoop latency",
        "\n    Kernel driver in use",
        "Kernel modules",
        "PortCap",
        "PortSta",
        "Ctrl",
        "Arb",
        "Changed",
        "Caps",
        "ATSCap",
        "ATSCtl",
        "PRICtl",
        "PRISta",
        "\n    Page Request Capacity",
        "Page Request Allocation",
        "PASIDCap",
        "PASIDCtl",
        "IOVCap",
        "IOVCtl",
        "IOVSta",
        "Initial VFs",
        "VF offset",
        "\n    VF Migration",
        "DpcCap",
        "DpcCtl",
        "Source",
        "PTMCap",
        "PTMClockGranularity",
        "PTMControl",
        "PTMEffectiveGranularity",
        "\n    Completion Timeout",
        "Expansion ROM at",
        "Region 0",
        "Region 1",
        "Region 2",
        "Region 3",
        "Region 4",
        "Region 5",
        "ARICap",
        "ARICtl",
        "AFCap",
        "\n    AFCtrl",
        "AFStatus",
        "VC0",
        "VC1",
        "Supported Page Size",
        "L1SubSta",
        "DevCap3",
        "DevCtl3",
        "DevSta3",
        "LnkCap3",
    ]
)
PCI_LABELS = frozenset(label.strip() for label in PCI_LABELS)


def _width(line: str) -> int:
    """The indentation of a line, a tab counted as 8 columns."""
    prefix = line[: len(line) - len(line.lstrip(" \t"))]
    return len(prefix.replace("\t", " " * 8))


class _Lines:
    """Keeps the lines of one text kind that are on its allow-list (state carries across lines for lspci)."""

    def __init__(self, kind: str, scrubber: privacy.Scrubber):
        self.kind, self.scrubber = kind, scrubber
        self.block: int | None = None  # lspci: indentation of the last kept labelled line, while its block lasts

    def line(self, line: str) -> str | None:
        if self.kind == FIO_JOB:
            return self.job_line(line)
        if self.kind == FIO_LOG:
            return line if LOG_LINE.match(line) else None
        if self.kind == "nvme-get-feature-vwc":
            return line if VWC_LINE.match(line) else None
        return self.lspci_line(line)

    def job_line(self, line: str) -> str | None:
        stripped = line.strip()
        if not stripped:
            return ""
        section = JOB_SECTION.match(stripped)
        if section:
            return f"[{self.scrubber.text(section.group(1))}]"
        option = JOB_OPTION.match(stripped)
        if not option:
            return None  # comments (free text), include directives, anything else
        name, value = option.group(1), option.group(2)
        if value is None:
            return name if name in FIO_OPTION_NAMES else None
        kept = fio_option(name, value, self.scrubber)
        return None if kept is None else f"{name}={kept}"

    def lspci_line(self, line: str) -> str | None:
        if not line.strip():
            self.block = None
            return ""
        width = _width(line)
        if width == 0:
            self.block = None
            return self.scrubber.text(line) if PCI_HEADER.match(line) else None
        stripped = line.strip()
        label = PCI_LABEL.match(stripped)
        first = stripped.split(None, 1)[0]
        if label is None or first.endswith(_words("+ -")):  # the flags that continue a labelled line
            continued = self.block is not None and width > self.block and PCI_FLAGS.search(stripped)
            return self.scrubber.text(line) if continued else None
        if label.group(1) not in PCI_LABELS:
            self.block = None  # a field not on the list (VPD's product name, say): nothing under it either
            return None
        if self.block is None or width <= self.block:
            self.block = width
        return self.scrubber.text(line)


def reemit_text(kind: str, pieces: Iterable[str], scrubber: privacy.Scrubber) -> Iterator[str]:
    """The served form of a text file of `kind`, as it is read: the lines on its allow-list."""
    lines = _Lines(kind, scrubber)
    pending = ""
    out: list[str] = []
    size = 0
    for piece in pieces:
        pending += piece
        *complete, pending = pending.split("\n")
        for line in complete:
            kept = lines.line(line.rstrip("\r"))
            if kept is not None:
                out.append(kept + "\n")
                size += len(kept) + 1
        if size >= privacy.CHUNK_CHARS:
            yield "".join(out)
            out, size = [], 0
    if pending:
        kept = lines.line(pending.rstrip("\r"))
        if kept is not None:
            out.append(kept + "\n")
    if out:
        yield "".join(out)


def reemit(kind: str, stream, scrubber: privacy.Scrubber) -> Iterator[str]:
    """A file of a known kind, read from a binary `stream`, as it is served: a text kind line by line as it is read,
    a JSON kind at once (it must be parsed whole)."""
    if kind in TEXT_KINDS:
        yield from reemit_text(kind, text_pieces(stream), scrubber)
    else:
        text = reemit_json(kind, stream.read(), scrubber)
        for start in range(0, len(text), privacy.CHUNK_CHARS):  # a streamed download gets it in pieces
            yield text[start : start + privacy.CHUNK_CHARS]


READ_BYTES = 256 * 1024


def text_pieces(stream) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while block := stream.read(READ_BYTES):
        yield decoder.decode(block)
    yield decoder.decode(b"", final=True)
