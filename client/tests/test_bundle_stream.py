"""Verifying a bundle from a stream, files held in memory: the same verdicts as extracting it, nothing on disk."""

import io
import tarfile
import tempfile
from pathlib import Path

import pytest

from bundle_factory import (
    MALICIOUS_KINDS,
    SMALL_LIMITS,
    TAMPERINGS,
    default_fio_samples,
    make_bundle,
    malicious_bundle,
    signed_manifest_members,
    write_tar_gz,
)
from nvmedb_client.bundle import BundleError, BundleLimits, verify_bundle, verify_bundle_stream


class PipeLike(io.RawIOBase):
    """A stream that can only be read forwards and cannot tell its size, like a socket or a remote object's body."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        chunk = self._data.read(min(len(buffer), 7000))  # short reads, as a network stream gives
        buffer[: len(chunk)] = chunk
        return len(chunk)


@pytest.fixture
def samples(shared_samples):
    return default_fio_samples(shared_samples)


def temporary_dirs(prefix: str) -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob(f"{prefix}*"))


def test_a_streamed_bundle_reads_the_same_files_as_an_extracted_one_and_writes_nothing(tmp_path, samples):
    bundle = make_bundle(tmp_path, fio_samples=samples)
    extracted = verify_bundle(bundle, extract_to=tmp_path / "x")
    before = sorted(tmp_path.rglob("*"))
    with verify_bundle_stream(PipeLike(bundle.read_bytes()), spill_prefix="nvmedb-test-stream-") as streamed:
        assert streamed.root is None
        assert streamed.manifest == extracted.manifest
        assert streamed.public_key == extracted.public_key
        for entry in streamed.manifest["files"]:
            assert streamed.read_bytes(entry["path"]) == extracted.read_bytes(entry["path"])
            with streamed.open(entry["path"]) as stream:
                assert stream.read() == extracted.read_bytes(entry["path"])
        with pytest.raises(KeyError):
            streamed.read_bytes("not/listed.json")
    assert sorted(tmp_path.rglob("*")) == before
    assert not temporary_dirs("nvmedb-test-stream-")


def test_files_beyond_the_memory_budget_wait_under_numbered_names_and_are_removed_on_close(tmp_path, samples):
    bundle = make_bundle(tmp_path, fio_samples=samples)
    first = min(entry["size"] for entry in verify_bundle(bundle, extract_to=tmp_path / "x").manifest["files"])
    limits = BundleLimits(max_memory_bytes=first)
    before = temporary_dirs("nvmedb-test-spill-")
    with bundle.open("rb") as raw, verify_bundle_stream(raw, limits=limits, spill_prefix="nvmedb-test-spill-") as held:
        (directory,) = temporary_dirs("nvmedb-test-spill-") - before
        spilled = sorted(p.name for p in directory.iterdir())
        assert spilled and all(name.isdigit() for name in spilled), "no path from the bundle reaches the disk"
        assert held.files.held <= first
        for entry in held.manifest["files"]:
            assert held.read_bytes(entry["path"]) == (tmp_path / "x" / "files" / entry["path"]).read_bytes()
    assert temporary_dirs("nvmedb-test-spill-") == before


@pytest.mark.parametrize("kind", sorted(MALICIOUS_KINDS))
def test_each_hostile_archive_is_refused_from_a_stream_with_its_own_code(tmp_path, kind):
    limits = BundleLimits() if kind == "bomb" else SMALL_LIMITS
    bundle = malicious_bundle(tmp_path, kind, limits=limits)
    with pytest.raises(BundleError) as caught:
        verify_bundle_stream(PipeLike(bundle.read_bytes()), limits=limits)
    assert caught.value.code == MALICIOUS_KINDS[kind]


@pytest.mark.parametrize("tamper", sorted(TAMPERINGS))
def test_each_tampering_is_caught_from_a_stream_with_its_own_code(tmp_path, samples, tamper):
    bundle = make_bundle(tmp_path, fio_samples=samples, tamper=tamper)
    with pytest.raises(BundleError) as caught, bundle.open("rb") as raw:
        verify_bundle_stream(raw)
    assert caught.value.code == TAMPERINGS[tamper]


def test_the_ratio_limit_holds_for_a_stream_of_unknown_size(tmp_path):
    bundle = malicious_bundle(tmp_path, "bomb", limits=BundleLimits())
    with pytest.raises(BundleError, match="decompression bomb"):
        verify_bundle_stream(PipeLike(bundle.read_bytes()), limits=BundleLimits())


def test_a_file_and_a_folder_of_the_same_name_collide_in_memory_too(tmp_path):
    members = [(tarfile.TarInfo("files/a"), b"1"), (tarfile.TarInfo("files/a/b"), b"2")]
    for order in (members, members[::-1]):
        bundle = write_tar_gz(tmp_path / "hostile.nvmedb.tar.gz", signed_manifest_members() + order)
        with pytest.raises(BundleError) as caught:
            verify_bundle_stream(PipeLike(bundle.read_bytes()), limits=SMALL_LIMITS)
        assert caught.value.code == "unsafe_path"
        assert "collides" in caught.value.message


def test_a_stream_that_is_not_gzip_is_not_an_archive():
    with pytest.raises(BundleError) as caught:
        verify_bundle_stream(io.BytesIO(b"PK\x03\x04 a zip file"), name="upload.zip")
    assert caught.value.code == "not_an_archive"
    assert "upload.zip" in caught.value.message
