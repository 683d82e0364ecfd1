"""Raw files are served by allow-list: a bundle written by another tool, with extra files and extra fields where the
format allows them, leaks none of what it plants there (in any letter case), and what describes the drive and the
workload stays.

The planted values are the ones an attack showed leaking through the scrubber alone: run.json's environment
(LOGNAME, SUDO_USER, PWD), facts.json's DMI serials, asset tag, machine id and a note naming the host, hostnamectl and
uname output, lshw's disk signature, id-ctrl's vendor-specific bytes, smartctl's WWN, and a lower-case copy of the host
name in a job file's directory=.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.utils import timezone

from analysis import privacy, raw_allow
from analysis.ingest import ingest_submission
from analysis.tests import bundles
from analysis.tests.bundles import response_text
from datasets.releases import build_release
from datasets.tables import TABLES

HOST = "LabHost-07"
USER = "tessaquill"
MACHINE_ID = "9f3b2c1d8e7a46b5a1c2d3e4f5a6b7c8"
BOOT_ID = "0c1d2e3f4a5b46c7d8e9f0a1b2c3d4e5"
PRODUCT_SERIAL = "CZJ7041ABC"
BOARD_SERIAL = "PFJXR0BRHA1234"
ASSET_TAG = "ACME-ASSET-58213"
HOSTNAME_NOTE = "rack box under the stairs"
LSHW_SIGNATURE = "8a3f9c21"
LSHW_GUID = "6b1e5a52-8c3d-4e0f-9a1b-2c3d4e5f6a7b"
ID_CTRL_VS = "VSUNIT7731XQ"
SMARTCTL_WWN = "5 002538 e40a1b2c3"
SMARTCTL_SERIAL = "S9XNU0R812345"
PLANTED = (HOST, USER, MACHINE_ID, BOOT_ID, PRODUCT_SERIAL, BOARD_SERIAL, ASSET_TAG, HOSTNAME_NOTE, LSHW_SIGNATURE,
           LSHW_GUID, ID_CTRL_VS, SMARTCTL_WWN, SMARTCTL_SERIAL, f"/srv/{USER}")  # fmt: skip
UNKNOWN_FILES = ("system/hostnamectl.txt", "system/uname.txt", "system/smartctl.txt")


def _lshw() -> dict:
    disk = {
        "id": "namespace:0",
        "class": "disk",
        "description": "NVMe disk",
        "physid": "1",
        "logicalname": "/dev/nvme0n1",
        "size": 1920383410176,
        "units": "bytes",
        "configuration": {
            "logicalsectorsize": "512",
            "sectorsize": "512",
            "signature": LSHW_SIGNATURE,
            "guid": LSHW_GUID,
            "wwid": f"eui.{ID_CTRL_VS}",
        },  # fmt: skip
        "capabilities": {"gpt-1.00": "GUID Partition Table version 1.00", "partitioned": "Partitioned disk"},
    }
    controller = {"id": "nvme", "class": "storage", "product": "NVMe SSD Controller SM981/PM981/PM983",
                  "vendor": "Samsung Electronics Co Ltd", "businfo": "pci@0000:3b:00.0", "serial": SMARTCTL_SERIAL,
                  "configuration": {"driver": "nvme", "latency": "0"}, "children": [disk]}  # fmt: skip
    return {
        "id": HOST.lower(),
        "class": "system",
        "product": "ProLiant DL360p Gen8 (654081-B21)",
        "vendor": "HP",
        "serial": PRODUCT_SERIAL,
        "configuration": {"boot": "normal", "chassis": "rackmount", "uuid": LSHW_GUID, "asset_tag": ASSET_TAG},
        "hostname_note": HOSTNAME_NOTE,
        "children": [{"id": "core", "class": "bus", "serial": BOARD_SERIAL, "children": [controller]}],
    }


def plant(samples: Path):
    def mutate(run_dir: Path, manifest: dict, files: list[str]) -> None:
        manifest["client"] = {"name": "another-benchmark-tool", "version": "0.9"}
        system = run_dir / "system"
        facts = json.loads((system / "facts.json").read_text())
        facts["dmi"] = {"product_serial": PRODUCT_SERIAL, "board_serial": BOARD_SERIAL, "chassis_asset_tag": ASSET_TAG}
        facts["machine_id"], facts["hostname_note"] = MACHINE_ID, f"{HOSTNAME_NOTE} ({HOST})"
        facts["host"]["kernel"]["node"] = HOST
        (system / "facts.json").write_text(json.dumps(facts))
        id_ctrl = json.loads((system / "nvme-id-ctrl.json").read_text())
        id_ctrl["vs"] = {"rawData": ID_CTRL_VS}
        id_ctrl["host_note"] = USER
        (system / "nvme-id-ctrl.json").write_text(json.dumps(id_ctrl))
        shutil.copyfile(samples / bundles.SMART, system / "nvme-smart-log.json")
        (system / "lshw.json").write_text(json.dumps(_lshw()))
        (system / "hostnamectl.txt").write_text(
            f" Static hostname: {HOST}\n       Icon name: computer-server\n      Machine ID: {MACHINE_ID}\n"
            f"         Boot ID: {BOOT_ID}\nOperating System: Debian GNU/Linux 11 (bullseye)\n"
        )
        (system / "uname.txt").write_text(f"Linux {HOST} 5.10.0-23-amd64 #1 SMP Debian 5.10.179-1 x86_64 GNU/Linux\n")
        (system / "smartctl.txt").write_text(
            "=== START OF INFORMATION SECTION ===\nModel Number:   SAMSUNG MZQLB1T9HAJR-00007\n"
            f"Serial Number:  {SMARTCTL_SERIAL}\nLU WWN Device Id: {SMARTCTL_WWN}\n"
        )
        files += ["system/nvme-smart-log.json", "system/lshw.json", *UNKNOWN_FILES]
        run_facts = {
            "purges": [],
            "write_cache": "disabled",
            "sessions": [{"started_at": manifest["timing"]["started_at"], "resumed": False,
                          "ended_at": manifest["timing"]["finished_at"], "outcome": f"finished on {HOST.lower()}"}],
            "env": {"LOGNAME": USER, "SUDO_USER": USER, "PWD": f"/srv/{USER}", "HOSTNAME": HOST},
            "operator": {"name": USER, "box": HOST.upper()},
        }  # fmt: skip
        (run_dir / "run.json").write_text(json.dumps(run_facts))
        files.append("run.json")
        for run in manifest["runs"]:
            job = run_dir / run["job_file"]
            job.write_text(
                f"# written by {USER} on {HOST}\n[global]\ndirectory=/srv/{HOST.lower()}/nvme\n"
                f"description=run by {USER}\nexec_prerun=/srv/{USER}/prep.sh\n" + job.read_text()
            )
            output = run_dir / run["output_file"]
            doc = json.loads(output.read_text())
            doc.setdefault("global options", {})["directory"] = f"/srv/{HOST.lower()}/nvme"
            doc["host_note"] = f"{USER}@{HOST}"
            output.write_text(json.dumps(doc))
        manifest["target"]["kind"] = manifest["plan"]["target_kind"] = "device"
        manifest["profile"] = manifest["plan"]["profile"] = "pts"
        bundles.as_format_2(run_dir, manifest, files)  # hostnamectl, uname and smartctl are declared "other"

    return mutate


def _leaks(body: str) -> list[str]:
    lowered = body.lower()
    return sorted(value for value in PLANTED if value.lower() in lowered)


@pytest.mark.django_db
def test_a_bundle_from_another_tool_leaks_nothing_it_plants_and_keeps_what_describes_the_run(
    client, submission, shared_samples, storage, releases_dir, tmp_path, django_capture_on_commit_callbacks
):
    bundle = bundles.verified_bundle(tmp_path / "work", shared_samples, mutate=plant(shared_samples))
    raw_text = "\n".join(bundle.read_bytes(e["path"]).decode("utf-8", "replace") for e in bundle.manifest["files"])
    assert len(_leaks(raw_text)) == len(PLANTED), "the bundle lost a planted value"
    assert f"directory=/srv/{HOST.lower()}/nvme" in raw_text  # the lower-case copy
    shutil.copyfile(tmp_path / "work" / "b.nvmedb.tar.gz", storage / "bundles" / "other.nvmedb.tar.gz")
    submission.storage_name = "bundles/other.nvmedb.tar.gz"
    with django_capture_on_commit_callbacks(execute=True):
        outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status in ("published", "held"), outcome.reasons
    submission.status, submission.published_at = "published", timezone.now()
    submission.save()

    kinds = raw_allow.file_kinds(bundle.manifest)
    assert not set(UNKNOWN_FILES) & set(kinds)
    page = response_text(client.get(f"/submissions/{submission.pk}/"))
    assert not _leaks(page)
    for path in UNKNOWN_FILES:
        assert f"{path} <small>" in page and f"/files/{path}" not in page
    assert page.count(raw_allow.NOT_SERVED) == len(UNKNOWN_FILES)
    served: dict[str, str] = {}
    for entry in bundle.manifest["files"]:
        url = f"/submissions/{submission.pk}/files/{entry['path']}"
        for suffix in ("", "?download=1"):
            response = client.get(url + suffix)
            body = response_text(response)
            assert not _leaks(body), (entry["path"], suffix, _leaks(body))
            if entry["path"] in kinds:
                assert response.status_code == 200, entry["path"]
                served[entry["path"]] = body
            else:
                assert response.status_code == 404 and raw_allow.NOT_SERVED in body
    for url in [f"/datasets/{table}.{fmt}" for table in TABLES for fmt in ("csv", "json", "ndjson")]:
        assert not _leaks(response_text(client.get(url))), url
    assert build_release().number == 1
    for path in sorted((releases_dir / "1").iterdir()):
        body = (
            json.dumps(pq.read_table(path).to_pylist(), default=str) if path.suffix == ".parquet" else path.read_text()
        )
        assert not _leaks(body), path.name

    # what describes the drive and the workload stays
    run = bundle.manifest["runs"][0]
    fio, original = json.loads(served[run["output_file"]]), json.loads(bundle.read_bytes(run["output_file"]))
    assert (
        fio["jobs"][0]["read"] == original["jobs"][0]["read"]
        and fio["jobs"][0]["write"] == original["jobs"][0]["write"]
    )
    assert fio["global options"]["directory"] == "[scrubbed]" and "host_note" not in fio
    job = served[run["job_file"]].splitlines()
    assert "directory=[scrubbed]" in job and f"bs={run['block_size_bytes']}" in job and f"rw={run['pattern']}" in job
    assert any(line.startswith("iodepth=") for line in job) and not any("exec_prerun" in line for line in job)
    id_ctrl = json.loads(served["system/nvme-id-ctrl.json"])
    assert id_ctrl["mn"].strip() and id_ctrl["tnvmcap"] is not None and id_ctrl["sn"] == "[scrubbed]"
    assert "vs" not in id_ctrl and "host_note" not in id_ctrl
    facts = json.loads(served["system/facts.json"])
    assert facts["host"]["cpu"]["model"].startswith("Intel(R) Xeon(R)") and facts["block_device"]["pci_path"]
    assert not {"dmi", "machine_id", "hostname_note"} & set(facts) and "node" not in facts["host"]["kernel"]
    smart = json.loads(served["system/nvme-smart-log.json"])
    assert smart["data_units_written"] == json.loads((shared_samples / bundles.SMART).read_text())["data_units_written"]
    assert any(line.strip().startswith("LnkSta:") for line in served["system/lspci.txt"].splitlines())
    lshw = json.loads(served["system/lshw.json"])
    disk = lshw["children"][0]["children"][0]["children"][0]
    assert lshw["id"] == "[scrubbed]" and lshw["product"].startswith("ProLiant DL360p")
    assert disk["logicalname"] == "/dev/nvme0n1" and disk["configuration"] == {
        "logicalsectorsize": "512",
        "sectorsize": "512",
    }
    run_json = json.loads(served["run.json"])
    assert set(run_json) == {"purges", "write_cache", "sessions"}
    assert run_json["sessions"][0]["outcome"] == "finished on [scrubbed]"  # the host's name in another case


def test_identifiers_are_matched_in_any_letter_case():
    scrubber = privacy.Scrubber({"LabHost-07", "S43ANA0M405593"})
    assert (
        scrubber.text("/srv/labhost-07/nvme LABHOST-07 s43ana0m405593") == "/srv/[scrubbed]/nvme [scrubbed] [scrubbed]"
    )
    assert scrubber.text("labhost-070 xlabhost-07") == "labhost-070 xlabhost-07"  # only standing alone


@pytest.mark.parametrize(
    "line, served",
    [
        ("directory=/srv/labhost/nvme", "directory=[scrubbed]"),
        ("filename=/dev/nvme0n1", "filename=/dev/nvme0n1"),
        ("filename=/dev/disk/by-id/nvme-Samsung_S43ANA0M405593", "filename=/dev/disk/by-id/[scrubbed]"),
        ("filename=/srv/tessa/target.bin", "filename=[scrubbed]"),
        ("filename=target.bin", "filename=target.bin"),
        ("bs=4k", "bs=4k"),
        ("rw = randrw", "rw=randrw"),
        ("norandommap", "norandommap"),
        ("[iops-r01]", "[iops-r01]"),
        ("write_iops_log=/home/tessa/logs/iops", "write_iops_log=iops"),
        ("# a comment naming tessa", None),
        ("description=tessa's run", None),
        ("exec_prerun=/srv/tessa/prep.sh", None),
        ("include /srv/tessa/common.fio", None),
        ("bs=4k tessa", None),
    ],
)
def test_job_file_lines_are_kept_by_option_name(line, served):
    assert raw_allow.Lines(raw_allow.FIO_JOB, privacy.Scrubber(set())).line(line) == served


def test_file_kinds_come_from_the_manifest_only():
    manifest = {
        "format_version": 2,
        "files": [
            {"path": p}
            for p in (
                "fio/a.json",
                "jobs/a.fio",
                "smart/a.before.json",
                "logs/a_iops.1.log",
                "run.json",
                "system/id.json",
                "system/host.txt",
                "system/undeclared.json",
                "superseded/iops-1/fio/a.json",
                "notes.txt",
            )
        ],  # fmt: skip
        "runs": [
            {
                "output_file": "fio/a.json",
                "job_file": "jobs/a.fio",
                "smart_before": "smart/a.before.json",
                "smart_after": None,
                "log_files": ["logs/a_iops.1.log"],
            }
        ],  # fmt: skip
        "system": {
            "files": [{"path": "system/id.json", "kind": "nvme-id-ctrl"}, {"path": "system/host.txt", "kind": "other"}]
        },  # fmt: skip
    }
    assert raw_allow.file_kinds(manifest) == {
        "fio/a.json": "fio-output",
        "jobs/a.fio": "fio-job",
        "smart/a.before.json": "nvme-smart-log",
        "logs/a_iops.1.log": "fio-log",
        "run.json": "run",
        "system/id.json": "nvme-id-ctrl",
        "superseded/iops-1/fio/a.json": "fio-output",
    }


def _text(kind: str, text: str, identifiers=()) -> str:
    return "".join(raw_allow.reemit_text(kind, [text], privacy.Scrubber(set(identifiers))))


def test_text_kinds_keep_only_their_known_lines():
    vwc = (
        "get-feature:0x6 (Volatile Write Cache), Current value:00000001\n\tVolatile Write Cache Enable (WCE): Enabled\n"
    )
    assert _text("nvme-get-feature-vwc", vwc + "host: labhost\n") == vwc
    log = "1000, 51234, 1, 4096, 0, 0\n2000, 50999, 1, 4096\n"
    assert _text(raw_allow.FIO_LOG, log + "labhost was here\n2000, x, 1, 4096\n") == log
    lspci = (
        "3b:00.0 Non-Volatile memory controller: Samsung NVMe SSD Controller PM983\n"
        "\tCapabilities: [70] Express (v2) Endpoint, MSI 00\n"
        "\t\tLnkSta: Speed 8GT/s, Width x4, TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
        "\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-\n"
        "\tCapabilities: [d0] Vital Product Data\n"
        "\t\tProduct Name: Rack 7 of labhost\n"
        "\t\tRead-only fields:\n"
        "\t\t\t[SN] Serial number: VPD12345\n"
        "\t\t\t[V0] Vendor specific: LABHOST\n"
        "\tCapabilities: [148 v1] Device Serial Number 00-11-22-33-44-55-66-77\n"
        "\tKernel driver in use: nvme\n"
        "\tOwner note: labhost\n"
    )
    served = _text("lspci-vvv", lspci, {"labhost"}).splitlines()
    assert served == [
        "3b:00.0 Non-Volatile memory controller: Samsung NVMe SSD Controller PM983",
        "\tCapabilities: [70] Express (v2) Endpoint, MSI 00",
        "\t\tLnkSta: Speed 8GT/s, Width x4, TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
        "\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-",
        "\tCapabilities: [d0] Vital Product Data",
        "\tCapabilities: [148 v1] Device Serial Number [scrubbed]",
        "\tKernel driver in use: nvme",
    ]


def test_json_kinds_keep_only_their_known_keys():
    scrubber = privacy.Scrubber({"labhost"})
    commands = [{"args": ["nvme", "id-ctrl", "/dev/nvme0n1"], "returncode": 0, "stderr": "on labhost",
                 "duration_s": 0.1, "env": {"USER": "tessa"}}]  # fmt: skip
    assert json.loads(raw_allow.reemit_json("commands", json.dumps(commands).encode(), scrubber)) == [
        {"args": ["nvme", "id-ctrl", "/dev/nvme0n1"], "returncode": 0, "duration_s": 0.1}
    ]
    facts = {"host": {"cpu": {"missing": "no /proc/cpuinfo on LABHOST"}, "hostname": "labhost"},
             "tools": {"fio": "fio-3.33", "nvme-cli": {"missing": "nvme not found"}, "mine": {"path": "/srv/x"}},
             "block_device": {"block_queue": {"scheduler": "none", "nr_requests": 1023}, "pci_path": ["0000:3b:00.0"]},
             "device": "/dev/disk/by-id/nvme-Samsung_S43ANA0M405593", "machine_id": "9f3b2c1d"}  # fmt: skip
    assert json.loads(raw_allow.reemit_json("facts", json.dumps(facts).encode(), scrubber)) == {
        "host": {"cpu": {"missing": "no /proc/cpuinfo on [scrubbed]"}},
        "tools": {"fio": "fio-3.33", "nvme-cli": {"missing": "nvme not found"}},
        "block_device": {"block_queue": {"scheduler": "none", "nr_requests": 1023}, "pci_path": ["0000:3b:00.0"]},
        "device": "/dev/disk/by-id/[scrubbed]",
    }
    assert raw_allow.reemit_json("facts", b"not json", scrubber) == (
        "[not shown: this file could not be read as facts.json: the parsed host and drive facts]\n"
    )


def test_a_json_file_of_an_odd_shape_is_served_by_what_fits_its_kind_never_a_server_error():
    scrubber = privacy.Scrubber({"labhost"})
    odd = [{"id": {"x": 1}, "class": "disk", "children": "none", "product": ["labhost"]}, 7, "labhost"]
    assert json.loads(raw_allow.reemit_json("lshw", json.dumps(odd).encode(), scrubber)) == [{"class": "disk"}]
    assert raw_allow.reemit_json("run", b'[1, 2, "labhost"]', scrubber) == (
        "[not shown: this file could not be read as run.json: what happened during the run]\n"
    )
    deep = b'{"jobs": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert raw_allow.reemit_json("fio-output", deep, scrubber).startswith("[not shown:")


def test_every_system_file_kind_the_format_names_but_other_is_served_by_an_allow_list():
    from nvmedb_client.system_files import KINDS

    assert set(KINDS) - {"other"} <= set(raw_allow.KINDS)
    assert set(raw_allow.KINDS) == set(raw_allow.JSON_SPECS) | raw_allow.TEXT_KINDS
