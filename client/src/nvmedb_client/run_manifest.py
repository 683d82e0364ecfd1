"""The bundle's manifest of a finished run: what ran (the runs and the plan), the client's claims derived from the fio
outputs (steady state, the figures each test adds: demand intensity, the surface, HIR/XSR), the run's facts and
compliance."""

from __future__ import annotations

from pathlib import Path

from nvmedb_client import __version__, tracking
from nvmedb_client.bundle import FORMAT_VERSION
from nvmedb_client.plan import plan_to_dict
from nvmedb_client.pts import registry
from nvmedb_client.pts.derive import derive_all
from nvmedb_client.run_state import utc_now, write_json_atomic
from nvmedb_client.system import collect, commands, nvme


def collect_system(runner, system_dir: Path) -> list[str]:
    system_dir.mkdir(parents=True, exist_ok=True)
    collect.collect_system(device=runner.device, out_dir=system_dir)
    return sorted(str(path.relative_to(runner.files)) for path in system_dir.rglob("*") if path.is_file())


def run_facts(runner) -> dict:
    """What happened during the run beyond the fio outputs (files/run.json in the bundle)."""
    return {
        "purges": runner.state["purges"],
        "write_cache": runner.state.get("write_cache"),
        "ioengine": runner.state.get("ioengine"),
        "wsat": runner.state.get("wsat"),
        **({"wsat_workloads": runner.state["wsat_workloads"]} if runner.state.get("wsat_workloads") else {}),
        "smart_missing": runner.state.get("smart_missing", [])
        or (
            [{"file": "smart/*", "reason": "file target: no NVMe device to read a smart-log from"}]
            if runner.device is None
            else []
        ),
        "sessions": runner.state["sessions"],
        "interruptions": runner.state.get("interruptions", []),
        "superseded_runs": runner.state.get("superseded_runs", []),
        "write_cache_checks": runner.state.get("write_cache_checks", []),
    }


def compliance(runner) -> dict:
    reasons = list(runner.plan.compliance_reasons)
    engine = runner.state.get("ioengine") or {}
    if engine.get("note"):
        reasons.append(f"fio engine {engine['engine']}: {engine['note']}")
    reasons += [r for r in runner.state.get("compliance_extra", []) if r not in reasons]
    for purge in runner.state["purges"] if runner.device else []:
        if (purge.get("method") or "").startswith("blkdiscard") and not purge.get("superseded"):
            why = (
                "a Format or Sanitize would also have erased namespaces that were not confirmed or are in use"
                if purge.get("skipped_attempts")
                else "neither NVMe Format with Secure Erase nor Sanitize worked"
            )
            reason = f"purged with blkdiscard (a deallocate, not a secure erase): {why}"
            if reason not in reasons:
                reasons.append(reason)
    tests = runner.state.get("test_compliance", {})
    reasons += [f"{label}: {reason}" for label, items in tests.items() for reason in items]
    result = {"compliant": not reasons, "reasons": reasons}
    if tests:
        result["tests"] = tests
    return result


def build_manifest(runner, system_files: list[str]) -> tuple[dict, list[str]]:
    runs = runner.state["runs"]
    summaries = {run["id"]: runner._summary(run["id"]) for run in runs}
    write_json_atomic(runner.files / "run.json", run_facts(runner))
    files = ["run.json", *system_files]
    for run in [*runs, *runner.state.get("superseded_runs", [])]:
        files += [run["job_file"], run["output_file"]]
        files += [p for p in (run["smart_before"], run["smart_after"]) if p]
        files += run.get("log_files") or []
    tools = {"fio": runner.state.get("fio_version"), "nvme-cli": nvme_version(runner)}
    manifest = {
        "format_version": FORMAT_VERSION,
        "client": {"name": "nvmedb-client", "version": __version__},
        "created_at": utc_now(),
        "profile": runner.plan.profile.name,
        "edition": runner.plan.edition.name,
        "compliance": compliance(runner),
        "target": {
            "kind": runner.config.target_kind,
            "path": runner.recorded_target,
            "size_bytes": runner.config.size_bytes,
            "active_range_bytes": runner.plan.active_range_bytes,
        },
        "plan": plan_to_dict(runner.plan),
        "timing": {"started_at": runner.state["sessions"][0]["started_at"], "finished_at": runner.state["finished_at"]},
        "tools": tools,
        "runs": runs,
        "steady_state": tracking.evaluate_runs(runs, summaries),
        "system": collect.system_declaration(runner.files / "system"),
    }

    def read(rel: str) -> bytes:
        return (runner.files / rel).read_bytes()

    engine = (runner.state.get("ioengine") or {}).get("engine")
    for figures in registry.manifest_figures():
        value = figures.derive(manifest, read=read, summaries=summaries, ioengine=engine)
        if value is not None:
            manifest[figures.key] = value
    derived = derive_all(manifest, read=read, summaries=summaries)
    if derived:
        manifest["derived"] = derived
    if runner.state.get("interruptions"):
        manifest["interruptions"] = runner.state["interruptions"]
    if runner.state.get("write_cache_checks"):
        manifest["write_cache_checks"] = runner.state["write_cache_checks"]
    return manifest, sorted(set(files))


def nvme_version(runner) -> str | None:
    if runner.device is None:
        return None
    result = commands.run_command(["nvme", "version"], timeout=30)
    return nvme.parse_version(result.stdout)["nvme-cli"] if result.ok else None
