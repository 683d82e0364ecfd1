"""Writing a signed bundle from a run directory: the files hashed as they are packed, the canonical manifest and its
Ed25519 signature (docs/bundle-format.md)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nvmedb_client import signing
from nvmedb_client.bundle_format import (
    CHUNK_BYTES,
    FILES_DIR,
    MANIFEST_NAME,
    SIGNATURE_NAME,
    BundleError,
    check_relative_path,
    encode_manifest,
    manifest_errors,
    parse_timestamp,
    version_problems,
)


def write_bundle(
    *,
    run_dir: Path,
    manifest: dict,
    signing_key: Ed25519PrivateKey,
    out_path: Path,
    files: Iterable[str] | None = None,
) -> Path:
    """Write a signed bundle of the files in `run_dir` to `out_path`, atomically; returns `out_path`.

    This is the reference writer, usable by any tool (docs/bundle-format.md has an example). `run_dir` holds the
    bundle's files as they go under `files/` (e.g. `fio/iops-r01-rw000-bs4096.json`, `system/id-ctrl.json`);
    `files` names the ones to pack (paths relative to `run_dir`), every regular file under it when None.
    `manifest` is everything but "files", which this computes (size and SHA-256 of each file, sorted by path);
    it must match the schema and, in format 2, declare every file under `system/` with its kind.
    `signing_key` is an Ed25519 private key (`nvmedb_client.signing.load_signing_key` reads a PEM file).
    Raises BundleError (`code` and a sentence) when the manifest or a file would make a bundle readers refuse.
    """
    run_dir = Path(run_dir)
    if files is None:
        files = [
            path.relative_to(run_dir).as_posix()
            for path in run_dir.rglob("*")
            if path.is_file() and not path.is_symlink()
        ]
    paths = sorted(set(files))
    for path in paths:
        check_relative_path(path)
        source = run_dir / path
        if source.is_symlink() or not source.is_file():
            raise BundleError("missing_file", f"{path} is not a regular file in {run_dir}")
    entries = [_describe_file(run_dir / path, path) for path in paths]
    complete = {**manifest, "files": entries}
    problems = manifest_errors(complete)
    if problems:
        raise BundleError("bad_manifest", "the manifest does not match the schema: " + "; ".join(problems[:5]))
    problems = version_problems(complete)
    if problems:
        raise BundleError("bad_manifest", "; ".join(problems[:5]))
    manifest_bytes = encode_manifest(complete)
    public_key = signing.public_key_bytes(signing_key)
    signature_bytes = json.dumps(
        {
            "algorithm": "ed25519",
            "public_key": base64.b64encode(public_key).decode("ascii"),
            "signature": base64.b64encode(signing.sign(signing_key, manifest_bytes)).decode("ascii"),
        },
        indent=2,
    ).encode()
    mtime = int(parse_timestamp(complete["created_at"]).timestamp())

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            with (
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime) as compressed,
                tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive,
            ):
                _add_bytes(archive, MANIFEST_NAME, manifest_bytes, mtime)
                _add_bytes(archive, SIGNATURE_NAME, signature_bytes, mtime)
                for entry in entries:
                    _add_file(archive, run_dir / entry["path"], entry, mtime)
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, out_path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return out_path


def _describe_file(source: Path, path: str) -> dict:
    digest = hashlib.sha256()
    size = 0
    with source.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
    return {"path": path, "size": size, "sha256": digest.hexdigest()}


def _tar_info(name: str, size: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = mtime
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes, mtime: int) -> None:
    archive.addfile(_tar_info(name, len(data), mtime), io.BytesIO(data))


def _add_file(archive: tarfile.TarFile, source: Path, entry: dict, mtime: int) -> None:
    with source.open("rb") as handle:
        reader = _HashingReader(handle)
        archive.addfile(_tar_info(f"{FILES_DIR}/{entry['path']}", entry["size"], mtime), reader)
    if reader.hexdigest() != entry["sha256"]:
        raise BundleError("hash_mismatch", f"{entry['path']} changed while the bundle was being written")


class _HashingReader:
    def __init__(self, handle):
        self._handle = handle
        self._digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self._handle.read(size)
        self._digest.update(data)
        return data

    def hexdigest(self) -> str:
        return self._digest.hexdigest()
