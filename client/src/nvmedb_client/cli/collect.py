"""`nvmedb-client collect`: gather the system facts only; never writes to the device."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import click

from nvmedb_client import privacy, units
from nvmedb_client.system.collect import collect_system

# Rows of the summary table: label and the path of the value in facts.json. Values whose path ends in one of
# UNIT_SUFFIXES are shown with their unit.
SUMMARY_ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("CPU", ("host", "cpu", "model")),
    ("Logical CPUs", ("host", "cpu", "logical_cpus")),
    ("Memory", ("host", "memory_bytes")),
    ("Kernel", ("host", "kernel", "release")),
    ("Distribution", ("host", "distribution", "pretty_name")),
    ("CPU governor", ("host", "cpufreq_governor")),
    ("System", ("lshw", "system_product")),
    ("Board", ("lshw", "board_product")),
    ("fio", ("tools", "fio")),
    ("nvme-cli", ("tools", "nvme-cli")),
    ("lspci", ("tools", "lspci")),
    ("NVMe namespaces", ("nvme_list",)),
    ("Model", ("id_ctrl", "model")),
    ("Serial", ("id_ctrl", "serial")),
    ("Firmware", ("id_ctrl", "firmware")),
    ("Total NVM capacity", ("id_ctrl", "tnvmcap_bytes")),
    ("Namespace size", ("id_ns", "size_bytes")),
    ("LBA size", ("id_ns", "lba_data_size_bytes")),
    ("Temperature", ("smart_log", "temperature_c")),
    ("Percentage used", ("smart_log", "percent_used")),
    ("Volatile write cache", ("volatile_write_cache", "enabled")),
    ("I/O scheduler", ("block_device", "block_queue", "scheduler")),
    ("NUMA node", ("block_device", "numa_node")),
    ("PCIe path", ("pcie", "path")),
)


@click.command()
@click.option("--device", metavar="DEV", help="The NVMe namespace to describe, e.g. /dev/nvme0n1 (read only).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the raw outputs and facts.json [default: a new nvmedb-collect-<UTC time> folder here].",
)
@click.option("--json", "as_json", is_flag=True, help="Print facts.json instead of the summary table.")
def collect(device: str | None, out_dir: Path | None, as_json: bool) -> None:
    """Collect the system facts (host, drive identity, SMART, PCIe path) without writing to the drive.

    Runs nvme-cli, lspci and lshw (read-only commands), reads /proc and /sys, and writes each raw output plus
    facts.json into the --out folder. Anything the machine cannot tell (a tool is absent, not root, no NVMe
    device) is recorded as missing with the reason.

    \b
    Example:
      nvmedb-client collect
      sudo nvmedb-client collect --device /dev/nvme0n1 --out facts-nvme0
      nvmedb-client collect --device /dev/nvme0n1 --json
    """
    if out_dir is None:
        out_dir = Path.cwd() / f"nvmedb-collect-{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}"
    if out_dir.exists() and any(out_dir.iterdir()):
        raise click.ClickException(f"The folder {out_dir} is not empty; give a new or empty folder with --out.")
    try:
        # a by-id name carries the serial: the facts name the device by its kernel name
        facts = collect_system(device=privacy.kernel_device(device) if device else None, out_dir=out_dir)
    except OSError as exc:
        raise click.ClickException(f"Could not write into {out_dir}: {exc.strerror or exc}.") from None

    if as_json:
        click.echo(json.dumps(facts, indent=2))
        return
    _print_summary(facts, out_dir)


def with_unit(key: str, value: Any) -> str:
    """A figure as a person reads it: bytes also in binary units, temperatures in °C, shares in %."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if key.endswith("_bytes"):
        if "lba" in key:  # a block size reads in binary units: "4 KiB", never "4.10 kB"
            return f"{units.block_size(value)} ({value} bytes)"
        if value < 1024:
            return f"{value} bytes"
        return f"{units.size(value)} ({units.size_binary(value)}, {value} bytes)"
    if key.endswith("_c"):
        return f"{value} °C"
    if key.startswith("percent"):
        return f"{value} %"
    return str(value)


def summary_rows(facts: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(label, shown value, is_missing) for each summary row."""
    rows = []
    for label, path in SUMMARY_ROWS:
        value, reason = _lookup(facts, path)
        if reason is not None:
            rows.append((label, f"missing: {reason}", True))
        elif isinstance(value, list):
            shown = ", ".join(str(item.get("device_path") if isinstance(item, dict) else item) for item in value)
            rows.append((label, shown or "none", False))
        elif isinstance(value, dict):
            rows.append((label, json.dumps(value), False))
        else:
            rows.append((label, with_unit(path[-1], value), False))
    return rows


def _lookup(facts: dict[str, Any], path: tuple[str, ...]) -> tuple[Any, str | None]:
    value: Any = facts
    for key in path:
        if isinstance(value, dict) and set(value) == {"missing"}:
            return None, value["missing"]
        if not isinstance(value, dict) or key not in value:
            return None, "not collected"
        value = value[key]
        if value is None:
            return None, "not reported"
    if isinstance(value, dict) and set(value) == {"missing"}:
        return None, value["missing"]
    return value, None


def _print_summary(facts: dict[str, Any], out_dir: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="System facts", show_lines=False)
    table.add_column("Fact")
    table.add_column("Value", overflow="fold")
    rows = summary_rows(facts)
    for label, shown, is_missing in rows:
        table.add_row(label, f"[yellow]{_escape(shown)}[/yellow]" if is_missing else _escape(shown))
    console = Console()
    console.print(table)
    missing_count = sum(1 for row in rows if row[2])
    console.print(f"{missing_count} of {len(rows)} facts missing. Raw outputs and facts.json are in {out_dir}.")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
