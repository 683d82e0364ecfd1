"""Writing bundles, and verifying them as hostile input: every broken rule has its own code."""

import hashlib
import json
import tarfile
from datetime import datetime

import pytest

from bundle_factory import (
    CREATED_AT,
    MALICIOUS_KINDS,
    SMALL_LIMITS,
    TAMPERINGS,
    default_fio_samples,
    make_bundle,
    make_run_dir,
    malicious_bundle,
    new_signing_key,
    read_members,
    signed_manifest_members,
    write_tar_gz,
)
from nvmedb_client.bundle import (
    BundleError,
    BundleLimits,
    manifest_errors,
    rederive_steady_state,
    verify_bundle,
    write_bundle,
)
from nvmedb_client.signing import fingerprint, public_key_bytes


@pytest.fixture
def samples(shared_samples):
    return default_fio_samples(shared_samples)


def test_a_written_bundle_verifies_and_holds_every_file_unchanged(tmp_path, samples):
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    key = new_signing_key()
    bundle = write_bundle(
        run_dir=run_dir, manifest=manifest, files=files, signing_key=key, out_path=tmp_path / "out" / "b.nvmedb.tar.gz"
    )
    verified = verify_bundle(bundle, extract_to=tmp_path / "x", trusted_keys={public_key_bytes(key)})
    assert verified.public_key == public_key_bytes(key)
    assert verified.fingerprint == fingerprint(public_key_bytes(key))
    listed = verified.manifest["files"]
    assert [entry["path"] for entry in listed] == sorted(files)
    for entry in listed:
        original = (run_dir / entry["path"]).read_bytes()
        assert verified.read_bytes(entry["path"]) == original
        assert entry["size"] == len(original)
        assert entry["sha256"] == hashlib.sha256(original).hexdigest()
    assert {k: v for k, v in verified.manifest.items() if k != "files"} == manifest


def test_bundles_are_byte_for_byte_reproducible(tmp_path, samples):
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    key = new_signing_key()
    first = write_bundle(run_dir=run_dir, manifest=manifest, files=files, signing_key=key, out_path=tmp_path / "1")
    second = write_bundle(
        run_dir=run_dir, manifest=manifest, files=list(reversed(files)), signing_key=key, out_path=tmp_path / "2"
    )
    assert first.read_bytes() == second.read_bytes()


def test_members_are_sorted_owned_by_root_and_dated_by_the_manifest(tmp_path, samples):
    bundle = make_bundle(tmp_path, fio_samples=samples)
    members = [info for info, _ in read_members(bundle)]
    names = [info.name for info in members]
    assert names[:2] == ["manifest.json", "manifest.sig.json"]
    assert names[2:] == sorted(names[2:])
    created = int(datetime.fromisoformat(CREATED_AT.replace("Z", "+00:00")).timestamp())
    assert {(info.uid, info.gid, info.uname, info.gname, info.mtime) for info in members} == {(0, 0, "", "", created)}


def test_the_manifest_bytes_are_what_is_signed(tmp_path, samples):
    bundle = make_bundle(tmp_path, fio_samples=samples)
    verified = verify_bundle(bundle, extract_to=tmp_path / "x")
    members = dict((info.name, data) for info, data in read_members(bundle))
    assert verified.manifest_bytes == members["manifest.json"]
    assert json.loads(members["manifest.json"]) == verified.manifest


@pytest.mark.parametrize("tamper", sorted(TAMPERINGS))
def test_each_tampering_is_caught_with_its_own_code(tmp_path, samples, tamper):
    bundle = make_bundle(tmp_path, fio_samples=samples, tamper=tamper)
    with pytest.raises(BundleError) as caught:
        verify_bundle(bundle, extract_to=tmp_path / "x")
    assert caught.value.code == TAMPERINGS[tamper]
    assert caught.value.message


def test_the_tampering_messages_name_the_problem(tmp_path, samples):
    messages = {}
    for tamper in ("changed_byte", "missing_file", "extra_file", "wrong_key"):
        bundle = make_bundle(tmp_path, fio_samples=samples, tamper=tamper, name=f"{tamper}.nvmedb.tar.gz")
        with pytest.raises(BundleError) as caught:
            verify_bundle(bundle, extract_to=tmp_path / tamper)
        messages[tamper] = caught.value.message
    assert "SHA-256" in messages["changed_byte"]
    assert "not in the archive" in messages["missing_file"]
    assert "not listed in the manifest" in messages["extra_file"]
    assert "signature does not match" in messages["wrong_key"]
    assert len(set(messages.values())) == 4


def test_a_validly_signed_bundle_from_an_unknown_key_is_untrusted(tmp_path, samples):
    bundle = make_bundle(tmp_path, fio_samples=samples)
    with pytest.raises(BundleError) as caught:
        verify_bundle(bundle, extract_to=tmp_path / "x", trusted_keys={public_key_bytes(new_signing_key())})
    assert caught.value.code == "untrusted_key"
    # the same bundle verifies when no key list is given
    assert verify_bundle(bundle, extract_to=tmp_path / "y").manifest["format_version"] == 1


@pytest.mark.parametrize("kind", sorted(MALICIOUS_KINDS))
def test_each_hostile_archive_is_refused_with_its_own_code(tmp_path, kind):
    limits = BundleLimits() if kind == "bomb" else SMALL_LIMITS
    bundle = malicious_bundle(tmp_path, kind, limits=limits)
    with pytest.raises(BundleError) as caught:
        verify_bundle(bundle, extract_to=tmp_path / "x", limits=limits)
    assert caught.value.code == MALICIOUS_KINDS[kind]


@pytest.mark.parametrize("kind", ["dotdot_path", "absolute_path", "symlink", "hardlink", "char_device", "fifo"])
def test_nothing_is_written_for_a_hostile_archive(tmp_path, kind):
    (tmp_path / "in").mkdir()
    bundle = malicious_bundle(tmp_path / "in", kind)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(BundleError):
        verify_bundle(bundle, extract_to=tmp_path / "x", limits=SMALL_LIMITS)
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert [p for p in after if p not in before] == [tmp_path.joinpath("x").relative_to(tmp_path)]
    assert list((tmp_path / "x").iterdir()) == []


def test_a_rejected_bundle_leaves_no_extracted_files_behind(tmp_path, samples):
    bundle = make_bundle(tmp_path, fio_samples=samples, tamper="extra_file")
    with pytest.raises(BundleError):
        verify_bundle(bundle, extract_to=tmp_path / "x")
    assert list((tmp_path / "x").iterdir()) == []


def test_the_ratio_limit_stops_a_bomb_before_it_is_written_out(tmp_path):
    bundle = malicious_bundle(tmp_path, "bomb", limits=BundleLimits())
    limits = BundleLimits()
    with pytest.raises(BundleError, match="decompression bomb"):
        verify_bundle(bundle, extract_to=tmp_path / "x", limits=limits)
    with tarfile.open(bundle) as archive:
        expanded = sum(info.size for info in archive.getmembers())
    assert expanded > limits.max_compression_ratio * bundle.stat().st_size


def test_a_total_size_limit_counts_every_file(tmp_path, samples):
    bundle = make_bundle(tmp_path, fio_samples=samples)
    total = sum(entry["size"] for entry in verify_bundle(bundle, extract_to=tmp_path / "ok").manifest["files"])
    with pytest.raises(BundleError) as caught:
        verify_bundle(bundle, extract_to=tmp_path / "x", limits=BundleLimits(max_total_bytes=total // 2))
    assert caught.value.code == "too_large"


def test_extract_to_must_be_empty(tmp_path, samples):
    bundle = make_bundle(tmp_path, fio_samples=samples)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "left-over").write_text("")
    with pytest.raises(ValueError):
        verify_bundle(bundle, extract_to=tmp_path / "x")


def test_only_listed_files_can_be_read_from_a_verified_bundle(tmp_path, samples):
    verified = verify_bundle(make_bundle(tmp_path, fio_samples=samples), extract_to=tmp_path / "x")
    with pytest.raises(KeyError):
        verified.read_bytes("../manifest.json")


def test_write_refuses_a_manifest_that_breaks_the_schema(tmp_path, samples):
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    manifest["edition"] = "consumer"
    out = tmp_path / "b.nvmedb.tar.gz"
    with pytest.raises(BundleError) as caught:
        write_bundle(run_dir=run_dir, manifest=manifest, files=files, signing_key=new_signing_key(), out_path=out)
    assert caught.value.code == "bad_manifest"
    assert "edition" in caught.value.message
    assert not out.exists()
    assert list(tmp_path.glob(".b.nvmedb.tar.gz.*")) == []


@pytest.mark.parametrize("path", ["../etc/passwd", "/etc/passwd", "fio/../x"])
def test_write_refuses_paths_outside_the_run_directory(tmp_path, samples, path):
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    with pytest.raises(BundleError) as caught:
        write_bundle(
            run_dir=run_dir,
            manifest=manifest,
            files=[*files, path],
            signing_key=new_signing_key(),
            out_path=tmp_path / "b",
        )
    assert caught.value.code == "unsafe_path"


def test_write_refuses_a_symlinked_file(tmp_path, samples):
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    (run_dir / "fio" / "link.json").symlink_to(run_dir / files[0])
    with pytest.raises(BundleError) as caught:
        write_bundle(
            run_dir=run_dir,
            manifest=manifest,
            files=[*files, "fio/link.json"],
            signing_key=new_signing_key(),
            out_path=tmp_path / "b",
        )
    assert caught.value.code == "missing_file"


def test_a_failed_write_keeps_the_previous_bundle(tmp_path, samples):
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    out = write_bundle(
        run_dir=run_dir, manifest=manifest, files=files, signing_key=new_signing_key(), out_path=tmp_path / "b"
    )
    before = out.read_bytes()
    with pytest.raises(BundleError):
        write_bundle(
            run_dir=run_dir,
            manifest={**manifest, "profile": "nope"},
            files=files,
            signing_key=new_signing_key(),
            out_path=out,
        )
    assert out.read_bytes() == before


def test_the_schema_accepts_the_factory_manifest_and_names_what_is_wrong(tmp_path, samples):
    _, manifest, _ = make_run_dir(tmp_path, samples)
    complete = {**manifest, "files": [{"path": "fio/a.json", "size": 1, "sha256": "0" * 64}]}
    assert manifest_errors(complete) == []
    broken = {**complete, "files": [{"path": "../a.json", "size": -1, "sha256": "xyz"}]}
    errors = manifest_errors(broken)
    assert len(errors) == 3
    assert all(error.startswith("$.files[0].") for error in errors)


def test_re_deriving_steady_state_matches_an_honest_clients_claim(tmp_path, samples):
    verified = verify_bundle(make_bundle(tmp_path, fio_samples=samples), extract_to=tmp_path / "x")
    derived = rederive_steady_state(verified)
    assert derived == verified.manifest["steady_state"]
    assert [entry["variable"] for entry in derived] == [
        "iops.total_iops.rw000.bs4096",
        "iops.total_iops.rw065.bs65536",
        "iops.total_iops.rw100.bs1048576",
    ]
    # the SSSPT 65/35 @ 64 KiB cell was still settling in rounds 1-5, so the IOPS test is not steady there
    assert {entry["steady"] for entry in derived} == {False}
    assert all(entry["window"]["rounds"] == [1, 2, 3, 4, 5] for entry in derived)


def test_re_deriving_ignores_a_forged_claim(tmp_path, samples):
    _, manifest, _ = make_run_dir(tmp_path / "probe", samples)
    claims = [{**entry, "steady": True, "steady_round": 5} for entry in manifest["steady_state"]]
    bundle = make_bundle(tmp_path, fio_samples=samples, manifest_changes={"steady_state": claims})
    verified = verify_bundle(bundle, extract_to=tmp_path / "x")
    assert {entry["steady"] for entry in verified.manifest["steady_state"]} == {True}
    assert {entry["steady"] for entry in rederive_steady_state(verified)} == {False}


def test_a_run_whose_fio_output_is_unreadable_is_recorded_as_missing(tmp_path, samples, shared_samples):
    broken = shared_samples / "fio" / "louwrentius__fio-plot__party__fio__1m__write-64-8.json"  # empty output
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    victim = next(run for run in manifest["runs"] if run["read_pct"] == 0 and run["round"] == 3)
    (run_dir / victim["output_file"]).write_bytes(broken.read_bytes())
    bundle = write_bundle(
        run_dir=run_dir, manifest=manifest, files=files, signing_key=new_signing_key(), out_path=tmp_path / "b"
    )
    derived = rederive_steady_state(verify_bundle(bundle, extract_to=tmp_path / "x"))
    entry = next(e for e in derived if e["variable"] == "iops.total_iops.rw000.bs4096")
    assert entry["steady"] is False
    assert victim["id"] in entry["reason"]
    assert entry["window"] is None


def _hostile(tmp_path, extra_members):
    """A well-signed minimal bundle plus `extra_members` (TarInfo, bytes) pairs."""
    return write_tar_gz(tmp_path / "hostile.nvmedb.tar.gz", signed_manifest_members() + extra_members)


@pytest.mark.parametrize(
    "name",
    ["files/a\nb.json", "files/" + "a" * 256, "files/" + "d/" * 600 + "x", "./files/a.json", "files//a.json"],
)
def test_member_names_with_control_characters_or_absurd_lengths_are_unsafe(tmp_path, name):
    bundle = _hostile(tmp_path, [(tarfile.TarInfo(name), b"{}")])
    with pytest.raises(BundleError) as caught:
        verify_bundle(bundle, extract_to=tmp_path / "x", limits=SMALL_LIMITS)
    assert caught.value.code == "unsafe_path"


def test_a_file_that_would_become_a_directory_is_refused(tmp_path):
    bundle = _hostile(tmp_path, [(tarfile.TarInfo("files/a"), b"1"), (tarfile.TarInfo("files/a/b"), b"2")])
    with pytest.raises(BundleError) as caught:
        verify_bundle(bundle, extract_to=tmp_path / "x", limits=SMALL_LIMITS)
    assert caught.value.code == "unsafe_path"
    assert "collides" in caught.value.message


def test_members_outside_files_are_extra(tmp_path):
    bundle = _hostile(tmp_path, [(tarfile.TarInfo("README"), b"hi")])
    with pytest.raises(BundleError) as caught:
        verify_bundle(bundle, extract_to=tmp_path / "x", limits=SMALL_LIMITS)
    assert caught.value.code == "extra_file"


def test_directory_members_count_toward_the_file_limit(tmp_path):
    directories = []
    for index in range(SMALL_LIMITS.max_files + 1):
        info = tarfile.TarInfo(f"files/d{index}")
        info.type = tarfile.DIRTYPE
        directories.append((info, None))
    bundle = _hostile(tmp_path, directories)
    with pytest.raises(BundleError) as caught:
        verify_bundle(bundle, extract_to=tmp_path / "x", limits=SMALL_LIMITS)
    assert caught.value.code == "too_many_files"


def test_a_truncated_archive_is_not_an_archive(tmp_path, samples):
    bundle = make_bundle(tmp_path, fio_samples=samples)
    data = bundle.read_bytes()
    bundle.write_bytes(data[: len(data) // 2])
    with pytest.raises(BundleError) as caught:
        verify_bundle(bundle, extract_to=tmp_path / "x")
    assert caught.value.code == "not_an_archive"


def test_a_hostile_fio_output_inside_a_signed_bundle_is_recorded_not_crashed_on(tmp_path, samples):
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    victim = next(run for run in manifest["runs"] if run["read_pct"] == 65 and run["round"] == 2)
    (run_dir / victim["output_file"]).write_text('{"fio version": "fio-3.33", "jobs": [{"read": {"iops": "many"}}]}')
    bundle = write_bundle(
        run_dir=run_dir, manifest=manifest, files=files, signing_key=new_signing_key(), out_path=tmp_path / "b"
    )
    derived = rederive_steady_state(verify_bundle(bundle, extract_to=tmp_path / "x"))
    entry = next(e for e in derived if e["variable"] == "iops.total_iops.rw065.bs65536")
    assert not entry["steady"] and victim["id"] in entry["reason"]


# --- format 2: declared system files, and the writer as a library -----------------------------------------------


def _v2(run_dir, manifest, files, declared):
    (run_dir / "system").mkdir(exist_ok=True)
    for path in declared:
        (run_dir / path).write_text("{}\n")
    files += list(declared)
    manifest["format_version"] = 2
    manifest["system"] = {"files": [{"path": p, "kind": k} for p, k in declared.items()], "pci_path": ["0000:3b:00.0"]}


def test_a_format_2_bundle_declares_its_system_files_and_verifies(tmp_path, samples):
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    _v2(run_dir, manifest, files, {"system/identify-controller.json": "nvme-id-ctrl", "system/host.json": "facts"})
    bundle = write_bundle(
        run_dir=run_dir,
        manifest=manifest,
        files=files,
        signing_key=new_signing_key(),
        out_path=tmp_path / "b.nvmedb.tar.gz",
    )
    verified = verify_bundle(bundle, extract_to=tmp_path / "x")
    assert verified.manifest["format_version"] == 2
    assert verified.manifest["system"]["files"][0] == {
        "path": "system/identify-controller.json",
        "kind": "nvme-id-ctrl",
    }


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda m: m.pop("system"), "'system' is a required property"),
        (lambda m: m["system"]["files"].append({"path": "system/gone.json", "kind": "lshw"}), "system/gone.json"),
        (
            lambda m: m["system"]["files"].append({"path": "system/host.json", "kind": "nvme-id-ctrl"}),
            "two nvme-id-ctrl",
        ),
        (lambda m: m["system"]["files"][0].update(kind="identify"), "'identify' is not one of"),
        (lambda m: m["system"].update(pci_path=["3b:00"]), "pci_path"),
    ],
)
def test_a_format_2_manifest_with_unsound_system_declarations_is_refused(tmp_path, samples, change, problem):
    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    _v2(run_dir, manifest, files, {"system/id.json": "nvme-id-ctrl", "system/host.json": "facts"})
    change(manifest)
    with pytest.raises(BundleError) as refused:
        write_bundle(
            run_dir=run_dir,
            manifest=manifest,
            files=files,
            signing_key=new_signing_key(),
            out_path=tmp_path / "b.nvmedb.tar.gz",
        )
    assert refused.value.code == "bad_manifest" and problem in refused.value.message
    # a reader refuses the same manifest when another writer signs it
    listed = [
        {
            "path": p,
            "size": (run_dir / p).stat().st_size,
            "sha256": hashlib.sha256((run_dir / p).read_bytes()).hexdigest(),
        }
        for p in sorted(files)
    ]
    members = signed_manifest_members({**manifest, "files": listed})
    members += [(tarfile.TarInfo(f"files/{p}"), (run_dir / p).read_bytes()) for p in sorted(files)]
    with pytest.raises(BundleError) as read:
        verify_bundle(write_tar_gz(tmp_path / "other.nvmedb.tar.gz", members), extract_to=tmp_path / "x")
    assert read.value.code == "bad_manifest" and problem in read.value.message


def test_the_library_writer_packs_a_whole_directory_and_a_format_1_bundle_is_still_read(tmp_path, samples):
    from nvmedb_client.signing import create_signing_key, key_path, load_signing_key

    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    _v2(run_dir, manifest, files, {"system/lspci.txt": "lspci-vvv"})
    create_signing_key(tmp_path / "keys")
    key = load_signing_key(key_path(tmp_path / "keys"))
    bundle = write_bundle(run_dir=run_dir, manifest=manifest, signing_key=key, out_path=tmp_path / "b.nvmedb.tar.gz")
    assert [e["path"] for e in verify_bundle(bundle, extract_to=tmp_path / "x").manifest["files"]] == sorted(files)

    old = make_bundle(tmp_path, name="v1.nvmedb.tar.gz")
    assert verify_bundle(old, extract_to=tmp_path / "y").manifest["format_version"] == 1


def test_the_docs_the_schema_and_the_code_name_the_same_system_file_kinds():
    import re
    from pathlib import Path

    from nvmedb_client.bundle import manifest_schema
    from nvmedb_client.system.collect import FILE_KINDS
    from nvmedb_client.system_files import KINDS

    docs = (Path(__file__).resolve().parents[2] / "docs" / "bundle-format.md").read_text()
    section = docs[docs.index("### `system`") : docs.index("`system.pci_path`")]
    documented = re.findall(r"^\| `([a-z0-9-]+)` \|", section, flags=re.MULTILINE)
    assert documented == list(KINDS)
    assert manifest_schema()["$defs"]["system_file"]["properties"]["kind"]["enum"] == list(KINDS)
    assert set(FILE_KINDS.values()) <= set(KINDS) - {"other"}  # the client gives every file it writes a real kind
