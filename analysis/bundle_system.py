"""What a client bundle says about the machine and the drive: its system files, facts.json, run.json and lspci.

The client's system collection (nvmedb_client.system.collect) writes raw tool outputs and facts.json, where a fact
the machine could not provide is {"missing": reason}. These helpers find those files, read them with the client's
own parsers, and turn them into records, saying why whenever something is absent.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from analysis.limits import WRITE_CACHE_STATES, bounded, purge_method_problem
from analysis.pcie import LinkEnd, assess_link, link_problems
from analysis.poison import reading
from analysis.records import HostRecord, SubmissionRecord
from analysis.values import optional_int
from nvmedb_client import jsonload
from nvmedb_client import system_files as declared_kinds
from nvmedb_client.fio_output import FioSummary
from nvmedb_client.system.lspci import parse_lspci
from submissions.fio_summaries import bundle_summary

if TYPE_CHECKING:
    from nvmedb_client.bundle import VerifiedBundle

# facts.json and run.json are a few KiB; a larger one is no record of ours
MAX_FACTS_BYTES = 16 * 1024 * 1024


class ListedFiles:
    """The bundle's files by manifest path, wherever verification keeps them (in memory or extracted). Only listed
    paths are read, and verification already proved each of them safe and intact."""

    def __init__(self, bundle: VerifiedBundle):
        self.bundle = bundle
        self.listed = bundle.listed

    def read_bytes(self, path: str) -> bytes:
        return self.bundle.read_bytes(path)

    def parsed(self, path: str, parse):
        """`parse` of the file's bytes, once per bundle (VerifiedBundle.parsed): do not change the result."""
        return self.bundle.parsed(path, parse)

    def fio_output(self, path: str) -> dict:
        """The fio output's result, parsed once per bundle (VerifiedBundle.fio_output): do not change it."""
        return self.bundle.fio_output(path)

    def fio_summary(self, path: str) -> FioSummary:
        """The summary of a fio output, made once per bundle (the content fingerprints made it first)."""
        return bundle_summary(self.bundle, path)


def run_facts(bundle, files: set[str], facts: dict | None, record: SubmissionRecord) -> None:
    """Purge method and write cache as the client recorded them (files/run.json, system facts.json)."""
    run_json = "run.json" if "run.json" in files else None
    recorded = read_json(bundle, run_json, {}, "run.json", rejects=record.reject_reasons) or {}
    purges = recorded.get("purges") if isinstance(recorded.get("purges"), list) else []
    methods = sorted({str(p.get("method")) for p in purges if isinstance(p, Mapping) and p.get("method")})
    problem = purge_method_problem(methods)
    if problem:
        record.reject_reasons.append(problem)
    else:
        record.purge_method = ", ".join(methods)
    if not methods:
        reasons = {bounded(str(p.get("reason")), 200) for p in purges if isinstance(p, Mapping) and p.get("reason")}
        record.missing["purge_method"] = (
            "; ".join(sorted(reasons)) or "the bundle does not say how the drive was purged"
        )
    cache = present(find(facts, "volatile_write_cache")) if facts else None
    if not isinstance(cache, Mapping) or "enabled" not in cache:
        cache = recorded.get("write_cache")
    if isinstance(cache, Mapping) and isinstance(cache.get("enabled"), bool):
        record.write_cache = "enabled" if cache["enabled"] else "disabled"
    elif isinstance(cache, str) and cache in WRITE_CACHE_STATES:
        record.write_cache = cache
    elif isinstance(cache, str) and cache:
        record.missing["write_cache"] = (
            f"run.json names the write cache state {cache[:40]!r}: neither of {WRITE_CACHE_STATES}"
        )
    else:
        record.missing["write_cache"] = "neither the system facts nor run.json report the volatile write cache state"


def system_files(manifest: Mapping, files: set[str]) -> dict[str, str]:
    """The system file of each kind the server reads: by its declared kind (format 2), or by the client's old names
    for a format-1 bundle, which declared nothing."""
    if manifest.get("format_version") == 1:
        return declared_kinds.files_by_v1_name(manifest, files)
    return declared_kinds.files_by_kind(manifest)


def undeclared_system_files(manifest: Mapping, record: SubmissionRecord) -> None:
    """Format 2: a file under system/ whose kind the manifest does not declare is held for review: its role is
    unknown, so the server cannot tell whether it contradicts what the declared files say."""
    if manifest.get("format_version") == 1:
        return
    undeclared = declared_kinds.undeclared_system_files(manifest)
    if undeclared:
        shown = ", ".join(undeclared[:3]) + (f" and {len(undeclared) - 3} more" if len(undeclared) > 3 else "")
        reason = f"undeclared system file: {shown} is under system/ but not declared in the manifest's system.files"
        record.hold_reasons.append(reason[:300])


def declared_pci_path(manifest: Mapping, facts: dict | None) -> list | None:
    """The drive's PCI path: the manifest's system.pci_path (format 2), else the one in facts.json."""
    system = manifest.get("system") if manifest.get("format_version") != 1 else None
    path = system.get("pci_path") if isinstance(system, Mapping) else None
    if isinstance(path, list) and path:
        return path
    path = present(find(facts, "pci_path")) if facts else None
    return path if isinstance(path, list) and path else None


def parsed(bundle, path: str | None, parser, missing: dict, name: str, *, rejects: list[str]) -> dict | None:
    """`parser` applied to the file at `path`. Absent, or of another kind: missing with the reason. Present but not
    strict JSON within the limits (NaN, too deep, too large: nothing nvme-cli prints): a reason to reject."""
    if not path:
        missing[name] = f"the bundle has no {name.replace('_', '-')} output"
        return None
    try:
        data = bundle.read_bytes(path)
        with reading(path, expected=(ValueError,)):
            return parser(data)
    except (ValueError, KeyError) as exc:
        if not_strict_json(exc):
            rejects.append(f"{path}: {exc}"[:300])
        missing[name] = f"{path} could not be read: {exc}"[:300]
        return None


def read_json(bundle, path: str | None, missing: dict, name: str, *, rejects: list[str]) -> dict | None:
    if not path:
        missing[name] = f"the bundle has no {name} file"
        return None
    try:
        value = jsonload.loads(bundle.read_bytes(path), what=path, max_bytes=MAX_FACTS_BYTES)
    except jsonload.JsonError as exc:
        rejects.append(str(exc)[:300])
        missing[name] = str(exc)[:300]
        return None
    except KeyError as exc:
        missing[name] = f"{path} is not in the bundle: {exc}"[:300]
        return None
    return value if isinstance(value, dict) else None


def not_strict_json(error: BaseException) -> bool:
    """Whether a parser refused its input for not being strict JSON within the limits (nvmedb_client.jsonload)."""
    return isinstance(error, jsonload.JsonError) or isinstance(error.__cause__, jsonload.JsonError)


def find(facts: Any, key: str) -> Any:
    """The first value stored under `key` anywhere in the facts document (its layout may nest facts by topic)."""
    stack = deque([facts])
    while stack:
        node = stack.popleft()
        if isinstance(node, Mapping):
            if key in node:
                return node[key]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def present(value: Any) -> Any:
    return None if isinstance(value, Mapping) and set(value) == {"missing"} else value


def host_from_facts(facts: dict | None) -> tuple[HostRecord | None, str]:
    if not facts:
        return None, ""
    host = HostRecord()
    cpu = present(find(facts, "cpu")) or {}
    host.cpu_model = str(present(cpu.get("model")) or "") if isinstance(cpu, Mapping) else ""
    host.cpu_count = optional_int(present(cpu.get("logical_cpus"))) if isinstance(cpu, Mapping) else None
    host.memory_bytes = optional_int(present(find(facts, "memory_bytes")))
    kernel = present(find(facts, "kernel")) or {}
    host.kernel = str(present(kernel.get("release")) or "") if isinstance(kernel, Mapping) else str(kernel)
    distribution = present(find(facts, "distribution")) or {}
    if isinstance(distribution, Mapping):
        host.os_name = str(present(distribution.get("pretty_name")) or "")
    host.architecture = str(present(find(facts, "architecture")) or present(find(facts, "machine")) or "")
    for name in ("cpu_model", "kernel", "os_name"):
        if not getattr(host, name):
            host.missing[name] = "not in the bundle's system facts"
    queue = present(find(facts, "block_queue")) or {}
    scheduler = present(queue.get("scheduler")) if isinstance(queue, Mapping) else None
    return host, str(scheduler or "")


def norm_address(address: str) -> str:
    return address[5:] if re.match(r"^0000:", address) else address


def link_from_lspci(bundle, lspci_path: str | None, pci_path: list | None, record: SubmissionRecord) -> None:
    if not lspci_path:
        record.missing["pcie_link"] = "the bundle has no lspci output"
        return
    try:
        data = bundle.read_bytes(lspci_path)
        with reading(lspci_path, expected=(ValueError,)):
            devices = parse_lspci(data)
    except (ValueError, KeyError) as exc:
        record.missing["pcie_link"] = f"{lspci_path} could not be parsed: {exc}"[:300]
        return
    by_address = {norm_address(d.slot): d for d in devices}
    chain = [by_address.get(norm_address(str(a))) for a in pci_path] if pci_path else []
    if chain and chain[-1] is None:
        chain = []  # the drive itself is not in the lspci output: its path cannot be trusted either
    chain = [d for d in chain if d is not None]
    if chain:
        drive = chain[-1]
    else:
        candidates = [d for d in devices if d.is_nvme]
        if len(candidates) != 1:
            record.missing["pcie_link"] = (
                f"lspci lists {len(candidates)} NVMe controllers and the bundle does not say which one was tested"
            )
            return
        drive = candidates[0]
    ends = [link_end(d) for d in chain[:-1]] if chain else []
    upstream = ends[-1] if ends else None
    record.link = assess_link(link_end(drive), upstream, tuple(reversed(ends[:-1])))
    record.link_source_file = lspci_path


def link_end(device) -> LinkEnd:
    """A LinkEnd from nvmedb_client.system.lspci.PciDevice."""
    note = device.link_speed_note or device.link_width_note or ""
    return LinkEnd(
        address=device.slot,
        capable_speed_gts=device.link_cap_speed_gts,
        capable_width=device.link_cap_width,
        speed_gts=device.link_speed_gts,
        width=device.link_width or None,
        status_note=note,
        max_payload_bytes=device.max_payload_bytes,
        max_read_request_bytes=device.max_read_request_bytes,
        problems=link_problems(
            capable_speed_gts=device.link_cap_speed_gts,
            capable_width=device.link_cap_width,
            speed_gts=device.link_speed_gts,
            width=device.link_width,
            unreadable=device.link_unreadable,
        ),
    )
