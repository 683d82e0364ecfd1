"""No identifier of a person, a machine or a drive unit survives on any public surface.

The corpus is a bundle built from the real shared samples (fio, nvme-cli, lspci, two lshw outputs wrapped in an
array, one of them from a laptop with its Wi-Fi address) with every leak class planted where a client or a user could
put it: a by-id device path carrying the drive's serial in job files, fio's `job options`, commands.json and the
manifest; a user name in /home/<user>/ paths; host names, IPv4/IPv6 and MAC addresses, UUIDs; each identifier seen
by key in one file and in free text in another. The identifiers are collected from those inputs here, independently
of analysis.privacy, and every public response is searched for each of them.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.utils import timezone

from analysis import privacy, raw_allow, raw_identifiers
from analysis.ingest import ingest_submission
from analysis.privacy import Scrubber, identifiers_in_file, pretty_json
from analysis.tests import bundles
from analysis.tests.bundles import response_text
from browse import raw_files
from datasets.releases import build_release
from datasets.tables import TABLES

HYDROPERO = "lshw/hydropero__Bash_Integrity_Script__lshw_results.json"  # an array; host ip-172-31-35-167
SONNIX = "lshw/sonnix-de__computerspende__lshw.json"  # an array; host wuffinotebook, Wi-Fi MAC and address
NVME_LIST = "nvme-cli/netdata__netdata__src__go__plugin__go.d__collector__nvme__testdata__v2.11__nvme-list.json"
LSPCI_SERIAL = "lspci/local__lspci-3.9.0__rendered_from_pciutils_tests_cap-phy32.txt"
USER = "mariadelgado"
IPV6 = "2001:db8:85a3::8a2e:370:7334"
MAC = "3c:22:fb:9a:41:0e"
MACHINE_UUID = "4c4c4544-0038-3510-8052-b4c04f4d4d32"


def _by_id(serial: str) -> str:
    return f"/dev/disk/by-id/nvme-SAMSUNG_MZQLB1T9HAJR-00007_{serial}"


def _walk(node):
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def corpus_samples(samples: Path) -> list[Path]:
    """Every shared lshw, nvme-cli and lspci sample, and the fio outputs that name a host."""
    found = [p for sub in ("lshw", "nvme-cli", "lspci") for p in sorted((samples / sub).iterdir())]
    return found + [p for p in sorted((samples / "fio").iterdir()) if '"hostname"' in p.read_text()]


def identifiers_of_inputs(samples: Path) -> set[str]:
    """What a reader must never find: every serial, host name, address and planted value in the inputs."""
    found = {USER, IPV6, MAC, MACHINE_UUID}
    for path in [*corpus_samples(samples), samples / bundles.ID_CTRL, samples / bundles.LSPCI]:
        text = path.read_text(errors="replace")
        for dsn, vpd in re.findall(r"Device Serial Number (\S+)|\[SN\] Serial number: (\S+)", text):
            found.add(dsn or vpd)
        if path.parent.name not in ("lshw", "nvme-cli", "fio"):
            continue
        try:
            document = json.loads(text)
        except ValueError:
            continue
        for node in _walk(document):
            if node.get("class") == "system" and isinstance(node.get("id"), str):
                found.add(node["id"])  # lshw: the host name
            if isinstance((node.get("configuration") or {}).get("ip"), str):
                found.add(node["configuration"]["ip"])
            for key in ("serial", "sn", "SerialNumber", "HostID", "HostNQN", "SubsystemNQN", "subnqn", "hostname"):
                if isinstance(node.get(key), str):
                    found.add(node[key])
            nqn = str(node.get("SubsystemNQN") or node.get("subnqn") or "")
            if nqn.startswith("nqn.2014.08.org.nvmexpress:"):
                found.add(nqn.split(":", 1)[1][8:].split()[0])  # the serial glued to the vendor ids
    # placeholders (lshw -sanitize's, a vendor's all-zero serial, which is also part of many numbers) and loopback
    # name nothing
    found = {v.strip() for v in found if v.strip() not in ("[REMOVED]", "computer", "127.0.0.1")}
    return {v for v in found if len(v) >= 6 and " " not in v and len(set(v)) > 1}


def plant(samples: Path):
    id_ctrl_serial = json.loads((samples / bundles.ID_CTRL).read_text())["sn"].strip()
    list_serial = json.loads((samples / NVME_LIST).read_text())["Devices"][0]["Subsystems"][0]["Controllers"][0][
        "SerialNumber"
    ]
    by_id = _by_id(id_ctrl_serial)

    def mutate(run_dir: Path, manifest: dict, files: list[str]) -> None:
        system = run_dir / "system"
        shutil.copyfile(samples / HYDROPERO, system / "lshw.json")
        shutil.copyfile(samples / SONNIX, system / "lshw-laptop.json")
        shutil.copyfile(samples / NVME_LIST, system / "nvme-list.json")
        shutil.copyfile(samples / LSPCI_SERIAL, system / "lspci-dsn.txt")
        commands = [
            {"args": ["nvme", "id-ctrl", by_id, "-o", "json"], "returncode": 0, "stderr": ""},
            {"args": ["fio", f"/home/{USER}/nvmedb/jobs/a.fio"], "returncode": 1,
             # the list serial and the laptop's name appear here only in free text: the union must catch them
             "stderr": f"{list_serial} busy on wuffinotebook via {IPV6} (hwaddr {MAC}) machine-id {MACHINE_UUID}"},
        ]  # fmt: skip
        (system / "commands.json").write_text(json.dumps(commands, indent=2))
        facts = json.loads((system / "facts.json").read_text())
        facts["device"] = by_id
        (system / "facts.json").write_text(json.dumps(facts))
        (run_dir / "run.json").write_text(
            json.dumps({"sessions": [{"note": f"started by {USER} on ip-172-31-35-167 from /home/{USER}/runs"}]})
        )
        files += ["system/lshw.json", "system/lshw-laptop.json", "system/nvme-list.json", "system/lspci-dsn.txt",
                  "system/commands.json", "run.json"]  # fmt: skip
        (system / "corpus").mkdir()
        for sample in corpus_samples(samples):
            name = f"system/corpus/{sample.parent.name}-{sample.name[-60:]}"
            shutil.copyfile(sample, run_dir / name)
            files.append(name)
        for run in manifest["runs"]:
            job = run_dir / run["job_file"]
            job.write_text(f"[global]\nfilename={by_id}\n" + job.read_text())
            output = run_dir / run["output_file"]
            doc = json.loads(output.read_text())
            doc.setdefault("global options", {})["filename"] = by_id
            for entry in doc["jobs"]:
                entry.setdefault("job options", {})["filename"] = by_id
            output.write_text(json.dumps(doc, indent=2))
        manifest["target"]["path"] = by_id
        # a real drive's PTS run: a trial (file target, quick profile) would be on no public surface at all
        manifest["target"]["kind"] = manifest["plan"]["target_kind"] = "device"
        manifest["profile"] = manifest["plan"]["profile"] = "pts"

    return mutate


def test_the_inputs_really_hold_every_leak_class(shared_samples):
    secrets = identifiers_of_inputs(shared_samples)
    for expected in ("ip-172-31-35-167", "wuffinotebook", "keithcollins-hp-probook-6450b", "172.31.35.167",
                     "192.168.0.120", "XXX02YYY", "7VS00KNX", "MT1838K07636", USER):  # fmt: skip
        assert expected in secrets
    assert any(re.fullmatch(r"([0-9a-f]{2}:){5}[0-9a-f]{2}", s) for s in secrets - {MAC})  # the laptop's own MACs
    assert len(secrets) >= 40


@pytest.mark.django_db
def test_no_identifier_survives_on_any_public_surface(
    client, submission, shared_samples, storage, releases_dir, tmp_path, django_capture_on_commit_callbacks
):
    secrets = identifiers_of_inputs(shared_samples)
    bundle = bundles.verified_bundle(tmp_path / "work", shared_samples, mutate=plant(shared_samples))
    raw_text = "\n".join(bundle.read_bytes(e["path"]).decode("utf-8", "replace") for e in bundle.manifest["files"])
    assert all(secret in raw_text for secret in secrets), "the corpus lost a leak"
    shutil.copyfile(tmp_path / "work" / "b.nvmedb.tar.gz", storage / "bundles" / "leaky.nvmedb.tar.gz")
    submission.storage_name = "bundles/leaky.nvmedb.tar.gz"
    with django_capture_on_commit_callbacks(execute=True):
        outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status in ("published", "held"), outcome.reasons
    # ingest cached the identifiers of the bundle it verified in memory: what reading the stored bundle finds
    warmed = raw_identifiers.cached(submission.storage_name)
    assert warmed == raw_files.collect_bundle_identifiers(storage_name=submission.storage_name)
    assert {"ip-172-31-35-167", "wuffinotebook", USER} <= warmed
    submission.status, submission.published_at = "published", timezone.now()
    submission.save()
    slug = submission.test_runs.first().drive_model.slug

    urls = ["/", "/drives/", f"/drives/{slug}/", f"/submissions/{submission.pk}/", "/api/v1/drives/",
            f"/api/v1/drives/{slug}/", "/api/v1/published-submissions/",
            f"/api/v1/published-submissions/{submission.pk}/", "/api/v1/measurements/"]  # fmt: skip
    urls += [f"/datasets/{table}.{fmt}" for table in TABLES for fmt in ("csv", "json", "ndjson")]
    kinds = raw_allow.file_kinds(bundle.manifest)
    assert {"system/lshw.json", "system/lshw-laptop.json", "system/nvme-list.json", "system/lspci-dsn.txt",
            "system/commands.json", "run.json", bundle.manifest["runs"][0]["job_file"]} <= set(kinds)  # fmt: skip
    not_served = set()
    for entry in bundle.manifest["files"]:
        urls += [f"/submissions/{submission.pk}/files/{entry['path']}"] * 2
        urls += [f"/submissions/{submission.pk}/files/{entry['path']}?download=1"]
        if entry["path"] not in kinds:  # the corpus's files of no known kind: listed, never served
            not_served |= {urls[-1], urls[-2]}
    for url in urls:
        response = client.get(url)
        assert response.status_code == (404 if url in not_served else 200), url
        body = response_text(response)
        leaked = sorted(secret for secret in secrets if secret in body)
        assert not leaked, (url, leaked)
    assert build_release().number == 1
    for path in sorted((releases_dir / "1").iterdir()):
        if path.suffix == ".parquet":
            body = json.dumps(pq.read_table(path).to_pylist(), default=str)
        else:
            body = path.read_text()
        leaked = sorted(secret for secret in secrets if secret in body)
        assert not leaked, (path.name, leaked)
        assert client.get(f"/datasets/releases/1/{path.name}").status_code == 200
    job = response_text(client.get(f"/submissions/{submission.pk}/files/{bundle.manifest['runs'][0]['job_file']}"))
    assert "filename=/dev/disk/by-id/[scrubbed]" in job.splitlines()  # what was there stays legible
    lshw = json.loads(response_text(client.get(f"/submissions/{submission.pk}/files/system/lshw-laptop.json")))
    assert lshw[0]["id"] == "[scrubbed]" and lshw[0]["class"] == "system"  # still the same JSON document


def test_a_serial_seen_in_one_file_is_removed_from_every_other(shared_samples):
    id_ctrl = (shared_samples / bundles.ID_CTRL).read_bytes()
    serial = json.loads(id_ctrl)["sn"].strip()
    other = f"model nvme disk {serial} in free text\n".encode()
    assert serial in Scrubber(identifiers_in_file("commands.json", other)).text(other.decode())
    union = identifiers_in_file("id-ctrl.json", id_ctrl) | identifiers_in_file("log.txt", other)
    assert serial not in Scrubber(union).text(other.decode())


def test_a_log_kept_in_a_json_string_names_its_host_and_serial():
    """A command's output saved as one JSON string has its newlines escaped: the file's text has no line of it, but
    the string is read as a text of its own."""
    uname = "Linux lab-box-7 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian"
    document = {"commands": {"uname -a": uname, "smartctl": "=== INFO ===\nSerial Number:    S5GXNF0R912345\n"}}
    data = json.dumps(document, indent=2).encode()
    assert b"\nSerial" not in data.replace(b"\\n", b"")  # the newlines are escapes in the file
    found = identifiers_in_file("commands.json", data)
    assert {"lab-box-7", "S5GXNF0R912345"} <= found
    scrubbed = Scrubber(found).text(data.decode())
    assert "lab-box-7" not in scrubbed and "S5GXNF0R912345" not in scrubbed
    assert json.loads(scrubbed)["commands"]["uname -a"].startswith("Linux [scrubbed] 6.1.0")


def test_version_numbers_that_look_like_addresses_are_kept(shared_samples):
    text = (shared_samples / SONNIX).read_text()
    scrubbed = Scrubber(identifiers_in_file("lshw.json", text.encode())).text(text)
    assert '"firmware" : "18.168.6.1"' in scrubbed and "192.168.0.120" not in scrubbed


def test_a_10000_deep_json_is_scanned_and_laid_out_without_recursion():
    deep = '{"sn": "DEEPSERIAL42", "a": ' + "[" * 10_000 + '"DEEPSERIAL42 again"' + "]" * 10_000 + "}"
    found = identifiers_in_file("deep.json", deep.encode())
    assert "DEEPSERIAL42" in found
    scrubbed = Scrubber(found).text(deep)
    assert "DEEPSERIAL42" not in scrubbed and scrubbed.count("[") == 10_000 + 2  # two "[scrubbed]"
    pretty = pretty_json(scrubbed)
    assert pretty.count("\n") > 10_000 and max(len(line) for line in pretty.splitlines()) < 200


def test_chunked_scrubbing_equals_whole_file_scrubbing(shared_samples, monkeypatch):
    monkeypatch.setattr(privacy, "CHUNK_CHARS", 4096)
    text = (shared_samples / SONNIX).read_text() * 3
    scrubber = Scrubber(identifiers_in_file("lshw.json", text.encode()))
    pieces = [text[i : i + 777] for i in range(0, len(text), 777)]
    assert "".join(scrubber.chunks(pieces)) == scrubber.text(text)
    assert raw_files.SCRUBBED in scrubber.text(text)


def test_a_one_line_document_longer_than_a_chunk_is_cut_between_pairs(monkeypatch):
    monkeypatch.setattr(privacy, "CHUNK_CHARS", 4096)
    pairs = ",".join(f'"k{i}": "v{i}", "serial": "SER,{i:05d}"' for i in range(2000))
    text = "{" + pairs + "}"
    scrubbed = "".join(Scrubber(set()).chunks([text[i : i + 1000] for i in range(0, len(text), 1000)]))
    assert "SER," not in scrubbed and scrubbed.count('"serial": "[scrubbed]"') == 2000
    assert json.loads(scrubbed)["k1999"] == "v1999"


@pytest.mark.parametrize(
    "text, address",
    [
        ("inet 192.168.0.120/24 brd", "192.168.0.120"),
        ("eth0:10.20.30.40", "10.20.30.40"),
        ('"ip" : "172.31.35.167"', "172.31.35.167"),
        ("inet6 addr:fe80::9e5c:8eff:fe1a:2b3c/64", "fe80::9e5c:8eff:fe1a:2b3c"),
        ("via 2001:db8:85a3::8a2e:370:7334: link up", "2001:db8:85a3::8a2e:370:7334"),
        ("HWaddr 3C:22:FB:9A:41:0E", "3C:22:FB:9A:41:0E"),
        ("Device Serial Number 2b-0a-50-31-8c-38-25-00", "2b-0a-50-31-8c-38-25-00"),
        ("machine-id 4c4c4544-0038-3510-8052-b4c04f4d4d32.", "4c4c4544-0038-3510-8052-b4c04f4d4d32"),
    ],
)
def test_addresses_are_scrubbed_wherever_they_stand(text, address):
    scrubbed = Scrubber(set()).text(text)
    assert address not in scrubbed and privacy.SCRUBBED in scrubbed


@pytest.mark.parametrize(
    "text",
    [
        "listening on 127.0.0.1 and ::1",  # loopback names no machine
        '"firmware" : "18.168.6.1"',  # a version that looks like an address
        "PCI 0000:3b:00.0 at 2026-11-22T10:00:00Z",
        "std::vector<int> and 1.5e-05 s and 99.000000",
        '"lat_ns" : {"min" : 1234567, "max" : 12345678}',
    ],
)
def test_things_that_only_look_like_addresses_are_kept(text):
    assert Scrubber(set()).text(text) == text


def test_identifiers_that_prefix_each_other_are_replaced_whole_and_only_standing_alone():
    scrubber = Scrubber({"S43ANA", "S43ANA0M405593", "ip-172-31", "ip-172-31-35-167", "mariadelgado"})
    text = "S43ANA0M405593 S43ANA ip-172-31-35-167.ec2 /home/x/mariadelgado2 XS43ANA S43ANA0M405593_p1"
    assert scrubber.text(text) == (
        "[scrubbed] [scrubbed] [scrubbed].ec2 /home/[scrubbed]/mariadelgado2 XS43ANA [scrubbed]_p1"
    )


def test_thousands_of_identifiers_are_matched_in_one_pass():
    identifiers = {f"SER{i:07d}X" for i in range(5000)}
    text = " ".join(f"SER{i:07d}X" for i in range(0, 5000, 7))
    assert set(Scrubber(identifiers).text(text).split()) == {privacy.SCRUBBED}


LABELLED_LINES = [
    "Serial Number", "Serial No.", "serial", "SN", "subnqn", "hostnqn", "static hostname", "Transient hostname",
    "pretty hostname", "hostname", "nodename", "machine-id", "Boot ID", "LU WWN Device Id", "IEEE EUI-64", "EUI64",
    "NGUID", "Asset Tag", "product_serial", "Board Serial", "chassis-serial", "LOGNAME", "sudo_user",
]  # fmt: skip


@pytest.mark.parametrize("label", LABELLED_LINES)
def test_every_labelled_line_names_its_value_in_any_case_and_indent(label):
    text = f'{{\n  "jobs" : [1, 2],\n  "x" : 3\n}}\n\t {label} : QX9-{len(label)}-7781\n{label.upper()}=QY9-7782\n'
    found = privacy.identifiers_in_text(text)
    assert {f"QX9-{len(label)}-7781", "QY9-7782"} <= found
