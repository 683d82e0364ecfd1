"""Raw files served from stored bundles: scrubbed of serial numbers and host names, listed files only, public only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analysis.browse import raw_files
from analysis.tests import bundles, factories
from analysis.tests.conftest import make_browse_submission

LSHW = "lshw/keithCollins77093__hardInfo__lshw.json"
NVME_LIST = "nvme-cli/netdata__netdata__src__go__plugin__go.d__collector__nvme__testdata__v2.11__nvme-list.json"
LSPCI_SERIAL = "lspci/local__lspci-3.9.0__rendered_from_pciutils_tests_cap-phy32.txt"
SECRETS = ("CNU1172KX0", "keithcollins-hp-probook-6450b", "S43ANA0M405593", "XXX02YYY", "7VS00KNX",
           "2b-0a-50-31-8c-38-25-00", "e9184000-7983-11ec-8000-d85ed316925c")  # fmt: skip


def test_scrub_removes_serials_and_hostnames_from_real_lshw_and_nvme_cli_output(shared_samples):
    lshw = raw_files.scrub("lshw.json", (shared_samples / LSHW).read_bytes()).decode()
    document = json.loads(lshw)
    assert document["id"] == raw_files.SCRUBBED and document["serial"] == raw_files.SCRUBBED
    assert "HP ProBook 6450b" in lshw  # the product stays: it is the hardware, not the unit
    id_ctrl = raw_files.scrub("id-ctrl.json", (shared_samples / bundles.ID_CTRL).read_bytes()).decode()
    assert json.loads(id_ctrl)["sn"] == raw_files.SCRUBBED
    assert json.loads(id_ctrl)["mn"].strip()  # model number kept
    nvme_list = raw_files.scrub("nvme-list.json", (shared_samples / NVME_LIST).read_bytes()).decode()
    lspci = raw_files.scrub("lspci.txt", (shared_samples / LSPCI_SERIAL).read_bytes()).decode()
    assert "Device Serial Number [scrubbed]" in lspci
    for text in (lshw, id_ctrl, nvme_list, lspci):
        for secret in SECRETS:
            assert secret not in text


@pytest.mark.parametrize("sample", ["lshw", "nvme-cli", "lspci"])
def test_every_shared_sample_keeps_its_size_roughly_and_loses_its_serials(shared_samples, sample):
    for path in sorted((shared_samples / sample).iterdir()):
        data = path.read_bytes()
        cleaned = raw_files.scrub(path.name, data).decode()
        assert len(cleaned) > 0.5 * len(data.decode("utf-8", "replace"))
        if path.name.endswith(".json"):
            json.loads(cleaned)
        assert "Serial Number 2b-" not in cleaned and '"SerialNumber": "7VS' not in cleaned


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


def test_fio_output_that_is_not_one_json_document_is_scrubbed_by_pattern(shared_samples):
    path = shared_samples / "fio" / "local__fio-3.33__client_server_client_stats.json"
    prefixed = b"fio: note: some warning\n" + path.read_bytes()
    cleaned = raw_files.scrub("fio/out.json", prefixed).decode()
    assert '"hostname" : "[scrubbed]"' in cleaned
    assert '"hostname" : "127.0.0.1"' not in cleaned
    assert cleaned.count("\n") == prefixed.decode().count("\n")  # everything else untouched


@pytest.fixture
def odd_bundle(settings, tmp_path, shared_samples):
    """A stored bundle with a 10,000-deep JSON file and a large text file, each naming the drive's serial."""
    serial = json.loads((shared_samples / bundles.ID_CTRL).read_text())["sn"].strip()
    line = f"fio: job reading /dev/disk/by-id/nvme-Vendor_{serial} at 12345 IOPS, host 10.1.2.3\n"

    def extra(run_dir, manifest, files):
        deep = '{"note": "' + serial + '", "a": ' + "[" * 10_000 + "1" + "]" * 10_000 + "}"
        (run_dir / "system" / "deep.json").write_text(deep)
        (run_dir / "system" / "big.txt").write_text(line * 20_000)  # about 1.6 MB
        files += ["system/deep.json", "system/big.txt"]

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
def test_a_10000_deep_json_raw_file_is_shown_scrubbed_not_a_server_error(client, odd_bundle):
    submission, serial, _ = odd_bundle
    response = client.get(f"/submissions/{submission.pk}/files/system/deep.json")
    assert response.status_code == 200
    body = response.content.decode()
    assert serial not in body and '"note": "[scrubbed]"' in body
    assert body.count("[") == 10_000 + 1 and body.count("]") == 10_000 + 1  # every level kept, one "[scrubbed]"


@pytest.mark.django_db
def test_a_file_above_the_render_limit_is_offered_as_a_streamed_scrubbed_download(client, settings, odd_bundle):
    submission, serial, line = odd_bundle
    settings.NVMEDB_RAW_FILE_RENDER_MAX_BYTES = 1024**2
    url = f"/submissions/{submission.pk}/files/system/big.txt"
    page = client.get(url)
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    assert "?download=1" in page.content.decode() and serial not in page.content.decode()
    download = client.get(url + "?download=1")
    assert download.status_code == 200 and download.streaming
    assert download["Content-Disposition"] == 'attachment; filename="big.txt"'
    body = b"".join(download.streaming_content).decode()
    assert body.count("\n") == 20_000 and serial not in body and "10.1.2.3" not in body
    assert body.splitlines()[0] == "fio: job reading /dev/disk/by-id/[scrubbed] at 12345 IOPS, host [scrubbed]"
    small = client.get(f"/submissions/{submission.pk}/files/system/facts.json")  # below the limit: shown as before
    assert small.status_code == 200 and small["Content-Type"].startswith("text/plain") and not small.streaming


@pytest.mark.django_db
def test_a_file_above_the_download_limit_is_not_served(client, settings, odd_bundle):
    submission, _, _ = odd_bundle
    settings.NVMEDB_RAW_FILE_RENDER_MAX_BYTES = 1024
    settings.NVMEDB_RAW_FILE_DOWNLOAD_MAX_BYTES = 1024**2
    for suffix in ("", "?download=1"):
        response = client.get(f"/submissions/{submission.pk}/files/system/big.txt{suffix}")
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
    assert client.get(f"/submissions/{submission.pk}/files/system/big.txt").status_code == 200
