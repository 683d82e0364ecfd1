"""The `--surface-*` options of `plan` and `run`: the grid of the queue-depth x block-size surface (an nvmedb
extension). Every flag is checked here (sizes) and by nvmedb_client.pts.surface.validate (limits)."""

from __future__ import annotations

import functools

import click

from nvmedb_client import plan as plan_module
from nvmedb_client.pts import surface as surface_test

_FLAGS = (
    ("surface_min_bs", "--surface-min-bs", "Smallest block size (power of two, default 4KiB; quick 4KiB)."),
    ("surface_max_bs", "--surface-max-bs", "Largest block size (power of two, at most 64MiB; quick 1MiB)."),
    ("surface_bs_step", "--surface-bs-step", "Factor between block sizes (power of two >= 2, default 2; quick 16)."),
    ("surface_max_qd", "--surface-max-qd", "Largest queue depth (power of two, at most 1024; quick 16)."),
    ("surface_qd_step", "--surface-qd-step", "Factor between queue depths (power of two >= 2, default 2; quick 16)."),
    ("surface_patterns", "--surface-patterns", "Patterns, comma-separated: read,randread,write,randwrite."),
    ("surface_cell_s", "--surface-cell-s", "Seconds per cell (default 10; quick: half the quick cell time)."),
    ("surface_max_inflight", "--surface-max-inflight", "Skip cells whose bs x QD exceeds this (default 1GiB)."),
    (
        "surface_repetitions",
        "--surface-repetitions",
        "Interleaved runs of every cell (default 3; 1-2 for a trial, "
        "then the surface is marked not repeatable; at most 5).",
    ),
)


def _size(value: str, flag: str) -> int:
    try:
        return plan_module.parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=flag) from None


def _int(value: str, flag: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a whole number", param_hint=flag) from None


def options_from_flags(profile: str, flags: dict) -> surface_test.SurfaceOptions | None:
    """The grid the flags ask for, on top of the profile's default grid; None when no flag is given."""
    given = {name: value for name, value in flags.items() if value is not None}
    if not given:
        return None
    base = surface_test.default_options(profile).to_dict()
    for name, value in given.items():
        flag = "--" + name.replace("_", "-")
        if name in ("surface_min_bs", "surface_max_bs", "surface_max_inflight"):
            key = {"surface_max_inflight": "max_inflight_bytes"}.get(name, name.removeprefix("surface_"))
            base[key] = _size(value, flag)
        elif name == "surface_patterns":
            base["patterns"] = [p.strip() for p in value.split(",") if p.strip()]
        elif name == "surface_cell_s":
            try:
                base["cell_s"] = float(value)
            except ValueError:
                raise click.BadParameter(f"{value!r} is not a number of seconds", param_hint=flag) from None
        else:
            base[name.removeprefix("surface_")] = _int(value, flag)
    return surface_test.SurfaceOptions.from_dict(base)


def surface_options(command):
    """Add the --surface-* flags to a click command; it receives them as one `surface_flags` dict."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        kwargs["surface_flags"] = {name: kwargs.pop(name) for name, _, _ in _FLAGS}
        return command(*args, **kwargs)

    for name, flag, help_text in reversed(_FLAGS):
        wrapper = click.option(flag, name, default=None, metavar="VALUE", help=help_text)(wrapper)
    return wrapper
