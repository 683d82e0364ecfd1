"""`nvmedb-client verify`: check a bundle's signature and hashes and re-derive its steady-state verdicts."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from nvmedb_client.bundle import BundleError, rederive_steady_state, verify_bundle
from nvmedb_client.cli.exit_codes import VERIFY_FAILED
from nvmedb_client.pts import registry
from nvmedb_client.pts.derive import claim
from nvmedb_client.pts.figures import ManifestFigures
from nvmedb_client.pts.verify import rederive as rederive_recovery
from nvmedb_client.system_files import undeclared_system_files
from nvmedb_client.units import by_unit


class VerifyFailed(click.ClickException):
    exit_code = VERIFY_FAILED


def claim_differences(claimed: list[dict], derived: list[dict]) -> list[str]:
    """Sentences naming every variable where the client's own verdict differs from the re-derived one."""
    claims = {entry.get("variable"): entry for entry in claimed}
    differences = []
    for entry in derived:
        claim = claims.pop(entry["variable"], None)
        if claim is None:
            differences.append(f"the manifest has no verdict for {entry['variable']}")
            continue
        for key in ("steady", "steady_round"):
            if claim.get(key) != entry[key]:
                differences.append(
                    f"{entry['variable']}: the manifest claims {key}={claim.get(key)!r}, the raw data gives {entry[key]!r}"
                )
    for variable in sorted(claims, key=str):
        differences.append(f"the manifest claims a verdict for {variable}, which its runs do not support")
    return differences


@click.command()
@click.argument("bundle", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def verify(bundle: Path, as_json: bool) -> None:
    """Check a result bundle: its signature, every file's SHA-256, the steady-state verdicts and the HIR/XSR figures.

    HIR and XSR figures are re-derived from the fio outputs and per-interval logs and compared with the manifest's.
    The verdicts are re-derived from the raw fio output in the bundle (SNIA PTS v2.0.2 §2.1.24: the last 5 rounds,
    data excursion <= 20% of the average, slope excursion <= 10%), never taken from the client's own claim.
    Exits with code 3 when anything is wrong, printing one sentence that says what.

    \b
    Example:
      nvmedb-client verify nvmedb-pts-20261122T100000Z.nvmedb.tar.gz
      nvmedb-client verify run.nvmedb.tar.gz --json
    """
    with tempfile.TemporaryDirectory(prefix="nvmedb-verify-") as scratch:
        try:
            verified = verify_bundle(bundle, extract_to=Path(scratch) / "bundle")
        except BundleError as exc:
            if as_json:
                _print_json({"ok": False, "error": {"code": exc.code, "message": exc.message}})
            raise VerifyFailed(f"{bundle.name} is not a valid bundle: {exc.message} [{exc.code}]") from exc
        derived = rederive_steady_state(verified)
        recovery, recovery_differences = rederive_recovery(verified)
        figures = {kind.key: kind.rederive(verified) for kind in registry.manifest_figures()}
    steady_differences = claim_differences(verified.manifest.get("steady_state", []), derived)
    figure_differences = [
        (kind.mismatch, kind.differences(verified.manifest.get(kind.key), figures[kind.key]))
        for kind in registry.manifest_figures()
    ]
    differences = steady_differences + recovery_differences + [d for _, found in figure_differences for d in found]
    if steady_differences:
        what = "steady-state claim differs"
    elif recovery_differences:
        what = "HIR/XSR claim differs"
    else:
        what = next((mismatch for mismatch, found in figure_differences if found), "")
    ok = not differences
    # the server holds such a bundle for review; it is still valid, so this warns and does not fail
    undeclared = undeclared_system_files(verified.manifest) if verified.manifest["format_version"] >= 2 else []

    if as_json:
        _print_json(
            {
                "ok": ok,
                "error": None if ok else {"code": "claim_mismatch", "message": differences[0]},
                "fingerprint": verified.fingerprint,
                "profile": verified.manifest["profile"],
                "compliance": verified.manifest["compliance"],
                "files": len(verified.manifest["files"]),
                "steady_state": derived,
                **figures,
                "recovery": {test: claim(result) for test, result in recovery.items()},
                "differences": differences,
                "undeclared_system_files": undeclared,
            }
        )
    else:
        _print_report(bundle, verified.manifest, verified.fingerprint, derived, differences)
        # the extensions' figures follow the steady-state table, the PTS tests' come in run order
        for kind in registry.manifest_figures(extensions=True):
            _print_figures(kind, figures[kind.key])
        for line in recovery_lines(recovery):
            Console().print(line)
        for kind in registry.manifest_figures(extensions=False):
            _print_figures(kind, figures[kind.key])
        for path in undeclared:
            Console().print(
                f"[yellow]Undeclared system file:[/yellow] {path} is not in the manifest's system.files; "
                "the server will hold the bundle for review"
            )
    if not ok:
        raise VerifyFailed(f"{bundle.name} is signed and intact, but its {what} from its raw data: {differences[0]}")


def recovery_lines(recovery: dict) -> list[str]:
    """The sentences of each test re-derived from the logs (an HIR wait state, an XSR group), as its module says."""
    return [line for test, result in recovery.items() for line in registry.hook(test, "summary_lines")(result or {})]


def _print_json(document: dict) -> None:
    click.echo(json.dumps(document, indent=2, sort_keys=True))


def _print_report(bundle: Path, manifest: dict, fingerprint: str, derived: list[dict], differences: list[str]) -> None:
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)  # pipes and logs get the whole table rather than 80 wrapped columns
    console.print(
        f"[bold]{bundle.name}[/bold]: signature valid (key {fingerprint}), "
        f"{len(manifest['files'])} files match their SHA-256."
    )
    compliance = manifest["compliance"]
    if not compliance["compliant"]:
        console.print("Not a compliant PTS result: " + "; ".join(compliance["reasons"]))
    if not derived:
        console.print("The bundle has no steady-state tracking variables (no IOPS, throughput or latency rounds).")
    else:
        console.print(_verdict_table(derived))
    reasons = {entry["series"]: entry["reason"] for entry in derived if not entry["steady"] and entry.get("reason")}
    for series, reason in reasons.items():
        console.print(f"Series {series}: {reason}")
    for difference in differences:
        console.print(f"[red]Claim differs:[/red] {difference}")


def _print_figures(kind: ManifestFigures, derived) -> None:
    lines = kind.verify_lines(derived)
    if not kind.rich_lines:
        for line in lines:
            click.echo(line)
        return
    console = Console() if Console().is_terminal else Console(width=160)
    for line in lines:
        console.print(line)


def _verdict_table(derived: list[dict]) -> Table:
    table = Table(title="Steady state re-derived from the raw fio output (SNIA PTS v2.0.2 §2.1.24)")
    for column in (
        "variable",
        "measurement window",
        "window average",
        "data excursion / limit",
        "slope excursion / limit",
        "window verdict",
        "series verdict",
    ):
        table.add_column(column, justify="left" if column == "variable" else "right", no_wrap=True)
    for entry in derived:
        window = entry.get("window")
        unit = _UNITS.get(entry["metric"], "")
        series = f"steady at round {entry['steady_round']}" if entry["steady"] else "not steady"
        if window is None:
            rounds = entry.get("rounds_measured", 0)
            table.add_row(entry["variable"], f"none ({rounds} of 5 rounds)", "-", "-", "-", "not judged", series)
            continue
        table.add_row(
            entry["variable"],
            f"rounds {window['first_round']}-{window['last_round']}",
            by_unit(unit, window["average"]),
            f"{by_unit(unit, window['data_excursion'])} / {by_unit(unit, window['data_excursion_limit'])}",
            f"{by_unit(unit, window['slope_excursion'])} / {by_unit(unit, window['slope_excursion_limit'])}",
            "steady" if window["steady"] else "not steady",
            series,
        )
    return table


_UNITS = {
    "total_iops": "IOPS",
    "read_bw_bytes_per_s": "bytes/s",
    "write_bw_bytes_per_s": "bytes/s",
    "lat_mean_ns": "ns",
}
