"""Build good and bad nvmedb bundles for tests, from the real fio outputs in ../shared/samples.

Public API (the server's intake tests import it too):

    default_fio_samples(samples_dir=None) -> list[Path]
        the SSSPT IOPS rounds 1-5 of the three IOPS tracking variables (15 real fio-3.8 json+ files)
    new_signing_key() -> Ed25519PrivateKey
    make_run_dir(tmp_path, fio_samples) -> (run_dir, manifest, files)
        a run directory holding the samples as fio outputs plus job files; `manifest` has no "files" yet
    make_bundle(tmp_path, *, fio_samples=None, signing_key=None, tamper=None, manifest_changes=None,
                name="run.nvmedb.tar.gz") -> Path
        a signed bundle; `tamper` is one of TAMPERINGS (each breaks exactly one rule, see TAMPERINGS for the code)
    malicious_bundle(tmp_path, kind, *, limits=SMALL_LIMITS) -> Path
        a hostile archive; MALICIOUS_KINDS maps each kind to the BundleError code verify_bundle must raise
        (pass the same `limits` to verify_bundle; the "bomb" kind needs the default BundleLimits())
    write_tar_gz(path, members) -> Path
        a raw tar.gz from (TarInfo, bytes | None) pairs, for shapes the helpers above do not cover
    signed_manifest_members(manifest=None, key=None) -> list[(TarInfo, bytes)]
        manifest.json + manifest.sig.json members (a minimal valid manifest listing no files by default),
        to start a hand-made archive with: write_tar_gz(path, signed_manifest_members() + [...])
    read_members(bundle) -> list[(TarInfo, bytes | None)]
        every member of a factory-made bundle with its bytes
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import re
import tarfile
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nvmedb_client import __version__
from nvmedb_client.bundle import (
    MANIFEST_NAME,
    SIGNATURE_NAME,
    BundleLimits,
    encode_manifest,
    write_bundle,
)
from nvmedb_client.fio_output import FioOutputError, parse_fio_output, summarize
from nvmedb_client.signing import public_key_bytes, sign
from nvmedb_client.tracking import evaluate_runs

SHARED_SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples"
CREATED_AT = "2026-11-22T10:00:00Z"
KIB = 1024
SSSPT_NAME = re.compile(r"wdpc_bs(?P<bs>\d+)(?P<unit>KB|B)_read(?P<read>\d+)_round(?P<round>\d+)\.json$")
# (block size name, read %) of the three IOPS tracking variables in the SSSPT sample run
SSSPT_TRACKING = (("4KB", 0), ("64KB", 65), ("1024KB", 100))

SMALL_LIMITS = BundleLimits(
    max_total_bytes=4 * 1024 * 1024,
    max_file_bytes=256 * KIB,
    max_files=40,
    max_compression_ratio=200,
    max_manifest_bytes=256 * KIB,
)

# tamper -> the BundleError code verify_bundle raises for it
TAMPERINGS = {
    "changed_byte": "hash_mismatch",  # one byte of a fio output flipped
    "truncated_file": "size_mismatch",  # a fio output shortened by one byte
    "missing_file": "missing_file",  # a listed file left out of the archive
    "extra_file": "extra_file",  # an unlisted file added under files/
    "changed_manifest": "bad_signature",  # one byte of manifest.json changed, signature kept
    "wrong_key": "bad_signature",  # signature kept, public key replaced by another key's
}

# kind -> the BundleError code verify_bundle raises for it
MALICIOUS_KINDS = {
    "symlink": "link_member",
    "hardlink": "link_member",
    "dotdot_path": "unsafe_path",
    "absolute_path": "unsafe_path",
    "char_device": "special_member",
    "fifo": "special_member",
    "duplicate_member": "duplicate_member",
    "oversized_file": "too_large",
    "oversized_manifest": "too_large",
    "too_many_files": "too_many_files",
    "bomb": "compression_ratio",
    "bad_manifest_json": "bad_manifest",
    "schema_violation": "bad_manifest",
    "not_an_archive": "not_an_archive",
    "gzip_not_tar": "not_an_archive",
}


def default_fio_samples(samples_dir: Path | None = None) -> list[Path]:
    directory = (samples_dir or SHARED_SAMPLES) / "ssspt-hp-iops-1"
    if not directory.is_dir():
        raise FileNotFoundError(f"the shared SSSPT samples are not at {directory}")
    return [directory / f"wdpc_bs{bs}_read{read}_round{n}.json" for n in range(1, 6) for bs, read in SSSPT_TRACKING]


def new_signing_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def make_run_dir(tmp_path: Path, fio_samples: list[Path]) -> tuple[Path, dict, list[str]]:
    """A run directory with each sample as a run's fio output, and the manifest (without "files") describing it.

    SSSPT-named samples (wdpc_bs<BS>_read<MIX>_round<N>.json) become IOPS measurement rounds with their block size,
    mix and round; any other sample becomes a WIPC run (kept as raw data, not part of a steady-state series).
    """
    run_dir = tmp_path / "run"
    (run_dir / "fio").mkdir(parents=True)
    (run_dir / "jobs").mkdir()
    runs = []
    files = []
    summaries = {}
    versions = set()
    for index, sample in enumerate(fio_samples, start=1):
        data = sample.read_bytes()
        run = _run_for_sample(sample, index, data)
        (run_dir / run["output_file"]).write_bytes(data)
        (run_dir / run["job_file"]).write_text(_job_file(run))
        files += [run["job_file"], run["output_file"]]
        runs.append(run)
        try:
            summary = summarize(parse_fio_output(data))
        except FioOutputError:
            continue
        summaries[run["id"]] = summary
        versions.add(summary.fio_version)
    # Runs in the order fio ran them, so their times line up the way a real client's do.
    runs.sort(key=lambda run: run["started_at"])
    manifest = {
        "format_version": 1,
        "client": {"name": "nvmedb-client", "version": __version__},
        "created_at": CREATED_AT,
        "profile": "quick",
        "edition": "enterprise",
        "compliance": {
            "compliant": False,
            "reasons": [
                "profile quick is for trying the tool, not a PTS result",
                "file target: a file on a filesystem is measured, not a drive",
            ],
        },
        "target": {
            "kind": "file",
            "path": "/srv/scratch/nvmedb-target",
            "size_bytes": 256 * 1024 * 1024,
            "active_range_bytes": 256 * 1024 * 1024,
        },
        "plan": _plan_for_runs(runs),
        "timing": {"started_at": runs[0]["started_at"], "finished_at": runs[-1]["finished_at"]},
        "tools": {"fio": sorted(v for v in versions if v)[-1] if any(versions) else None, "nvme-cli": None},
        "runs": runs,
        "steady_state": evaluate_runs(runs, summaries),
    }
    return run_dir, manifest, files


def _run_for_sample(sample: Path, index: int, data: bytes) -> dict:
    """The manifest run entry for one sample, with the threads, depth, runtime and times its fio output records."""
    match = SSSPT_NAME.search(sample.name)
    if match:
        size = int(match["bs"]) * (KIB if match["unit"] == "KB" else 1)
        read_pct = int(match["read"])
        round_number = int(match["round"])
        run_id = f"iops-r{round_number:02d}-rw{read_pct:03d}-bs{size}"
        test, phase, pattern = "iops", "wdpc", "randrw"
    else:
        size, read_pct, round_number = 128 * KIB, 0, index
        run_id = f"iops-wipc-{index:03d}"
        test, phase, pattern = "iops", "wipc", "write"
    options, finished_epoch = _sample_facts(data)
    runtime_s = _seconds(options.get("runtime")) or 60
    finished_epoch = finished_epoch or 1_763_805_600 + index * (runtime_s + 1)
    return {
        "id": run_id,
        "test": test,
        "phase": phase,
        "round": round_number,
        "pattern": options.get("rw", pattern),
        "block_size_bytes": size,
        "read_pct": read_pct,
        "threads": int(options.get("numjobs", 1)),
        "iodepth": int(options.get("iodepth", 1)),
        "runtime_s": runtime_s,
        "job_file": f"jobs/{run_id}.fio",
        "output_file": f"fio/{run_id}.json",
        "smart_before": None,
        "smart_after": None,
        "started_at": _iso(finished_epoch - runtime_s - 0.5),
        "finished_at": _iso(finished_epoch + 0.5),
    }


def _sample_facts(data: bytes) -> tuple[dict, int | None]:
    """The first job's options (global options under them) and fio's finish time, from a fio JSON output."""
    try:
        doc = parse_fio_output(data)
    except FioOutputError:
        return {}, None
    jobs = doc.get("jobs") or [{}]
    options = {**(doc.get("global options") or {}), **(jobs[0].get("job options") or {})}
    timestamp = doc.get("timestamp")
    return options, int(timestamp) if isinstance(timestamp, (int, float)) else None


def _seconds(text: str | None) -> int | None:
    match = re.fullmatch(r"(\d+)\s*(s|m)?", (text or "").strip())
    if not match:
        return None
    return int(match[1]) * (60 if match[2] == "m" else 1)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _plan_for_runs(runs: list[dict]) -> dict:
    """A plan with one block per test whose series hold exactly the cells, threads, depth and runtime of the runs."""
    blocks: dict[str, dict] = {}
    for run in runs:
        block = blocks.setdefault(
            run["test"], {"test": run["test"], "label": run["test"], "purge": True, "wipc": None, "series": []}
        )
        if run["phase"] == "wipc":
            block["wipc"] = {"run_id": run["id"], "threads": run["threads"]}
            continue
        series = next((s for s in block["series"] if s["phase"] == run["phase"]), None)
        if series is None:
            series = {
                "phase": run["phase"],
                "threads": run["threads"],
                "iodepth": run["iodepth"],
                "runtime_s": run["runtime_s"],
                "max_rounds": 25,
                "cells": [],
                "tracking_variables": [],
            }
            block["series"].append(series)
        cell = {"pattern": run["pattern"], "block_size_bytes": run["block_size_bytes"], "read_pct": run["read_pct"]}
        if cell not in series["cells"]:
            series["cells"].append(cell)
    return {"profile": {"name": "quick"}, "tests": sorted(blocks), "blocks": list(blocks.values())}


def _job_file(run: dict) -> str:
    return (
        f"[{run['id']}]\nrw={run['pattern']}\nrwmixread={run['read_pct']}\nbs={run['block_size_bytes']}\n"
        f"numjobs={run['threads']}\niodepth={run['iodepth']}\nruntime={run['runtime_s']}\ntime_based=1\ndirect=1\n"
    )


def make_bundle(
    tmp_path: Path,
    *,
    fio_samples: list[Path] | None = None,
    signing_key: Ed25519PrivateKey | None = None,
    tamper: str | None = None,
    manifest_changes: dict | None = None,
    name: str = "run.nvmedb.tar.gz",
) -> Path:
    """A bundle signed by `signing_key` (a fresh key when None), optionally broken by one of TAMPERINGS."""
    if tamper is not None and tamper not in TAMPERINGS:
        raise ValueError(f"unknown tampering {tamper!r}; choose from {sorted(TAMPERINGS)}")
    work = tmp_path / f"factory-{name}"
    work.mkdir(parents=True)
    run_dir, manifest, files = make_run_dir(work, fio_samples or default_fio_samples())
    manifest.update(manifest_changes or {})
    key = signing_key or new_signing_key()
    good = write_bundle(
        run_dir=run_dir, manifest=manifest, files=files, signing_key=key, out_path=work / "good.nvmedb.tar.gz"
    )
    out_path = tmp_path / name
    if tamper is None:
        good.replace(out_path)
        return out_path
    _rewrite(good, out_path, _TAMPER[tamper])
    return out_path


def _first_fio(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> int:
    return next(i for i, (info, _) in enumerate(members) if info.name.startswith("files/fio/"))


def _change_byte(members):
    index = _first_fio(members)
    info, data = members[index]
    middle = len(data) // 2
    members[index] = (info, data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :])


def _truncate(members):
    index = _first_fio(members)
    info, data = members[index]
    members[index] = (info, data[:-1])


def _drop_file(members):
    del members[_first_fio(members)]


def _add_file(members):
    members.append((tarfile.TarInfo("files/fio/unlisted.json"), b"{}\n"))


def _change_manifest(members):
    index = next(i for i, (info, _) in enumerate(members) if info.name == MANIFEST_NAME)
    info, data = members[index]
    members[index] = (info, data.replace(b'"quick"', b'"pts"  ', 1))


def _replace_key(members):
    index = next(i for i, (info, _) in enumerate(members) if info.name == SIGNATURE_NAME)
    info, data = members[index]
    document = json.loads(data)
    document["public_key"] = base64.b64encode(public_key_bytes(new_signing_key())).decode()
    members[index] = (info, json.dumps(document).encode())


_TAMPER: dict[str, Callable] = {
    "changed_byte": _change_byte,
    "truncated_file": _truncate,
    "missing_file": _drop_file,
    "extra_file": _add_file,
    "changed_manifest": _change_manifest,
    "wrong_key": _replace_key,
}


def read_members(bundle: Path) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    """Every member of a trusted (factory-made) bundle with its bytes."""
    with tarfile.open(bundle, "r:gz") as archive:
        return [(info, archive.extractfile(info).read() if info.isreg() else None) for info in archive.getmembers()]


def _rewrite(source: Path, target: Path, change: Callable) -> None:
    members = read_members(source)
    change(members)
    write_tar_gz(target, members)


def write_tar_gz(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    """A tar.gz of exactly these members; each TarInfo's size is set from its bytes."""
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
            else:
                archive.addfile(info)
    return path


def signed_manifest_members(manifest: dict | None = None, key: Ed25519PrivateKey | None = None) -> list:
    manifest = manifest if manifest is not None else _minimal_manifest()
    key = key or new_signing_key()
    manifest_bytes = encode_manifest(manifest)
    signature = {
        "algorithm": "ed25519",
        "public_key": base64.b64encode(public_key_bytes(key)).decode(),
        "signature": base64.b64encode(sign(key, manifest_bytes)).decode(),
    }
    return [
        (tarfile.TarInfo(MANIFEST_NAME), manifest_bytes),
        (tarfile.TarInfo(SIGNATURE_NAME), json.dumps(signature).encode()),
    ]


def _minimal_manifest(files: list[dict] | None = None) -> dict:
    return {
        "format_version": 1,
        "client": {"name": "nvmedb-client", "version": __version__},
        "created_at": CREATED_AT,
        "profile": "quick",
        "edition": "client",
        "compliance": {"compliant": False, "reasons": ["test bundle"]},
        "target": {"kind": "file", "path": "/srv/scratch/t", "size_bytes": 1, "active_range_bytes": 1},
        "plan": {},
        "timing": {"started_at": CREATED_AT, "finished_at": CREATED_AT},
        "tools": {"fio": None},
        "runs": [],
        "steady_state": [],
        "files": files or [],
    }


def _typed(name: str, kind: bytes, **attributes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in attributes.items():
        setattr(info, key, value)
    return info


def malicious_bundle(tmp_path: Path, kind: str, *, limits: BundleLimits = SMALL_LIMITS) -> Path:
    """A hostile archive of `kind` (see MALICIOUS_KINDS); verify with the same `limits`."""
    if kind not in MALICIOUS_KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose from {sorted(MALICIOUS_KINDS)}")
    path = tmp_path / f"{kind}.nvmedb.tar.gz"
    if kind == "not_an_archive":
        path.write_text("this is a plain text file, not a bundle\n")
        return path
    if kind == "gzip_not_tar":
        path.write_bytes(gzip.compress(b"a gzip stream whose content is not a tar archive\n" * 40))
        return path
    if kind == "bomb":
        return write_tar_gz(path, signed_manifest_members(_minimal_manifest()) + _zeros_member(16 * 1024 * 1024))

    members = signed_manifest_members(_minimal_manifest())
    if kind == "symlink":
        members.append((_typed("files/fio/evil.json", tarfile.SYMTYPE, linkname="/etc/passwd"), None))
    elif kind == "hardlink":
        members.append((_typed("files/fio/evil.json", tarfile.LNKTYPE, linkname=MANIFEST_NAME), None))
    elif kind == "dotdot_path":
        members.append((tarfile.TarInfo("files/../../evil.json"), b"{}"))
    elif kind == "absolute_path":
        members.append((tarfile.TarInfo("/tmp/nvmedb-evil.json"), b"{}"))
    elif kind == "char_device":
        members.append((_typed("files/null", tarfile.CHRTYPE, devmajor=1, devminor=3), None))
    elif kind == "fifo":
        members.append((_typed("files/pipe", tarfile.FIFOTYPE), None))
    elif kind == "duplicate_member":
        members += [(tarfile.TarInfo("files/a.json"), b"{}"), (tarfile.TarInfo("files/a.json"), b"[]")]
    elif kind == "oversized_file":
        members.append((tarfile.TarInfo("files/big.bin"), _incompressible(limits.max_file_bytes + 1)))
    elif kind == "oversized_manifest":
        manifest = _minimal_manifest()
        manifest["plan"] = {"padding": "x" * limits.max_manifest_bytes}
        members = signed_manifest_members(manifest)
    elif kind == "too_many_files":
        members += [(tarfile.TarInfo(f"files/f{i:05d}.txt"), b"%d\n" % i) for i in range(limits.max_files + 1)]
    elif kind == "bad_manifest_json":
        members[0] = (tarfile.TarInfo(MANIFEST_NAME), b'{"format_version": 1, "client": ')
    elif kind == "schema_violation":
        manifest = _minimal_manifest()
        manifest["profile"] = "fast"
        members = signed_manifest_members(manifest)
    return write_tar_gz(path, members)


def _zeros_member(size: int) -> list:
    return [(tarfile.TarInfo("files/zeros.bin"), bytes(size))]


def _incompressible(size: int) -> bytes:
    blocks = []
    counter = 0
    while sum(len(b) for b in blocks) < size:
        blocks.append(hashlib.sha256(b"%d" % counter).digest())
        counter += 1
    return b"".join(blocks)[:size]
