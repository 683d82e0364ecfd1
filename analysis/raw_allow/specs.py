"""The allow-lists: for each kind of JSON file, the keys kept at each level and how their values are served."""

from __future__ import annotations

import re

from analysis.raw_allow.kinds import FIO_JOB, FIO_LOG, FIO_OUTPUT, RUN, SMART_LOG
from submissions.content import MEASURED_KEYS


def words(text: str) -> tuple[str, ...]:
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
NUMERIC_KEY = re.compile(r"[<>=]{0,2}\d{1,30}(?:\.\d{1,30})?\Z")  # histogram bins, percentiles, depths
KERNEL_DEVICE = re.compile(r"/dev/[a-z]+[0-9a-z]*\Z")
BARE_NAME = re.compile(r"[A-Za-z0-9_.+\-]{1,255}\Z")

# fio options that describe the workload (job files, and fio's echo of them in its output)
FIO_OPTION_NAMES = frozenset(
    words("""
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
        words("groupid job_start error eta elapsed latency_depth latency_target latency_percentile latency_window"), N
    ),
    "jobname": S,
    "job options": OPTIONS,
    "hostname": R,  # client/server mode names the server
}
FIO_DISK_UTIL = {
    "name": DEVICE,
    "hostname": R,
    **dict.fromkeys(
        words("""read_ios write_ios read_merges write_merges read_sectors write_sectors read_ticks write_ticks
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
        words("""vid ssvid mn fr rab ieee cmic mdts cntlid ver rtd3r rtd3e oaes ctratt ctrattr rrls cntrltype
        crdt1 crdt2 crdt3 nvmsr vwci mec oacs acl aerl frmw lpa elpe npss avscc apsta wctemp cctemp mtfa hmpre
        hmmin tnvmcap unvmcap rpmbs edstt dsto fwug kas hctma mntmt mxtmt sanicap
        hmminds hmmaxd nsetidmax endgidmax anatt anacap
        anagrpmax nanagrpid pels domainid megcap sqes cqes maxcmd nn oncs fuses fna vwc awun awupf icsvscc nvscc nwpc
        acwu ocfs sgls mnan maxdna maxcna oaqd ioccsz iorcsz icdoff fcatt msdbd ofcs dctype"""),
        S,
    ),
    **dict.fromkeys(words("sn subnqn fguid"), R),
    "psds": [
        dict.fromkeys(
            words("""max_power max_power_scale flags entry_lat exit_lat read_tput read_lat write_tput write_lat
            idle_power idle_scale active_power active_power_work active_work_scale active_scale"""),
            N,
        )
    ],
}
ID_NS = {
    **dict.fromkeys(
        words("""nsze ncap nuse nsfeat nlbaf flbas mc dpc dps nmic rescap fpi dlfeat nawun nawupf nacwu nabsn nabo
        nabspf noiob nvmcap npwg npwa npdg npda nows mssrl mcl msrc kpios nulbaf kpiodaag anagrpid nsattr
        nvmsetid endgid         lbstm"""),
        S,
    ),
    **dict.fromkeys(words("nguid eui64"), R),
    "lbafs": [{"ms": N, "ds": N, "rp": N}],
}
_SMART_COUNTERS = words("""critical_warning critical_warrning temperature avail_spare spare_thresh percent_used
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
                words(
                    """NameSpace DevicePath GenericPath Firmware Index ModelNumber ProductName UsedBytes MaximumLBA
                    PhysicalSize SectorSize"""
                ),
                S,
            ),
            **dict.fromkeys(words("SerialNumber HostNQN HostID"), R),
            "Subsystems": [
                {
                    "Subsystem": S,
                    "SubsystemNQN": R,
                    "Controllers": [
                        {
                            **dict.fromkeys(words("Controller Cntlid ModelNumber Firmware Transport Address Slot"), S),
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
        words("""ansiversion autonegotiation boot broadcast chassis cores driver driverversion duplex enabledcores
        errordetection family filesystem firmware latency level link logicalsectorsize maxpower multicast port
        sectorsize sku slots speed state status threads voltage wireless microcode"""),
        S,
    ),
    "mount.fstype": S,
}
LSHW_FIELDS = {
    **dict.fromkeys(
        words("""class claimed handle description product vendor physid businfo version slot units size capacity width
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
        words("""cctemp_c cctemp_k cntlid crypto_erase_supported firmware fna format_applies_to_all_namespaces
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
    **dict.fromkeys(words("flbas nlbaf nsze nsze_blocks ncap ncap_blocks nuse nuse_blocks lba_size_bytes"), S),
    "lbafs": [dict.fromkeys(words("index data_size_bytes metadata_size_bytes relative_performance"), S)],
    "missing": MISSING,
}
PARSED_SMART = {
    **dict.fromkeys(
        words("""avail_spare_pct controller_busy_time_min controller_busy_time_s critical_comp_time_min
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
        words("""address is_nvme capabilities_denied class_id class_name description device_id device_name driver
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
            words("""system_vendor system_product system_description board_vendor board_product board_version cpu_model
            cpu_count cpu_cores cpu_threads memory_bytes note"""),
            S,
        ),
        "missing": MISSING,
    },
    "nvme_list": [
        {
            **dict.fromkeys(
                words("""device_path nsid model firmware controller pci_address transport subsystem used_bytes
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
        words("""id test phase round pattern block_size_bytes read_pct threads iodepth runtime_s job_file output_file
        smart_before smart_after started_at finished_at block attempt"""),
        S,
    ),
    "log_files": SS,
}
RUN_JSON = {
    "purges": [
        {
            **dict.fromkeys(
                words("""block method scope nvme_cli_version started_at at reason superseded
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
            **dict.fromkeys(words("started_at resumed_at length_s block stage round action"), S),
            "superseded_runs": SS,
        }
    ],
    "superseded_runs": [RUN_ENTRY],
    "write_cache_checks": [dict.fromkeys(words("block when value enabled wanted_enabled problem"), S)],
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
