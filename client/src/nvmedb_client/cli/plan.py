"""`nvmedb-client plan`: print the test plan. Writes nothing and touches no device."""

from __future__ import annotations

import json
from pathlib import Path

import click

from nvmedb_client import plan as plan_module
from nvmedb_client import safety
from nvmedb_client.cli.surface_options import options_from_flags, surface_options
from nvmedb_client.pts import registry
from nvmedb_client.run_state import RunConfig
from nvmedb_client.system import commands, nvme


def test_selection_options(function):
    """--tests, --edition and --profile: the same options, defaults and help for `plan` and `run`."""
    options = (
        click.option(
            "--tests",
            default=",".join(plan_module.DEFAULT_TESTS),
            show_default=True,
            help=f"Tests to run, comma-separated, from {', '.join(plan_module.TESTS)} (surface: an nvmedb "
            "extension); 'pts' for every PTS test of the edition, 'all' for those and the extensions.",
        ),
        click.option(
            "--edition", type=click.Choice(plan_module.EDITION_NAMES), default="enterprise", show_default=True
        ),
        click.option("--profile", type=click.Choice(plan_module.PROFILE_NAMES), default="pts", show_default=True),
    )
    for option in reversed(options):  # the first listed comes first in --help
        function = option(function)
    return function


TARGET_FILE_HELP = "Test a file instead of a device (no root; needs --size)."
RUN_SIZE_HELP = "Size of the --target-file, e.g. 256MiB or 8GiB."


def file_target_options(size_help: str = RUN_SIZE_HELP):
    """--target-file and --size: the same names, types and target-file help for `plan` and `run`."""

    def decorate(function):
        function = click.option("--size", "size", default=None, metavar="SIZE", help=size_help)(function)
        return click.option("--target-file", type=click.Path(dir_okay=False, path_type=Path), help=TARGET_FILE_HELP)(
            function
        )

    return decorate


def parse_tests(value: str | None, edition: str = "enterprise") -> list[str]:
    if value is None:
        return list(plan_module.DEFAULT_TESTS)
    if value.strip() in ("pts", "all"):
        extensions = plan_module.EXTENSIONS if value.strip() == "all" else ()
        return [*plan_module.edition_tests(edition), *extensions]
    tests = [t.strip() for t in value.split(",") if t.strip()]
    unknown = [t for t in tests if t not in plan_module.TESTS]
    if unknown or not tests:
        raise click.BadParameter(
            f"unknown test {', '.join(unknown) or '(none)'}; choose from {', '.join(plan_module.TESTS)}, "
            "or 'pts' or 'all'",
            param_hint="--tests",
        )
    return tests


def parse_size_option(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return plan_module.parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--size") from None


def new_run_config(*, device, target_file, size, tests, edition, profile, threads, iodepth, max_rounds, surface_flags):
    """The RunConfig of a new `run` (and of `plan --target-file`, so both plan the same cells). A file target's plan
    is checked here; a device's once its size has been read."""
    if (device is None) == (target_file is None):
        raise click.UsageError("Give exactly one target: --device DEV or --target-file PATH --size SIZE.")
    if target_file is not None and size is None:
        raise click.UsageError("--target-file needs --size, e.g. --size 256MiB.")
    if device is not None and size is not None:
        raise click.UsageError("--size is only for --target-file; a device is tested over its whole capacity.")
    cell_runtime_s = None
    try:
        if profile == "quick":
            cell_runtime_s = plan_module.quick_profile().cell_runtime_s  # fixed now, so a resume keeps it
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    config = RunConfig(
        target_kind="device" if device else "file",
        target_path=device or str(target_file.resolve()),
        size_bytes=parse_size_option(size) or 0,
        tests=parse_tests(tests, edition),
        edition=edition,
        profile=profile,
        threads=threads,
        iodepth=iodepth,
        max_rounds=max_rounds,
        cell_runtime_s=cell_runtime_s,
    )
    surface = options_from_flags(profile, surface_flags or {})
    config.surface = surface.to_dict() if surface else None
    if config.target_kind == "file":
        build_run_plan(config)
    return config


def build_run_plan(config) -> plan_module.Plan:
    try:
        return config.build_plan()
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


DEFAULT_PLAN_SIZE = {"pts": 1_000_000_000_000, "quick": 256 * plan_module.MIB}


def read_namespace(device: str) -> tuple[int, int | None]:
    """(size in bytes, LBA data size in bytes) of an NVMe namespace, from `nvme id-ns` (reads only)."""
    result = commands.run_command(["nvme", "id-ns", device, "-o", "json"], timeout=60)
    if not result.ok:
        raise click.ClickException(f"cannot read the namespace of {device}: {result.failure_reason()}")
    try:
        id_ns = nvme.parse_id_ns(result.stdout)
    except ValueError as exc:
        raise click.ClickException(f"cannot read the namespace of {device}: {exc}") from None
    size = id_ns.get("size_bytes")
    if not size:
        raise click.ClickException(f"{device} reports no namespace size: {id_ns['missing'].get('size_bytes')}")
    return int(size), id_ns.get("lba_data_size_bytes")


@click.command()
@test_selection_options
@file_target_options(
    size_help="Target capacity (e.g. 960GB, 256MiB): the --target-file's size, or without one the capacity assumed; "
    "default 1 TB, or 256 MiB for quick."
)
@click.option(
    "--device",
    default=None,
    help="An NVMe namespace (e.g. /dev/nvme0n1): its size and LBA format are read with `nvme id-ns` (nothing is "
    "written).",
)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Override the edition's thread count (TC).")
@click.option("--iodepth", type=click.IntRange(min=1), default=None, help="Override the edition's queue depth (QD).")
@click.option("--max-rounds", type=click.IntRange(min=1), default=None, help="Override the round limit (25).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (the manifest's `plan` key).")
@surface_options
def plan(
    tests, edition, profile, target_file, size, device, threads, iodepth, max_rounds, as_json, surface_flags
) -> None:
    """Print the test plan: every test, block size, R/W mix, TC/QD, round structure, tracking variables, stop rules,
    the estimated duration and the estimated bundle size. Writes nothing: with --target-file, the plan `run` would
    follow on that file, which is neither created nor written (exit code 1 when `run` would refuse the file).

    \b
    Example:
      nvmedb-client plan
      nvmedb-client plan --edition client --size 512GB
      nvmedb-client plan --device /dev/nvme0n1
      nvmedb-client plan --target-file /tmp/nvmedb.img --size 256MiB --profile quick
      nvmedb-client plan --tests iops,lat --profile quick --json
      nvmedb-client plan --tests surface --surface-max-bs 1MiB --surface-max-qd 64
    """
    if target_file is not None:
        _plan_file_target(
            target_file, size=size, tests=tests, edition=edition, profile=profile, device=device, threads=threads,
            iodepth=iodepth, max_rounds=max_rounds, as_json=as_json, surface_flags=surface_flags,
        )  # fmt: skip
        return
    if device and size:
        raise click.UsageError("--size and --device exclude each other: a device's size is read from the device.")
    lba_size = None
    if device:
        capacity, lba_size = read_namespace(device)
    else:
        capacity = parse_size_option(size) or DEFAULT_PLAN_SIZE[profile]
    # without a device, a quick plan is for the file target it is made to try (its default size is that file's)
    target_kind = "device" if device or profile == "pts" else "file"
    try:
        built = plan_module.build_plan(
            tests=parse_tests(tests, edition),
            edition=edition,
            profile=profile,
            capacity_bytes=capacity,
            target_kind=target_kind,
            threads=threads,
            iodepth=iodepth,
            max_rounds=max_rounds,
            lba_size_bytes=lba_size,
            surface=options_from_flags(profile, surface_flags),
        )
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    data = plan_module.plan_to_dict(built)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for line in describe(data, size_given=size is not None or device is not None):
        click.echo(line)


def _plan_file_target(target_file: Path, *, device, as_json: bool, **options) -> None:
    """The plan of `run --target-file` with the same options, built by the same code; the file is only looked at."""
    config = new_run_config(device=device, target_file=target_file, **options)
    data = plan_module.plan_to_dict(build_run_plan(config))
    path = Path(config.target_path)
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        state = "exists: a run reuses it" if path.exists() else "a run creates it"
        click.echo(f"target file: {path} ({state}; plan writes nothing)")
        for line in describe(data):
            click.echo(line)
    try:
        safety.check_file_target(path, config.size_bytes)
    except safety.SafetyError as exc:
        raise click.ClickException(f"`run` would refuse this target: {exc}") from None


def describe_extensions(data: dict) -> list[str]:
    """Each extension's lines, as its module describes its entry of the plan's `extensions`."""
    return [
        line
        for name, entry in (data.get("extensions") or {}).items()
        for line in registry.hook(name, "describe_extension")(entry)
    ]


def _bs(value: int) -> str:
    return f"{value / 1024:g} KiB"


def _mix(read_pct: int) -> str:
    return f"{read_pct}/{100 - read_pct}"


def _segment_line(segment: dict) -> str:
    fmt_s = plan_module.format_seconds
    line = (
        f"  {segment['run_id']}: {segment['pattern']} {_bs(segment['block_size_bytes'])}, TC {segment['threads']} / "
        f"QD {segment['iodepth']}, {fmt_s(segment['runtime_s'])}"
    )
    if segment.get("idle_s") is not None:
        line += (
            f": {segment['bursts']} bursts of {segment['burst_s']:g} s after {segment['idle_s']:g} s of host idle "
            "(plus the first burst)"
        )
    return line + f", {' and '.join(segment['logs'])} logged every {segment['log_interval_ms']} ms"


def describe(data: dict, *, size_given: bool = True) -> list[str]:
    """The plan as text, one line per fact."""
    fmt_b, fmt_s = plan_module.format_bytes, plan_module.format_seconds
    ed = data["edition"]
    lines = [
        f"{data['specification']}, {ed['name']} edition, profile {data['profile']['name']}",
        f"  write cache {ed['write_cache']}, active range {ed['active_range_pct']}%, TC {data['threads']} / QD "
        f"{data['iodepth']} (edition: TC {ed['threads']} / QD {ed['iodepth']})",
        f"  target: {'a file (never purged)' if data['target_kind'] == 'file' else 'an NVMe namespace'}, capacity "
        f"{fmt_b(data['capacity_bytes'])}"
        + ("" if size_given else " (assumed; pass --size)")
        + f", active range {fmt_b(data['active_range_bytes'])}"
        + (f", LBA {data['lba_size_bytes']} bytes" if data.get("lba_size_bytes") else ""),
        f"  WIPC: {data['wipc']['rule']}: {fmt_b(data['wipc']['bytes'])} of {_bs(data['wipc']['block_size_bytes'])}"
        " sequential writes",
        f"  steady state: {data['steady_state']['rule']} (data excursion <= "
        f"{data['steady_state']['max_data_excursion']:.0%}, slope excursion <= "
        f"{data['steady_state']['max_slope_excursion']:.0%} of the window's mean)",
    ]
    for block in data["blocks"]:
        lines.append("")
        purged = block["purge"] and data["target_kind"] == "device"  # a file target is never purged
        head = f"{block['label']}: purge" if purged else block["label"]
        if block["wipc"]:
            head += f", WIPC ({block['wipc']['threads']} jobs, {_bs(block['wipc']['block_size_bytes'])} blocks)"
        if block["test"] in plan_module.EXTENSIONS:
            lines.append(f"{head}, then the grid described below")
            continue
        lines.append(head)
        lines.append(f"  round: {block['round']}")
        describe_series = registry.hook(block["test"], "describe_series")
        for series in block["series"]:
            if describe_series is not None:
                lines += describe_series(block["test"], series)
                continue
            cells = series["cells"]
            sizes = list(dict.fromkeys(c["block_size_bytes"] for c in cells))
            mixes = list(dict.fromkeys(c["read_pct"] for c in cells))
            pattern = ", ".join(dict.fromkeys(c["pattern"] for c in cells))
            lines.append(
                f"  {series['phase']}: {pattern}, TC {series['threads']} / QD {series['iodepth']}, "
                f"{series['runtime_s']:g} s per cell, {len(cells)} cell(s) per round"
            )
            lines.append(f"    R/W mixes (outer loop): {', '.join(_mix(m) for m in mixes)}")
            lines.append(f"    block sizes (inner loop): {', '.join(_bs(b) for b in sizes)}")
            for variable in series["tracking_variables"]:
                lines.append(
                    f"    tracking: {variable['metric']} of {_mix(variable['read_pct'])} @ "
                    f"{_bs(variable['block_size_bytes'])} ({variable['id']})"
                )
            lines.append(f"    stop: {series['stop_rule']}")
        for segment in block.get("segments") or []:
            lines.append(_segment_line(segment))
        if describe_block := registry.hook(block["test"], "describe_block"):
            lines += describe_block(block)
        for skipped in data.get("skipped_cells") or []:
            if skipped["test"] == block["test"]:
                lines.append(
                    f"    SKIPPED: {skipped['pattern']} {_mix(skipped['read_pct'])} @ "
                    f"{_bs(skipped['block_size_bytes'])}: {skipped['reason']}"
                )
    lines += describe_extensions(data)
    estimate = data["estimate"]
    lines += [
        "",
        f"estimated duration: {fmt_s(estimate['duration_s']['min'])} to {fmt_s(estimate['duration_s']['max'])} "
        f"({estimate['fio_runs']['min']} to {estimate['fio_runs']['max']} fio runs)",
        f"estimated bundle size: {fmt_b(estimate['bundle_bytes']['min'])} to {fmt_b(estimate['bundle_bytes']['max'])}",
        "  assuming " + "; ".join(estimate["assumptions"]),
    ]
    compliance = data["compliance"]
    if compliance["compliant"]:
        lines.append("compliance: follows the PTS (a file target or a failed device setting can still change this)")
    else:
        lines.append("compliance: NOT a PTS result:")
        lines += [f"  - {reason}" for reason in compliance["reasons"]]
    if data.get("extensions"):
        lines.append(f"  the {', '.join(data['extensions'])} is an nvmedb extension: never a PTS result or compliance")
    return lines
