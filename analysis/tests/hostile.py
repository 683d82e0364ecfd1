"""A corpus of hostile bundles, one per crash class of issue 14, each signed with a given key.

Every bundle starts as a consistent bundle of real SSSPT fio outputs and the shared nvme-cli / lspci samples
(analysis/tests/bundles.py) and breaks exactly one thing. `HOSTILE` maps each kind to what must become of it:
("bundle", code) when verify_bundle refuses it with that BundleError code, ("rejected", text) when the pipeline
rejects it with a reason containing `text`.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from analysis.tests.bundles import add_system_files, consistent_run_dir
from nvmedb_client.bundle import MANIFEST_NAME, SIGNATURE_NAME, write_bundle
from nvmedb_client.signing import public_key_bytes, sign

DEEP = "[" * 5000 + "]" * 5000
HUGE = "1" + "0" * 400  # 10^400
SENTINEL = 987654321987


def _edit_json(path: Path, change: Callable[[dict], None]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _first_fio(run_dir: Path, manifest: dict) -> Path:
    return run_dir / manifest["runs"][0]["output_file"]


def _deep_facts(run_dir, manifest, files):
    (run_dir / "system" / "facts.json").write_text('{"host": ' + DEEP + "}")


def _deep_run_json(run_dir, manifest, files):
    (run_dir / "run.json").write_text('{"purges": ' + DEEP + "}")
    files.append("run.json")


def _deep_id_ctrl(run_dir, manifest, files):
    (run_dir / "system" / "nvme-id-ctrl.json").write_text('{"mn": "x", "psds": ' + DEEP + "}")


def _long_run_id(manifest: dict) -> tuple[dict, Callable[[bytes], bytes]]:
    """Run ids of 201 characters, one more than the manifest schema allows (written at 200, then lengthened)."""
    ids = []
    for run in manifest["runs"]:
        run["id"] = (run["id"] + "-" + "x" * 200)[:200]
        ids.append(run["id"])
    manifest["steady_state"] = []

    def lengthen(data: bytes) -> bytes:
        for run_id in ids:
            data = data.replace(f'"{run_id}"'.encode(), f'"{run_id}y"'.encode())
        return data

    return manifest, lengthen


def _long_model(run_dir, manifest, files):
    _edit_json(run_dir / "system" / "nvme-id-ctrl.json", lambda doc: doc.update(mn="M" * 150))


def _iops_beyond_bigint(run_dir, manifest, files):
    def change(doc):
        for job in doc["jobs"]:
            for direction in ("read", "write"):
                job[direction].update(iops=1e20, io_bytes=2**63 + 5)

    _edit_json(_first_fio(run_dir, manifest), change)


def _job_options_list(run_dir, manifest, files):
    _edit_json(_first_fio(run_dir, manifest), lambda doc: doc["jobs"][0].update({"job options": ["bs", "4k"]}))


def _huge_fio_timestamp(run_dir, manifest, files):
    path = _first_fio(run_dir, manifest)
    doc = json.loads(path.read_text())
    doc["timestamp"] = SENTINEL
    path.write_text(json.dumps(doc).replace(str(SENTINEL), HUGE))


def _huge_temperature(run_dir, manifest, files):
    (run_dir / "system" / "smart.json").write_text(f'{{"temperature": {HUGE}, "data_units_written": 1}}')
    for run in manifest["runs"]:
        run["smart_before"] = run["smart_after"] = "system/smart.json"
    files.append("system/smart.json")


def _id_ns_ds(run_dir, manifest, files):
    id_ns = {"nsze": 1000, "ncap": 1000, "nuse": 10, "flbas": 0, "lbafs": [{"ds": 1e9, "ms": 0, "rp": 0}]}
    (run_dir / "system" / "nvme-id-ns.json").write_text(json.dumps(id_ns))
    files.append("system/nvme-id-ns.json")


def _nan_in_claimed_window(manifest: dict) -> tuple[dict, Callable[[bytes], bytes]]:
    claim = next(c for c in manifest["steady_state"] if c.get("window"))
    claim["window"]["average"] = SENTINEL
    return manifest, lambda data: data.replace(str(SENTINEL).encode(), b"NaN", 1)


def _huge_size(manifest: dict) -> tuple[dict, Callable[[bytes], bytes]]:
    manifest["target"]["size_bytes"] = SENTINEL
    return manifest, lambda data: data.replace(str(SENTINEL).encode(), HUGE.encode(), 1)


# kind -> (what to change in the run directory, or in the manifest's signed bytes) and the expected outcome
HOSTILE: dict[str, tuple[Callable, tuple[str, str]]] = {
    "deep_facts": (_deep_facts, ("rejected", "system/facts.json is nested deeper than 64 levels")),
    "deep_run_json": (_deep_run_json, ("rejected", "run.json is nested deeper than 64 levels")),
    "deep_id_ctrl": (_deep_id_ctrl, ("rejected", "nvme-id-ctrl.json: nvme-cli output is nested deeper")),
    "long_run_id": (_long_run_id, ("bundle", "bad_manifest")),
    "long_model": (_long_model, ("rejected", "is 150 characters long, more than the 100 of DriveModel.model_number")),
    "iops_beyond_bigint": (_iops_beyond_bigint, ("rejected", "beyond the limit of ±2**63")),
    "job_options_list": (_job_options_list, ("rejected", "['job options'] is a list, not an object of options")),
    "huge_fio_timestamp": (_huge_fio_timestamp, ("rejected", "too large for a double")),
    "huge_temperature": (_huge_temperature, ("rejected", "system/smart.json: nvme-cli output is not strict JSON")),
    "id_ns_ds": (_id_ns_ds, ("rejected", "LBA format 0 has ds=1000000000.0, outside 9..16")),
    "nan_in_claimed_window": (_nan_in_claimed_window, ("bundle", "bad_manifest")),
    "huge_size": (_huge_size, ("bundle", "bad_manifest")),
    "non_utf8_member_name": (None, ("bundle", "unsafe_path")),
}
MANIFEST_BYTE_EDITS = {"nan_in_claimed_window", "huge_size", "long_run_id"}


def hostile_bundle(kind: str, work: Path, samples: Path, key: Ed25519PrivateKey) -> Path:
    """Write the hostile bundle `kind`, signed with `key`, under `work`; return its path."""
    work.mkdir(parents=True, exist_ok=True)
    run_dir, manifest, files = consistent_run_dir(work, samples)
    add_system_files(run_dir, files, samples)
    change, _ = HOSTILE[kind]
    out = work / f"{kind}.nvmedb.tar.gz"
    if kind in MANIFEST_BYTE_EDITS:
        manifest, edit = change(manifest)
        path = write_bundle(run_dir=run_dir, manifest=manifest, files=files, signing_key=key, out_path=out)
        return _resign(path, key, edit)
    if change is not None:
        change(run_dir, manifest, files)
    path = write_bundle(run_dir=run_dir, manifest=manifest, files=files, signing_key=key, out_path=out)
    if kind == "non_utf8_member_name":
        return _with_member(path, b"files/system/\xff\xfe.json", b"{}")
    return path


def _members(path: Path) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    with tarfile.open(path, "r:gz") as archive:
        return [(info, archive.extractfile(info).read() if info.isreg() else None) for info in archive.getmembers()]


def _write(path: Path, members, *, fmt=tarfile.PAX_FORMAT) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt, encoding="utf-8", errors="surrogateescape") as archive:
        for info, data in members:
            info.size = len(data) if data is not None else 0
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    path.write_bytes(gzip.compress(buffer.getvalue(), mtime=0))
    return path


def _resign(path: Path, key: Ed25519PrivateKey, edit: Callable[[bytes], bytes]) -> Path:
    members = _members(path)
    manifest_bytes = edit(next(data for info, data in members if info.name == MANIFEST_NAME))
    signature = json.dumps(
        {
            "algorithm": "ed25519",
            "public_key": base64.b64encode(public_key_bytes(key)).decode(),
            "signature": base64.b64encode(sign(key, manifest_bytes)).decode(),
        }
    ).encode()
    replaced = {MANIFEST_NAME: manifest_bytes, SIGNATURE_NAME: signature}
    return _write(path, [(info, replaced.get(info.name, data)) for info, data in members])


def _with_member(path: Path, raw_name: bytes, data: bytes) -> Path:
    """The bundle with one more file whose name is not UTF-8 (GNU tar keeps name bytes as they are)."""
    info = tarfile.TarInfo(raw_name.decode("utf-8", errors="surrogateescape"))
    return _write(path, [*_members(path), (info, data)], fmt=tarfile.GNU_FORMAT)
