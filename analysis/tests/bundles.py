"""Signed bundles made from the real SSSPT fio outputs in ../shared/samples, consistent with those outputs.

client/tests/bundle_factory.py lays out the run directory; here each run entry is then made to say what its fio
output says (threads, queue depth, when it ran), because the server cross-checks exactly that. Optional system files
(id-ctrl, lspci, facts) come from the shared nvme-cli and lspci samples.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from analysis.crosscheck import job_options
from nvmedb_client.bundle import VerifiedBundle, verify_bundle, write_bundle
from nvmedb_client.fio_output import parse_fio_output, summarize
from nvmedb_client.tracking import evaluate_runs

CLIENT_TESTS = Path(__file__).resolve().parents[2] / "client" / "tests"
ID_CTRL = (
    "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)
SMART = "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json"
LSPCI = "lspci/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__lspci_vvv_3"


def bundle_factory():
    if "bundle_factory" not in sys.modules:
        spec = importlib.util.spec_from_file_location("bundle_factory", CLIENT_TESTS / "bundle_factory.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["bundle_factory"] = module
        spec.loader.exec_module(module)
    return sys.modules["bundle_factory"]


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def consistent_run_dir(work: Path, samples_dir: Path, samples: list[Path] | None = None):
    factory = bundle_factory()
    run_dir, manifest, files = factory.make_run_dir(work, samples or factory.default_fio_samples(samples_dir))
    summaries = {}
    for run in manifest["runs"]:
        doc = parse_fio_output((run_dir / run["output_file"]).read_bytes())
        summaries[run["id"]] = summarize(doc)
        options = job_options(doc)
        run["threads"] = int(options["numjobs"])
        run["iodepth"] = int(options["iodepth"])
        end = float(doc["timestamp"])
        run["started_at"], run["finished_at"] = iso(end - float(doc["jobs"][0]["elapsed"])), iso(end + 1)
        (run_dir / run["job_file"]).write_text(
            f"[{run['id']}]\nrw={run['pattern']}\nrwmixread={run['read_pct']}\nbs={run['block_size_bytes']}\n"
            f"numjobs={run['threads']}\niodepth={run['iodepth']}\nruntime={run['runtime_s']}\ntime_based=1\n"
        )
    manifest["runs"].sort(key=lambda run: run["finished_at"])
    manifest["timing"] = {
        "started_at": manifest["runs"][0]["started_at"],
        "finished_at": manifest["runs"][-1]["finished_at"],
    }
    manifest["created_at"] = manifest["timing"]["finished_at"]
    manifest["steady_state"] = evaluate_runs(manifest["runs"], summaries)
    return run_dir, manifest, files


def add_system_files(run_dir: Path, files: list[str], samples_dir: Path, *, pci_address: str = "0000:3b:00.0") -> None:
    system = run_dir / "system"
    system.mkdir(exist_ok=True)
    (system / "nvme-id-ctrl.json").write_bytes((samples_dir / ID_CTRL).read_bytes())
    (system / "lspci.txt").write_bytes((samples_dir / LSPCI).read_bytes())
    facts = {
        "host": {
            "cpu": {"model": "Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz", "logical_cpus": 80},
            "memory_bytes": 196 * 1024**3,
            "kernel": {"name": "Linux", "release": "5.10.0-23-amd64"},
            "distribution": {"pretty_name": "Debian GNU/Linux 11 (bullseye)"},
        },
        "block_device": {"block_queue": {"scheduler": "none"}, "pci_path": [pci_address]},
        "volatile_write_cache": {"value": 0, "enabled": False},
    }
    (system / "facts.json").write_text(json.dumps(facts))
    files += ["system/nvme-id-ctrl.json", "system/lspci.txt", "system/facts.json"]


def as_format_2(run_dir: Path, manifest: dict, files: list[str]) -> None:
    """Make a factory bundle a format-2 one: each file under system/ declared with the kind the client gives it,
    and the drive's PCI path from its facts.json."""
    from nvmedb_client.system.collect import FILE_KINDS

    manifest["format_version"] = 2
    declared = [
        {"path": path, "kind": FILE_KINDS.get(Path(path).name, "other")}
        for path in sorted(files)
        if path.startswith("system/")
    ]
    facts = run_dir / "system" / "facts.json"
    pci_path = json.loads(facts.read_text())["block_device"].get("pci_path") if facts.exists() else None
    manifest["system"] = {"files": declared, "pci_path": pci_path}


def full_iops_plan_samples(samples_dir: Path, work: Path, *, steady: bool = True) -> list[Path]:
    """A WIPC output and every cell of the PTS IOPS plan (56) in rounds 1-5, from the real SSSPT IOPS run (2 threads
    x QD 16: the client edition's plan). Its 64 KiB 65/35 tracking cell is not steady over rounds 1-5 (it steadies
    over 3-7): with `steady`, that cell's rounds 3-7 are copied under `work` as rounds 1-5."""
    from nvmedb_client.plan import IOPS_BLOCK_SIZES, IOPS_MIXES

    source = samples_dir / "ssspt-hp-iops-1"
    work.mkdir(parents=True)
    samples = [source / "wipc_bs128KB.json"]
    for number in range(1, 6):
        for mix in IOPS_MIXES:
            for size in IOPS_BLOCK_SIZES:
                name = f"wdpc_bs{f'{size // 1024}KB' if size >= 1024 else f'{size}B'}_read{mix}_round{number}.json"
                if steady and (size, mix) == (64 * 1024, 65):
                    (work / name).write_bytes((source / f"wdpc_bs64KB_read65_round{number + 2}.json").read_bytes())
                    samples.append(work / name)
                else:
                    samples.append(source / name)
    return samples


def verified_bundle(
    work: Path,
    samples_dir: Path,
    *,
    samples: list[Path] | None = None,
    system: bool = True,
    mutate: Callable[[Path, dict, list[str]], None] | None = None,
) -> VerifiedBundle:
    work.mkdir(parents=True)
    run_dir, manifest, files = consistent_run_dir(work, samples_dir, samples)
    if system:
        add_system_files(run_dir, files, samples_dir)
    if mutate:
        mutate(run_dir, manifest, files)
    key = bundle_factory().new_signing_key()
    path = write_bundle(
        run_dir=run_dir, manifest=manifest, files=files, signing_key=key, out_path=work / "b.nvmedb.tar.gz"
    )
    return verify_bundle(path, extract_to=work / "extracted")


def response_text(response) -> str:
    """A served page or raw file as text, streamed or not."""
    data = b"".join(response.streaming_content) if response.streaming else response.content
    return data.decode("utf-8", "replace")
