"""`nvmedb-client run`: run the plan on a device or a test file and write the signed bundle."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import click

from nvmedb_client import device as device_module
from nvmedb_client import namespaces, safety, signing
from nvmedb_client import runner as runner_module
from nvmedb_client.bundle import BundleError
from nvmedb_client.cli import exit_codes
from nvmedb_client.cli.plan import build_run_plan, file_target_options, new_run_config, test_selection_options
from nvmedb_client.cli.surface_options import surface_options
from nvmedb_client.progress import make_reporter
from nvmedb_client.system import commands, nvme


class RunRefused(click.ClickException):
    """Nothing was written: the target or the machine is not fit for the run."""

    def __init__(self, message: str, exit_code: int = exit_codes.UNSAFE_TARGET):
        super().__init__(message)
        self.exit_code = exit_code


@click.command()
@click.option(
    "--device", metavar="DEV", help="The NVMe namespace to test, e.g. /dev/nvme0n1. ALL ITS DATA IS DESTROYED."
)
@file_target_options()
@test_selection_options
@click.option("--threads", type=click.IntRange(min=1), help="Override the edition's thread count (recorded).")
@click.option("--iodepth", type=click.IntRange(min=1), help="Override the edition's queue depth (recorded).")
@click.option("--max-rounds", type=click.IntRange(min=1), help="Override the round limit of 25 (recorded).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the run directory and the bundle [default: here; with --resume, the run directory's parent].",
)
@click.option(
    "--resume",
    "resume_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Continue an interrupted run directory; its settings are used, test options are ignored.",
)
@click.option(
    "--yes-destroy-data",
    "confirm_serial",
    metavar="SERIAL",
    help="Confirm without a prompt: the serial; SERIAL+N also lets the purge erase the N other namespaces that a "
    "Format (FNA bit 0) or Sanitize of this drive erases.",
)
@click.option("--upload", is_flag=True, help="Upload the bundle when the run finishes.")
@click.option("--server", metavar="URL", help="The nvmedb site for --upload (default: the one you logged in to).")
@click.option(
    "--wait",
    is_flag=True,
    help="With --upload, wait until the site has processed the bundle, then print how the unit compares with "
    "the others of its model (a trial, --target-file or --profile quick, is published to you alone).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (progress goes to stderr).")
@click.option("--system-root", type=click.Path(path_type=Path), default=Path("/"), hidden=True)
@surface_options
def run(
    device,
    target_file,
    size,
    tests,
    edition,
    profile,
    threads,
    iodepth,
    max_rounds,
    out_dir,
    resume_dir,
    confirm_serial,
    upload,
    server,
    wait,
    as_json,
    system_root,
    surface_flags,
) -> None:
    """Run the SNIA PTS v2.0.2 plan with fio and write a signed result bundle.

    A device run destroys every byte on the drive: the client refuses mounted, system, swap and RAID/LVM members, and
    asks you to type the drive's serial number (or pass --yes-destroy-data=SERIAL). When the best purge would also erase
    other namespaces of the controller or subsystem, it names them; SERIAL+N confirms them too, the bare serial keeps
    the purge to the one namespace. A --target-file run needs no root,
    never purges, and its bundle is marked as a file-target result. Ctrl-C stops cleanly; --resume continues.

    \b
    Example:
      sudo nvmedb-client run --device /dev/nvme0n1 --upload
      sudo nvmedb-client run --device /dev/nvme0n1 --edition client --yes-destroy-data=S4EWNX0R123456
      nvmedb-client run --target-file /tmp/nvmedb.img --size 256MiB --profile quick --out runs
      nvmedb-client run --resume runs/nvmedb-run-20261123T010203Z
    """
    if resume_dir is not None:
        try:
            config = runner_module.config_from_state(runner_module.load_state(resume_dir))
        except runner_module.RunError as exc:
            raise click.ClickException(str(exc)) from None
        out_dir = out_dir or resume_dir.parent
    else:
        config = new_run_config(
            device=device, target_file=target_file, size=size, tests=tests, edition=edition, profile=profile,
            threads=threads, iodepth=iodepth, max_rounds=max_rounds, surface_flags=surface_flags,
        )  # fmt: skip
        out_dir = out_dir or Path.cwd()

    if config.target_kind == "device":
        _check_device(config, confirm_serial=confirm_serial, system_root=system_root)
        if resume_dir is not None:
            runner_module.save_config(resume_dir, config)
    else:
        _check_file(config)

    try:
        key = signing.load_or_create_signing_key()
    except (OSError, signing.SigningKeyError) as exc:
        raise click.ClickException(f"cannot load or create the signing key: {exc}") from None

    if resume_dir is None:
        try:
            resume_dir = runner_module.create_run_dir(config=config, out_dir=out_dir)
        except (OSError, ValueError) as exc:
            raise click.ClickException(f"cannot create the run directory in {out_dir}: {exc}") from None
    run_dir = resume_dir
    _log_to(run_dir / "client.log")

    reporter = make_reporter(json_mode=as_json)
    echo = (lambda text: click.echo(text, err=True)) if as_json else click.echo
    try:
        bundle_path = runner_module.execute_run(run_dir=run_dir, out_dir=out_dir, reporter=reporter, signing_key=key)
    except (runner_module.RunInterrupted, KeyboardInterrupt) as exc:
        reporter.close()
        echo(f"Interrupted ({str(exc) or 'Ctrl-C'}). Continue with: nvmedb-client run --resume {run_dir}")
        sys.exit(exit_codes.INTERRUPTED)
    except (runner_module.RunError, BundleError) as exc:
        reporter.close()
        raise click.ClickException(
            f"{exc}\nThe run directory {run_dir} is kept; fix the problem and continue with "
            f"`nvmedb-client run --resume {run_dir}`."
        ) from None
    reporter.close()

    if as_json:
        click.echo(json.dumps({"bundle": str(bundle_path), "run_dir": str(run_dir)}, indent=2))
    else:
        click.echo(f"Bundle written: {bundle_path}")
        click.echo(f"Check it with: nvmedb-client verify {bundle_path}")

    if upload:
        # why: the HTTP client (httpx) is loaded only when the run is to be uploaded
        from nvmedb_client.api import upload_bundle

        code = upload_bundle(bundle_path, server=server, wait=wait, echo=echo)
        if code != exit_codes.OK:
            sys.exit(code)


def _check_file(config) -> None:
    try:
        safety.check_file_target(Path(config.target_path), config.size_bytes)
        safety.require_tool("fio")
    except safety.MissingToolError as exc:
        raise RunRefused(str(exc), exit_codes.MISSING_TOOL) from None
    except safety.SafetyError as exc:
        raise RunRefused(str(exc)) from None


def _check_device(config, *, confirm_serial: str | None, system_root: Path) -> None:
    """Every refusal happens here, before anything is written to the device."""
    try:
        safety.check_device_safe(config.target_path, root=system_root)
        safety.require_root()
        safety.require_tool("fio")
        safety.require_tool("nvme")
    except safety.MissingToolError as exc:
        raise RunRefused(str(exc), exit_codes.MISSING_TOOL) from None
    except safety.NotRootError as exc:
        raise RunRefused(str(exc), exit_codes.FAILURE) from None
    except safety.SafetyError as exc:
        raise RunRefused(str(exc)) from None

    ctrl = commands.run_command(["nvme", "id-ctrl", config.target_path, "-o", "json"], timeout=60)
    ns = commands.run_command(["nvme", "id-ns", config.target_path, "-o", "json"], timeout=60)
    if not ctrl.ok or not ns.ok:
        raise RunRefused(f"cannot identify {config.target_path}: {(ctrl if not ctrl.ok else ns).failure_reason()}")
    try:
        id_ctrl = nvme.parse_id_ctrl(ctrl.stdout)
        id_ns = nvme.parse_id_ns(ns.stdout)
    except ValueError as exc:
        raise RunRefused(f"cannot identify {config.target_path}: {exc}") from None
    capacity = id_ns.get("size_bytes")
    if not capacity:
        raise RunRefused(f"{config.target_path} reports no namespace size: {id_ns['missing'].get('size_bytes')}")
    if config.size_bytes and config.size_bytes != capacity:
        raise RunRefused(
            f"{config.target_path} now reports {capacity} bytes, not the {config.size_bytes} bytes of this run; "
            "it is not the same namespace."
        )
    config.size_bytes = capacity
    config.lba_size_bytes = id_ns.get("lba_data_size_bytes")
    build_run_plan(config)

    serial = id_ctrl.get("serial")
    model = id_ctrl.get("model") or "the drive"
    others, notes = _wide_purge_namespaces(config.target_path, id_ctrl, id_ns, system_root)
    typed = confirm_serial
    if typed is None:
        if not stdin_is_terminal():
            raise RunRefused(
                "There is no terminal to confirm the destruction: pass --yes-destroy-data=SERIAL "
                f"with the serial number of {config.target_path}"
                + (f" (or SERIAL+{len(others)} to let the purge erase {_dev_list(others)} too)." if others else ".")
            )
        typed = click.prompt(_confirmation_text(config.target_path, model, serial, others, notes))
    try:
        config.erase_confirmed = safety.confirm_destruction(serial, typed, others=others)
    except safety.ConfirmationError as exc:
        raise RunRefused(str(exc)) from None
    config.system_root = str(system_root)
    if others and not config.erase_confirmed:
        click.echo(
            f"Only {config.target_path} will be erased: the purge uses a per-namespace method (recorded in the bundle).",
            err=True,
        )


def _wide_purge_namespaces(device: str, id_ctrl: dict, id_ns: dict, root: Path) -> tuple[list[str], list[str]]:
    """Other namespaces a controller- or subsystem-wide purge would erase and that may be offered for erasure, and
    notes on the wide purges that are not offered (a namespace in use, or unknown sharing)."""
    target = namespaces.target_name(device, root)
    scopes = {m.scope for m in device_module.purge_attempts(device, id_ctrl, id_ns, nvme_version=None)}
    others: set[str] = set()
    notes = []
    list_text = None
    for scope in sorted(scopes - {"namespace"}):
        if list_text is None:
            listed = commands.run_command(["nvme", "list", "-o", "json"], timeout=60)
            list_text = listed.stdout if listed.ok else ""
        names, refusal = namespaces.erase_scope_check(device, scope, confirmed=None, root=root, list_text=list_text)
        if refusal:
            notes.append(f"{refusal.rstrip('.')}, so it is not used")
        else:
            others |= {name for name in names or [] if name != target}
    return sorted(others), notes


def _dev_list(names: list[str]) -> str:
    return ", ".join(f"/dev/{name}" for name in names)


def _confirmation_text(device: str, model: str, serial: str | None, others: list[str], notes: list[str]) -> str:
    text = f"ALL DATA on {device} ({model}, serial {serial}) will be destroyed."
    for note in notes:
        text += f"\n{note[0].upper()}{note[1:]}."
    if not others:
        return text + " Type its serial number to go on"
    return (
        f"{text}\nThe best purge of this drive (Format with FNA bit 0, or Sanitize) ALSO ERASES {_dev_list(others)}."
        f"\nType the serial number to erase only {device} (a per-namespace purge is used), "
        f"or the serial number followed by +{len(others)} (e.g. {serial}+{len(others)}) to erase all of them"
    )


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def _log_to(path: Path) -> None:
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    package_logger = logging.getLogger("nvmedb_client")
    package_logger.addHandler(handler)
    package_logger.setLevel(logging.INFO)
