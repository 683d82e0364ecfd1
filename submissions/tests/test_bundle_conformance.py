"""Conformance: a bundle written from docs/bundle-format.md alone — its own tar and Ed25519 code, another tool's file
names, not the client's writer — is verified and published by the server with the right drive, link and
over-provisioning. The inputs are real: SSSPT's fio outputs, an nvme-cli id-ctrl and an lspci -vvv of a host with
three NVMe controllers (so only the declared PCI path says which one was tested)."""

import base64
import gzip
import hashlib
import io
import json
import re
import tarfile
from datetime import datetime, timezone

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from analysis.models import TestRun
from submissions import services

ID_CTRL = (
    "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)
SMART = "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json"
DATA_UNIT_BYTES = 512_000  # the NVMe smart-log's data units: thousands of 512-byte sectors
LSPCI = "lspci/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__lspci_vvv_3"
DRIVE = "0000:3b:00.0"  # one of the sample's three NVMe controllers (3b, 3c, 3d:00.0)
NAMESPACE_BYTES = 800_166_076_416  # what the "device" exposes: 1 562 824 368 sectors of 512 bytes
SSSPT_NAME = re.compile(r"wdpc_bs(?P<kib>\d+)KB_read(?P<read>\d+)_round(?P<round>\d+)\.json$")


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(text: str) -> int:
    number, unit = re.fullmatch(r"(\d+)\s*(s|m)?", text.strip()).groups()
    return int(number) * (60 if unit == "m" else 1)


def _runs(shared_samples) -> tuple[dict[str, bytes], list[dict]]:
    """SSSPT's IOPS rounds 1-5 of the three tracking variables, as the docs' runs[] describe them, each between two
    smart-logs (a real one whose counters then move by what fio read and wrote)."""
    outputs, runs = {}, []
    smart = json.loads((shared_samples / SMART).read_text())
    hours = smart["power_on_hours"]
    moved: dict[str, dict[str, int]] = {}
    for path in sorted((shared_samples / "ssspt-hp-iops-1").glob("wdpc_bs*KB_read*_round[1-5].json")):
        name = SSSPT_NAME.search(path.name)
        if (name["kib"], name["read"]) not in {("4", "0"), ("64", "65"), ("1024", "100")}:
            continue
        data = path.read_bytes()
        doc = json.loads(data)
        options = {**doc.get("global options", {}), **doc["jobs"][0]["job options"]}
        block_size, read_pct, round_number = int(name["kib"]) * 1024, int(name["read"]), int(name["round"])
        run_id = f"iops-r{round_number:02d}-rw{read_pct:03d}-bs{block_size}"
        output = f"fio-results/{run_id}.json"
        outputs[output] = data
        end = doc["timestamp"]
        runs.append(
            {
                "id": run_id,
                "test": "iops",
                "phase": "wdpc",
                "round": round_number,
                "pattern": options["rw"],
                "block_size_bytes": block_size,
                "read_pct": read_pct,
                "threads": int(options["numjobs"]),
                "iodepth": int(options["iodepth"]),
                "runtime_s": _seconds(options["runtime"]),
                "output_file": output,
                "started_at": _iso(end - doc["jobs"][0]["elapsed"]),
                "finished_at": _iso(end + 1),
            }
        )
        moved[run_id] = {
            direction: sum(job[direction]["io_bytes"] for job in doc["jobs"]) for direction in ("read", "write")
        }
    runs.sort(key=lambda run: run["finished_at"])
    first_start = datetime.fromisoformat(runs[0]["started_at"].replace("Z", "+00:00"))
    for run in runs:  # the drive's counters move with fio's bytes, its power-on hours with the clock
        for side in ("before", "after"):
            if side == "after":
                for direction, counter in (("read", "data_units_read"), ("write", "data_units_written")):
                    smart[counter] += -(-moved[run["id"]][direction] // DATA_UNIT_BYTES)
            moment = datetime.fromisoformat(
                run["started_at" if side == "before" else "finished_at"].replace("Z", "+00:00")
            )
            smart["power_on_hours"] = hours + int((moment - first_start).total_seconds() // 3600)
            run[f"smart_{side}"] = f"drive-health/{run['id']}-{side}.json"
            outputs[run[f"smart_{side}"]] = json.dumps(smart).encode()
    return outputs, runs


def _plan(runs: list[dict]) -> dict:
    first = runs[0]
    cells = []
    for run in runs:
        cell = {"pattern": run["pattern"], "block_size_bytes": run["block_size_bytes"], "read_pct": run["read_pct"]}
        if cell not in cells:
            cells.append(cell)
    series = {
        "phase": "wdpc",
        "threads": first["threads"],
        "iodepth": first["iodepth"],
        "runtime_s": first["runtime_s"],
        "max_rounds": 25,
        "cells": cells,
    }
    return {"blocks": [{"test": "iops", "label": "iops", "wipc": None, "series": [series]}]}


def _write_bundle(path, files: dict[str, bytes], manifest: dict, key: Ed25519PrivateKey) -> None:
    """The container as the docs describe it: gzip'd pax tar, manifest.json, manifest.sig.json, files/..."""
    manifest = {
        **manifest,
        "files": [
            {"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in sorted(files.items())
        ],
    }
    manifest_bytes = json.dumps(manifest).encode()
    public_key = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    signature = {
        "algorithm": "ed25519",
        "public_key": base64.b64encode(public_key).decode(),
        "signature": base64.b64encode(key.sign(manifest_bytes)).decode(),
    }
    members = {"manifest.json": manifest_bytes, "manifest.sig.json": json.dumps(signature).encode()}
    members.update({f"files/{name}": data for name, data in files.items()})
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(buffer.getvalue()))


def _manifest(runs: list[dict], system_files: list[dict]) -> dict:
    fio_version = "fio-3.8"
    return {
        "format_version": 2,
        "client": {"name": "conformance-writer", "version": "0"},
        "created_at": runs[-1]["finished_at"],
        "profile": "pts",
        "edition": "client",
        "compliance": {"compliant": False, "reasons": ["written by a conformance test: IOPS rounds 1-5 only"]},
        "target": {
            "kind": "device",
            "path": "/dev/nvme0n1",
            "size_bytes": NAMESPACE_BYTES,
            "active_range_bytes": NAMESPACE_BYTES,
        },
        "plan": _plan(runs),
        "timing": {"started_at": runs[0]["started_at"], "finished_at": runs[-1]["finished_at"]},
        "tools": {"fio": fio_version, "nvme-cli": None},
        "runs": runs,
        "steady_state": [],
        "system": {"files": system_files, "pci_path": [DRIVE]},
    }


@pytest.fixture
def conformance_bundle(tmp_path, shared_samples, owner):
    """`build(extra_system_files={})` writes the bundle; extra files go under system/ without being declared."""
    key = Ed25519PrivateKey.generate()
    public_key = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    services.signing_key_register(user=owner, public_key=public_key, name="another tool")

    def build(extra_system_files: dict[str, bytes] | None = None):
        outputs, runs = _runs(shared_samples)
        files = {
            **outputs,
            "system/identify-controller.json": (shared_samples / ID_CTRL).read_bytes(),
            "system/pci-devices.txt": (shared_samples / LSPCI).read_bytes(),
        }
        declared = [
            {"path": "system/identify-controller.json", "kind": "nvme-id-ctrl"},
            {"path": "system/pci-devices.txt", "kind": "lspci-vvv"},
        ]
        files.update(extra_system_files or {})
        path = tmp_path / "from-the-docs.nvmedb.tar.gz"
        _write_bundle(path, files, _manifest(runs, declared), key)
        return path

    return build


def test_a_bundle_written_from_the_docs_alone_is_published_with_its_drive_link_and_op(
    owner_api, conformance_bundle, upload, shared_samples
):
    result = upload(owner_api, conformance_bundle())
    assert result["status"] == "published", result["report"]

    run = TestRun.objects.get(submission_id=result["id"])
    id_ctrl = json.loads((shared_samples / ID_CTRL).read_text())
    assert run.drive_model.model_number == id_ctrl["mn"].strip()
    assert run.drive_model.vendor.pci_vendor_id == id_ctrl["vid"]
    assert run.firmware.revision == id_ctrl["fr"].strip()
    assert run.drive_model.capacity_bytes == id_ctrl["tnvmcap"]

    link = run.pcie_link
    assert link is not None and link.pci_address.endswith("3b:00.0")  # the declared one of three controllers
    assert (link.generation, link.width, link.speed_gts) == (3, 4, 8.0)
    assert link.source_file == "system/pci-devices.txt"

    assert run.overprovisioning == pytest.approx(1 - NAMESPACE_BYTES / id_ctrl["tnvmcap"])
    assert run.measurements.filter(round__phase="wdpc").count() == 15


def test_an_undeclared_system_file_holds_the_bundle_with_the_reason(owner_api, conformance_bundle, upload):
    result = upload(owner_api, conformance_bundle({"system/notes.txt": b"tested on the bench in room 2\n"}))
    assert result["status"] == "held", result["report"]
    assert any(
        reason.startswith("undeclared system file: system/notes.txt") for reason in result["report"]["reasons"]
    ), result["report"]


def test_a_format_1_bundle_still_publishes(owner, owner_api, publishable_bundle, upload):
    from nvmedb_client.bundle import verify_bundle
    from submissions.tests.conftest import register_key

    path = publishable_bundle(register_key(owner))
    assert verify_bundle(path, extract_to=path.parent / "check").manifest["format_version"] == 1
    result = upload(owner_api, path)
    assert result["status"] == "published", result["report"]
    run = TestRun.objects.get(submission_id=result["id"])
    assert run.drive_model.name != "Unknown drive" and run.pcie_link is not None
