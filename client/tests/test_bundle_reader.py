"""The fast paths of bundle verification give what the plain ones give: ForwardReader's members are tarfile's
stream reader's, byte for byte, read at the same moments; is_plain_path accepts only what check_relative_path
accepts."""

from __future__ import annotations

import io
import random
import tarfile

import pytest

from nvmedb_client.bundle_files import ForwardReader, member_bytes
from nvmedb_client.bundle_format import BundleError, check_relative_path, is_plain_path


class _Logged:
    """A stream that records the size and position of every read."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)
        self.reads: list[tuple[int, int]] = []

    def read(self, size: int) -> bytes:
        self.reads.append((size, self._data.tell()))
        return self._data.read(size)


def _archive(sizes: list[int]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for n, size in enumerate(sizes):
            info = tarfile.TarInfo(f"files/d{n % 3}/{'x' * (n * 7 % 150)}{n}.bin")
            info.size = size
            archive.addfile(info, io.BytesIO(bytes(random.Random(n).randrange(256) for _ in range(size))))
    return out.getvalue()


def _members(data: bytes, fast: bool) -> tuple[list, list]:
    stream = _Logged(data)
    found, reads_at = [], []
    opened = (
        tarfile.TarFile(fileobj=ForwardReader(stream), mode="r") if fast else tarfile.open(fileobj=stream, mode="r|")  # noqa: SIM115 (closed by the with below)
    )
    with opened as archive:
        for member in archive:
            reads_at.append(len(stream.reads))
            found.append(
                (
                    member.name,
                    member.size,
                    member_bytes(archive, member) if fast else archive.extractfile(member).read(),
                )
            )
    return found, stream.reads + reads_at


@pytest.mark.parametrize("cut", [None, 0, 700, 10240, 10241, 30000, 51200])
def test_forward_reader_reads_as_tarfiles_stream_reader(cut):
    data = _archive([0, 1, 511, 512, 513, 10240, 25000, 3, 70000])
    data = data if cut is None else data[:cut]

    def outcome(fast):
        try:
            return _members(data, fast)
        except tarfile.TarError as exc:
            return type(exc), str(exc)

    assert outcome(True) == outcome(False)


def test_forward_reader_refuses_to_seek_back():
    reader = ForwardReader(io.BytesIO(b"a" * 20000))
    reader.read(600)
    with pytest.raises(tarfile.StreamError, match="seeking backwards"):
        reader.seek(599)
    assert reader.read(-100) == b"a" * (10240 - 600 - 100)  # a negative size slices what is held, as tarfile's does


@pytest.mark.parametrize(
    "path",
    [
        "a",
        "a/b.json",
        ".",
        "..",
        "...",
        ".a",
        "a/./b",
        "a/../b",
        "a/..",
        "a/",
        "/a",
        "a//b",
        "a\\b",
        "c:x",
        "a b",
        "x" * 255,
        "x" * 256,
        "é",
        "a/" + "x" * 1030,
        "a\n",
        "..a/b",
        "fio/run-1_x.json",
    ],
)
def test_plain_paths_pass_the_full_check(path):
    try:
        check_relative_path(path)
        accepted = True
    except BundleError:
        accepted = False
    assert not is_plain_path(path) or accepted
    assert is_plain_path(path) == (path in {"a", "a/b.json", "...", ".a", "x" * 255, "..a/b", "fio/run-1_x.json"})
