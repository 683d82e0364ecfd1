"""Raw files served from stored bundles: re-emitted by the allow-list of their kind and scrubbed of serial numbers and
host names, listed files of a known kind only, public only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analysis.tests import bundles, factories
from analysis.tests.conftest import make_browse_submission
from browse import raw_files

LSHW = "lshw/keithCollins77093__hardInfo__lshw.json"
NVME_LIST = "nvme-cli/netdata__netdata__src__go__plugin__go.d__collector__nvme__testdata__v2.11__nvme-list.json"
LSPCI_SERIAL = "lspci/local__lspci-3.9.0__rendered_from_pciutils_tests_cap-phy32.txt"
SECRETS = ("CNU1172KX0", "keithcollins-hp-probook-6450b", "S43ANA0M405593", "XXX02YYY", "7VS00KNX",
           "2b-0a-50-31-8c-38-25-00", "e9184000-7983-11ec-8000-d85ed316925c")  # fmt: skip


def test_scrub_removes_serials_and_hostnames_from_real_lshw_and_nvme_cli_output(shared_samples):
    lshw = raw_files.scrub("lshw.json", (shared_samples / LSHW).read_bytes(), kind="lshw").decode()
    document = json.loads(lshw)
    assert document["id"] == raw_files.SCRUBBED and document["serial"] == raw_files.SCRUBBED
    assert "HP ProBook 6450b" in lshw  # the product stays: it is the hardware, not the unit
    id_ctrl = raw_files.scrub("id-ctrl.json", (shared_samples / bundles.ID_CTRL).read_bytes(), kind="nvme-id-ctrl")
    assert json.loads(id_ctrl)["sn"] == raw_files.SCRUBBED
    assert json.loads(id_ctrl)["mn"].strip()  # model number kept
    nvme_list = raw_files.scrub("nvme-list.json", (shared_samples / NVME_LIST).read_bytes(), kind="nvme-list").decode()
    lspci = raw_files.scrub("lspci.txt", (shared_samples / LSPCI_SERIAL).read_bytes(), kind="lspci-vvv").decode()
    assert "Device Serial Number [scrubbed]" in lspci
    for text in (lshw, id_ctrl.decode(), nvme_list, lspci):
        for secret in SECRETS:
            assert secret not in text


NVME_CLI_KINDS = {"list": "nvme-list", "smart": "nvme-smart-log", "id_ctrl": "nvme-id-ctrl"}


def _sample_kind(path) -> str | None:
    if path.parent.name != "nvme-cli":
        return {"lshw": "lshw", "lspci": "lspci-vvv"}[path.parent.name]
    return next((kind for word, kind in NVME_CLI_KINDS.items() if word in path.name.replace("-", "_")), None)


@pytest.mark.parametrize("sample", ["lshw", "nvme-cli", "lspci"])
def test_every_shared_sample_keeps_what_it_says_of_the_hardware_and_loses_its_serials(shared_samples, sample):
    for path in sorted((shared_samples / sample).iterdir()):
        kind = _sample_kind(path)
        if kind is None:  # a vendor log page no kind names: not served at all
            continue
        data = path.read_bytes()
        cleaned = raw_files.scrub(path.name, data, kind=kind).decode()
        assert "Serial Number 2b-" not in cleaned and '"SerialNumber": "7VS' not in cleaned
        if kind == "lspci-vvv":  # every link line of every device stays
            links = [line for line in data.decode("utf-8", "replace").splitlines() if "LnkSta:" in line]
            assert all(line in cleaned.splitlines() for line in links), path.name
            continue
        original, served = json.loads(data), json.loads(cleaned)
        if kind == "lshw":  # every node and its product stay
            assert _count(original, "class") == _count(served, "class") > 0, path.name
            assert _count(original, "product") == _count(served, "product"), path.name
        elif isinstance(original, dict) and "data_units_written" in original:
            assert served["data_units_written"] == original["data_units_written"]
        elif isinstance(original, dict) and "mn" in original:
            assert served["mn"] == original["mn"] and served["tnvmcap"] == original["tnvmcap"]
        else:
            assert len(json.dumps(served)) > 0.5 * len(json.dumps(original)), path.name


def _count(node, key: str) -> int:
    if isinstance(node, dict):
        return (key in node) + sum(_count(value, key) for value in node.values())
    if isinstance(node, list):
        return sum(_count(value, key) for value in node)
    return 0


@pytest.fixture
def stored_bundle(settings, tmp_path, shared_samples):
    def extra(run_dir, manifest, files):
        for name, sample in (("system/lshw.json", LSHW), ("system/nvme-list.json", NVME_LIST),
                             ("system/lspci-serial.txt", LSPCI_SERIAL)):  # fmt: skip
            shutil.copyfile(shared_samples / sample, run_dir / name)
            files.append(name)

    bundle = bundles.verified_bundle(tmp_path / "work", shared_samples, mutate=extra)
    storage_dir = tmp_path / "storage"
    (storage_dir / "bundles").mkdir(parents=True)
    shutil.copyfile(tmp_path / "work" / "b.nvmedb.tar.gz", storage_dir / "bundles" / "b.nvmedb.tar.gz")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(storage_dir)}},
    }
    return bundle


@pytest.mark.django_db
def test_a_public_submission_page_links_scrubbed_raw_files(client, stored_bundle):
    drive = factories.DriveModelFactory(slug="raw-drive")
    submission = make_browse_submission(drive_model=drive, storage_name="bundles/b.nvmedb.tar.gz")
    page = client.get(f"/submissions/{submission.pk}/").content.decode()
    listed = [entry["path"] for entry in stored_bundle.manifest["files"]]
    assert f"/submissions/{submission.pk}/files/system/lshw.json" in page
    assert "Bus-bound" in page and submission.uploader.username in page
    assert "wsat round 12" in page and "tp-read tp-read.bs1048576 round 5" in page
    for path in listed:
        response = client.get(f"/submissions/{submission.pk}/files/{path}")
        assert response.status_code == 200, path
        assert response["Content-Type"].startswith("text/plain")
        body = response.content.decode()
        for secret in SECRETS:
            assert secret not in body, (path, secret)
    fio = next(p for p in listed if p.startswith("fio/"))
    assert json.loads(client.get(f"/submissions/{submission.pk}/files/{fio}").content)["jobs"]
    for bad in ("manifest.json", "manifest.sig.json", "../manifest.json", "system/nope.json", "files/system/lshw.json"):
        assert client.get(f"/submissions/{submission.pk}/files/{bad}").status_code == 404, bad


@pytest.mark.django_db
def test_raw_files_of_a_submission_that_is_not_public_are_not_served(client, stored_bundle):
    drive = factories.DriveModelFactory()
    held = make_browse_submission(drive_model=drive, storage_name="bundles/b.nvmedb.tar.gz", status="held")
    hidden = factories.SubmissionFactory(storage_name="bundles/b.nvmedb.tar.gz", hidden=True)
    for submission in (held, hidden):
        assert client.get(f"/submissions/{submission.pk}/files/system/lshw.json").status_code == 404
    client.force_login(held.uploader)  # even its owner reads raw files from the bundle they hold, not from here
    assert client.get(f"/submissions/{held.pk}/files/system/lshw.json").status_code == 404
    page = client.get(f"/submissions/{held.pk}/")
    assert page.status_code == 200 and "Raw files" not in page.content.decode()


def test_fio_output_with_text_around_it_is_served_as_the_document_that_counts(shared_samples):
    path = shared_samples / "fio" / "local__fio-3.33__client_server_client_stats.json"
    prefixed = b"fio: note: some warning from host labhost\n" + path.read_bytes()
    cleaned = raw_files.scrub("fio/out.json", prefixed, kind="fio-output").decode()
    served, original = json.loads(cleaned), json.loads(path.read_bytes())
    assert "labhost" not in cleaned and "some warning" not in cleaned  # free text is not on the allow-list
    assert all(entry["hostname"] == "[scrubbed]" for entry in served["client_stats"])
    for mine, theirs in zip(served["client_stats"], original["client_stats"], strict=True):
        assert mine["read"] == theirs["read"] and mine["write"] == theirs["write"]  # every figure as fio wrote it


@pytest.fixture
def odd_bundle(settings, tmp_path, shared_samples):
    """A stored bundle with a 10,000-deep lshw JSON file and a large lspci file, each naming the drive's serial."""
    serial = json.loads((shared_samples / bundles.ID_CTRL).read_text())["sn"].strip()
    line = f"\tKernel driver in use: nvme on /dev/disk/by-id/nvme-Vendor_{serial}, host 10.1.2.3\n"

    def extra(run_dir, manifest, files):
        deep = '{"serial": "' + serial + '", "a": ' + "[" * 10_000 + "1" + "]" * 10_000 + "}"
        (run_dir / "system" / "lshw-deep.json").write_text(deep)
        (run_dir / "system" / "lspci-big.txt").write_text(line * 20_000)  # about 1.6 MB
        (run_dir / "system" / "unknown.txt").write_text(f"a file of no known kind naming {serial}\n")
        files += ["system/lshw-deep.json", "system/lspci-big.txt", "system/unknown.txt"]

    bundles.verified_bundle(tmp_path / "work", shared_samples, mutate=extra)
    storage_dir = tmp_path / "storage"
    (storage_dir / "bundles").mkdir(parents=True)
    shutil.copyfile(tmp_path / "work" / "b.nvmedb.tar.gz", storage_dir / "bundles" / "odd.nvmedb.tar.gz")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(storage_dir)}},
    }
    submission = make_browse_submission(
        drive_model=factories.DriveModelFactory(), storage_name="bundles/odd.nvmedb.tar.gz"
    )
    return submission, serial, line


@pytest.mark.django_db
def test_a_10000_deep_json_raw_file_is_not_shown_and_no_server_error(client, odd_bundle):
    submission, serial, _ = odd_bundle
    response = client.get(f"/submissions/{submission.pk}/files/system/lshw-deep.json")
    assert response.status_code == 200
    body = response.content.decode()
    assert serial not in body and body == "[not shown: this file could not be read as lshw JSON]\n"


@pytest.mark.django_db
def test_a_file_of_no_known_kind_is_listed_as_not_served_and_not_served(client, odd_bundle):
    submission, serial, _ = odd_bundle
    page = client.get(f"/submissions/{submission.pk}/").content.decode()
    assert "system/unknown.txt <small>" in page and "not served: unknown file kind" in page
    assert f"/submissions/{submission.pk}/files/system/unknown.txt" not in page
    assert f"/submissions/{submission.pk}/files/system/lspci-big.txt" in page
    for suffix in ("", "?download=1"):
        response = client.get(f"/submissions/{submission.pk}/files/system/unknown.txt{suffix}")
        assert response.status_code == 404 and b"not served: unknown file kind" in response.content
        assert serial.encode() not in response.content


@pytest.mark.django_db
def test_a_file_above_the_render_limit_is_offered_as_a_streamed_scrubbed_download(client, settings, odd_bundle):
    submission, serial, line = odd_bundle
    settings.NVMEDB_RAW_FILE_RENDER_MAX_BYTES = 1024**2
    url = f"/submissions/{submission.pk}/files/system/lspci-big.txt"
    page = client.get(url)
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    assert "?download=1" in page.content.decode() and serial not in page.content.decode()
    download = client.get(url + "?download=1")
    assert download.status_code == 200 and download.streaming
    assert download["Content-Disposition"] == 'attachment; filename="lspci-big.txt"'
    body = b"".join(download.streaming_content).decode()
    assert body.count("\n") == 20_000 and serial not in body and "10.1.2.3" not in body
    assert body.splitlines()[0] == "\tKernel driver in use: nvme on /dev/disk/by-id/[scrubbed], host [scrubbed]"
    small = client.get(f"/submissions/{submission.pk}/files/system/facts.json")  # below the limit: shown as before
    assert small.status_code == 200 and small["Content-Type"].startswith("text/plain") and not small.streaming


@pytest.mark.django_db
def test_a_file_above_the_download_limit_is_not_served(client, settings, odd_bundle):
    submission, _, _ = odd_bundle
    settings.NVMEDB_RAW_FILE_RENDER_MAX_BYTES = 1024
    settings.NVMEDB_RAW_FILE_DOWNLOAD_MAX_BYTES = 1024**2
    for suffix in ("", "?download=1"):
        response = client.get(f"/submissions/{submission.pk}/files/system/lspci-big.txt{suffix}")
        assert response.status_code == 404 and b"larger than the site serves" in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("damage", ["not_gzip", "truncated", "empty"])
def test_a_damaged_stored_bundle_gives_a_not_found_never_a_server_error(client, stored_bundle, settings, damage):
    location = settings.STORAGES["default"]["OPTIONS"]["location"]
    path = Path(location) / "bundles" / "b.nvmedb.tar.gz"
    data = path.read_bytes()
    damaged = {"not_gzip": b"PK\x03\x04 not a tar.gz" * 10, "truncated": data[: len(data) // 2], "empty": b""}[damage]
    path.write_bytes(damaged)
    submission = make_browse_submission(
        drive_model=factories.DriveModelFactory(), storage_name="bundles/b.nvmedb.tar.gz"
    )
    assert client.get(f"/submissions/{submission.pk}/").status_code == 200
    for entry in stored_bundle.manifest["files"]:
        response = client.get(f"/submissions/{submission.pk}/files/{entry['path']}")
        assert response.status_code in (200, 404), (entry["path"], response.status_code)
        if response.status_code == 200:  # the part before the damage, and a sentence saying where it stops
            assert b"could not be read past this point" in response.content


@pytest.mark.django_db
def test_a_bundle_naming_more_identifiers_than_can_be_scrubbed_shows_no_raw_file(
    client, settings, tmp_path, shared_samples, monkeypatch
):
    from analysis import privacy

    monkeypatch.setattr(privacy, "MAX_IDENTIFIERS", 50)

    def extra(run_dir, manifest, files):
        (run_dir / "system" / "many.json").write_text(json.dumps([{"serial": f"FAKE{i:06d}"} for i in range(51)]))
        files.append("system/many.json")

    bundles.verified_bundle(tmp_path / "work", shared_samples, mutate=extra)
    (tmp_path / "storage" / "bundles").mkdir(parents=True)
    shutil.copyfile(tmp_path / "work" / "b.nvmedb.tar.gz", tmp_path / "storage" / "bundles" / "many.nvmedb.tar.gz")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp_path / "storage")}},
    }
    submission = make_browse_submission(
        drive_model=factories.DriveModelFactory(), storage_name="bundles/many.nvmedb.tar.gz"
    )
    for path in ("system/many.json", "system/facts.json"):
        assert client.get(f"/submissions/{submission.pk}/files/{path}").status_code == 404
    assert client.get(f"/submissions/{submission.pk}/").status_code == 200


@pytest.mark.django_db
def test_the_page_for_a_large_file_reads_only_the_manifest(client, settings, odd_bundle, monkeypatch):
    submission, _, _ = odd_bundle
    settings.NVMEDB_RAW_FILE_RENDER_MAX_BYTES = 1024**2

    def must_not_read(**kwargs):
        raise AssertionError("the file was read to answer a page that only offers its download")

    monkeypatch.setattr(raw_files, "open_scrubbed", must_not_read)
    monkeypatch.setattr(raw_files, "collect_bundle_identifiers", must_not_read)
    assert client.get(f"/submissions/{submission.pk}/files/system/lspci-big.txt").status_code == 200
