"""Seeded fuzzing of every reader a bundle reaches: mutated real fio, nvme-cli, lshw and lspci outputs through their
parsers and the cross-checks, and re-signed mutated bundles through verify_bundle, read_bundle and the column
checks. Only the project's own errors may come out (FioOutputError, NvmeParseError, LshwParseError, BundleError);
the cross-checks, the hardware readers and read_bundle must not raise at all (read_bundle's UnreadableBundle is the
production safety net, and a fuzz case reaching it is a crash site to fix).

Bounded for CI (~20 s); NVMEDB_FUZZ_ITERATIONS multiplies the cases and NVMEDB_FUZZ_SEED changes them, to search
longer by hand. A case that ever fails is kept in test_fuzz_regressions.py.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import traceback
from pathlib import Path

import pytest

from analysis import columns, crosscheck, thermal
from analysis.bundle_reader import read_bundle
from analysis.bundle_system import link_end
from analysis.identity import identity_from_id_ctrl
from analysis.pcie import assess_link
from analysis.tests import bundles
from analysis.tests.mutate import mutate_document, mutate_text, mutated_json_text
from analysis.values import optional_int
from analysis.wear import wear_from_smart
from nvmedb_client.bundle import BundleError, verify_bundle, write_bundle
from nvmedb_client.fio_output import FioOutputError, parse_fio_output, summarize
from nvmedb_client.system import lshw, lspci, nvme

SCALE = int(os.environ.get("NVMEDB_FUZZ_ITERATIONS", "1"))
SEED = int(os.environ.get("NVMEDB_FUZZ_SEED", "14"))
ID_NS = {
    "nsze": 1953525168,
    "ncap": 1953525168,
    "nuse": 1953525168,
    "nsfeat": 0,
    "nlbaf": 1,
    "flbas": 0,
    "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 0, "ds": 12, "rp": 0}],
}


class Crashes:
    """Every unexpected exception, with what provoked it, so one failing run lists them all."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def add(self, where: str, case: str, error: BaseException) -> None:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        self.found.append(
            f"{where}: {type(error).__name__}: {str(error)[:120]} at {Path(frame.filename).name}:{frame.lineno}"
            f" -- case {case[:300]!r}"
        )

    def check(self) -> None:
        assert not self.found, f"{len(self.found)} crashes:\n" + "\n".join(self.found[:30])


def _run_entry(rng: random.Random) -> dict:
    run = {
        "id": "r1",
        "test": "iops",
        "phase": rng.choice(["wdpc", "wipc"]),
        "round": rng.choice([1, 2**40]),
        "pattern": "randrw",
        "block_size_bytes": rng.choice([4096, 1048576, 1]),
        "read_pct": rng.choice([0, 65, 100]),
        "threads": rng.choice([1, 2]),
        "iodepth": rng.choice([1, 32]),
        "runtime_s": rng.choice([60, 0.5, 1e300]),
    }
    return mutate_document(run, rng, changes=1) if rng.random() < 0.3 else run


def _plan(rng: random.Random) -> dict:
    plan = {
        "blocks": [
            {
                "test": "iops",
                "wipc": True,
                "series": [
                    {
                        "phase": "wdpc",
                        "threads": 1,
                        "iodepth": 32,
                        "runtime_s": 60,
                        "max_rounds": 25,
                        "cells": [{"pattern": "randrw", "block_size_bytes": 4096, "read_pct": 65}],
                    }
                ],
            }
        ]
    }
    return mutate_document(plan, rng, changes=2) if rng.random() < 0.5 else plan


def _cross_check(doc: dict, rng: random.Random) -> None:
    run = _run_entry(rng)
    crosscheck.check_figures(doc, raw_file="fio/r1.json")
    size = optional_int(run.get("block_size_bytes"))  # as bundle_reader passes it
    crosscheck.check_iops_bandwidth(doc, block_size_bytes=size, raw_file="fio/r1.json")
    crosscheck.check_bytes_runtime(doc, raw_file="fio/r1.json", declared_runtime_s=60)
    job_text = rng.choice([None, "[job]\nbs=4k\nrw=randrw\nrwmixread=1e400\nnumjobs=x\n", "[broken\n=="])
    options = crosscheck.job_options(doc, job_text)
    crosscheck.check_job_options(run=run, options=options, raw_file="fio/r1.json")
    crosscheck.check_run_against_plan(run=run, plan=_plan(rng))
    crosscheck.direction_runtime_s(doc)


def fio_texts(samples: Path) -> list[tuple[str, str]]:
    paths = sorted((samples / "fio").iterdir()) + sorted((samples / "ssspt-hp-iops-1").glob("*_round1.json"))[:6]
    return [(path.name, path.read_text(errors="replace")) for path in paths if path.is_file()]


def test_mutated_fio_outputs_give_only_fio_output_errors_and_the_cross_checks_never_raise(shared_samples):
    rng = random.Random(SEED)
    texts = fio_texts(shared_samples)
    documents = {}
    for name, text in texts:
        try:
            documents[name] = parse_fio_output(text)
        except FioOutputError:
            continue
    crashes = Crashes()
    accepted = 0
    for _ in range(1500 * SCALE):
        name, text = rng.choice(texts)
        mutated = mutated_json_text(documents[name], rng) if name in documents else mutate_text(text, rng)
        try:
            doc = parse_fio_output(mutated)
            summarize(doc)
        except FioOutputError:
            continue
        except Exception as error:
            crashes.add("fio parser", mutated, error)
            continue
        accepted += 1
        try:
            _cross_check(doc, rng)
        except Exception as error:
            crashes.add("cross-checks", mutated, error)
    crashes.check()
    assert accepted > 50, "the mutations still leave many documents the parser accepts, so the checks are reached"


def nvme_cases(samples: Path) -> list[tuple[str, object, object]]:
    cases = [("id-ns", ID_NS, nvme.parse_id_ns)]
    for path in sorted((samples / "nvme-cli").glob("*.json")):
        doc = json.loads(path.read_text())
        if "id_ctrl" in path.name:
            cases.append((path.name, doc, nvme.parse_id_ctrl))
        elif "smart" in path.name:
            cases.append((path.name, doc, nvme.parse_smart_log))
        elif "list" in path.name:
            cases.append((path.name, doc, nvme.parse_list))
    return cases


def test_mutated_nvme_cli_outputs_give_only_nvme_parse_errors(shared_samples):
    rng = random.Random(SEED + 1)
    cases = nvme_cases(shared_samples)
    crashes = Crashes()
    for _ in range(1500 * SCALE):
        name, doc, parser = rng.choice(cases)
        text = mutated_json_text(doc, rng)
        try:
            parsed = parser(text)
        except nvme.NvmeParseError:
            continue
        except Exception as error:
            crashes.add(f"{parser.__name__} ({name})", text, error)
            continue
        try:
            if parser is nvme.parse_smart_log:
                wear_from_smart(parsed)
                thermal.assess([(parsed, parsed)], warning_k=350, critical_k=360)
                crosscheck.check_smart_counters(before=parsed, after=parsed, read_bytes=1, write_bytes=1, label="r")
            elif parser is nvme.parse_id_ctrl:
                identity_from_id_ctrl(parsed)
        except Exception as error:
            crashes.add(f"readers of {parser.__name__} ({name})", text, error)
    crashes.check()


def test_mutated_lshw_outputs_give_only_lshw_parse_errors(shared_samples):
    rng = random.Random(SEED + 2)
    docs = [(path.name, json.loads(path.read_text())) for path in sorted((shared_samples / "lshw").glob("*.json"))]
    crashes = Crashes()
    for _ in range(500 * SCALE):
        name, doc = rng.choice(docs)
        text = mutated_json_text(doc, rng)
        try:
            lshw.parse_lshw(text)
        except lshw.LshwParseError:
            continue
        except Exception as error:
            crashes.add(f"parse_lshw ({name})", text, error)
    crashes.check()


def test_mutated_lspci_reports_never_raise(shared_samples):
    rng = random.Random(SEED + 3)
    texts = [(path.name, path.read_text(errors="replace")) for path in sorted((shared_samples / "lspci").iterdir())]
    crashes = Crashes()
    for _ in range(500 * SCALE):
        name, text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            text = mutate_text(text, rng)
        try:
            devices = lspci.parse_lspci(text)
            ends = [link_end(device) for device in devices]
            for end in ends[:4]:
                assess_link(end, ends[0] if ends else None, tuple(ends[1:3]))
        except Exception as error:
            crashes.add(f"parse_lspci ({name})", text, error)
    crashes.check()


# --- whole bundles ------------------------------------------------------------------------------------------------

MANIFEST_PARTS = ("runs", "plan", "steady_state", "target", "tools", "compliance")


@pytest.fixture(scope="module")
def template(tmp_path_factory, shared_samples):
    work = tmp_path_factory.mktemp("fuzz-template")
    run_dir, manifest, files = bundles.consistent_run_dir(work, shared_samples)
    bundles.add_system_files(run_dir, files, shared_samples)
    (run_dir / "run.json").write_text(json.dumps({"purges": [{"method": "blkdiscard", "at": "x"}]}))
    files.append("run.json")
    return run_dir, manifest, files


def _mutated_bundle(rng: random.Random, template, work: Path) -> tuple[Path, dict, list[str], str]:
    source, manifest, files = template
    run_dir = work / "run"
    shutil.copytree(source, run_dir)
    manifest = json.loads(json.dumps(manifest))
    if rng.random() < 0.4:
        part = rng.choice(MANIFEST_PARTS)
        if part == "runs":
            index = rng.randrange(len(manifest["runs"]))
            manifest["runs"][index] = mutate_document(manifest["runs"][index], rng, changes=2)
        else:
            mutated = mutate_document({"x": manifest[part]}, rng, changes=2)
            manifest[part] = mutated.get("x", manifest[part]) if isinstance(mutated, dict) else mutated
        return run_dir, manifest, files, f"manifest {part}"
    path = rng.choice([f for f in files if not f.startswith("jobs/")] + ["run.json", "system/facts.json"])
    target = run_dir / path
    text = target.read_text(errors="replace")
    try:
        damaged = mutated_json_text(json.loads(text), rng)
    except ValueError:
        damaged = mutate_text(text, rng)
    target.write_bytes(damaged.encode("utf-8", errors="surrogateescape"))
    return run_dir, manifest, files, f"{path}: {damaged[:200]}"


def test_re_signed_mutated_bundles_are_read_without_an_exception(tmp_path, template):
    rng = random.Random(SEED + 4)
    key = bundles.bundle_factory().new_signing_key()
    crashes = Crashes()
    read = 0
    for index in range(120 * SCALE):
        work = tmp_path / f"case{index}"
        run_dir, manifest, files, case = _mutated_bundle(rng, template, work)
        try:
            path = write_bundle(
                run_dir=run_dir, manifest=manifest, files=files, signing_key=key, out_path=work / "b.nvmedb.tar.gz"
            )
        except BundleError:
            shutil.rmtree(work)
            continue  # the schema refuses this manifest: the client cannot even sign it
        try:
            record = read_bundle(verify_bundle(path, extract_to=work / "extracted"))
            columns.record_problems(record)
            read += 1
        except BundleError:
            pass
        except Exception as error:
            crashes.add("read_bundle", case, error)
        shutil.rmtree(work)
    crashes.check()
    assert read > 40


def test_archives_with_damaged_tar_headers_give_only_bundle_errors(tmp_path, template):
    rng = random.Random(SEED + 5)
    run_dir, manifest, files = template
    good = write_bundle(
        run_dir=run_dir,
        manifest=manifest,
        files=files,
        signing_key=bundles.bundle_factory().new_signing_key(),
        out_path=tmp_path / "good.nvmedb.tar.gz",
    )
    tar = bytearray(gzip.decompress(good.read_bytes()))
    headers = [offset for offset in range(0, len(tar), 512) if tar[offset + 257 : offset + 262] == b"ustar"]
    crashes = Crashes()
    for index in range(60 * SCALE):
        damaged = bytearray(tar)
        for _ in range(rng.randint(1, 4)):
            # a header field (name, mode, size, checksum, type, link name, pax records) or any byte
            at = rng.choice(headers) + rng.randrange(512) if rng.random() < 0.8 else rng.randrange(len(damaged))
            damaged[at] = rng.choice((0, 0x30, 0x37, 0x78, 0x4C, 0xFF, rng.randrange(256)))
        path = tmp_path / f"damaged{index}.nvmedb.tar.gz"
        path.write_bytes(gzip.compress(bytes(damaged), mtime=0))
        try:
            verify_bundle(path, extract_to=tmp_path / f"extracted{index}")
        except BundleError:
            pass
        except Exception as error:
            crashes.add("verify_bundle", f"header bytes changed in case {index}", error)
        shutil.rmtree(tmp_path / f"extracted{index}", ignore_errors=True)
        path.unlink()
    crashes.check()
