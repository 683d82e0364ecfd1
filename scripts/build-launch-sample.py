#!/usr/bin/env python3
"""Build importers/data/launch/: the SSSPT runs a fresh site imports (manage.py seed_launch_sample).

Reads a checkout of https://github.com/ljishen/SSSPT at COMMIT and writes, byte for byte the same on every build:
- ssspt-launch-sample.tar.xz: README.md (the attribution below), LICENSE-SSSPT (SSSPT's LICENSE) and
  platforms/<run>/… (SSSPT's analysis/data/platforms/<run>/…, every file of each run copied unchanged);
- LICENSE-SSSPT and README.md beside it, the same files as in the archive.

Example:
    git clone https://github.com/ljishen/SSSPT ../SSSPT && git -C ../SSSPT checkout 0e9fe2e949a4e6024167e56631939f6614c7e805
    python3 scripts/build-launch-sample.py ../SSSPT
"""

from __future__ import annotations

import argparse
import io
import lzma
import subprocess
import sys
import tarfile
from pathlib import Path

REPOSITORY = "https://github.com/ljishen/SSSPT"
COMMIT = "0e9fe2e949a4e6024167e56631939f6614c7e805"
COMMIT_TIME = 1553836238  # the commit's own time (2019-03-29 05:10:38 UTC): every member's mtime
PLATFORMS = "analysis/data/platforms"
ARCHIVE = "ssspt-launch-sample.tar.xz"
LICENSE = "LICENSE-SSSPT"
OUT = Path(__file__).resolve().parent.parent / "importers" / "data" / "launch"

# One run of each test per drive model, by the drive table of each run's README.md (not by the host's folder: both
# models ran on both hosts). Each drive's runs come from one host; each recorded its preconditioning (wipc_* files).
RUNS = {
    "hp/iops/1": (
        "Toshiba HG6 THNSNJ256G8NU (unit 15NS100WT9JW), HP x86 host, kernel 4.4.0-133: IOPS\n  (SSSPT's authors "
        "later set this unit aside for performance oscillation: `rockpro64/iops/1/README.md` in SSSPT)"
    ),
    "hp/throughput/1": "the same unit, host and kernel: throughput (128 KiB and 1024 KiB)",
    "hp/lat/1": "Toshiba HG6 THNSNJ256G8NU (unit 55MS101IT9JW), the same HP host, kernel 4.4.132: latency",
    "rockpro64/iops/5": "Toshiba HG6 THNSNJ128G8NU (unit 75AS1011T9HW), Jianshen Liu's RockPro64 board: IOPS",
    "rockpro64/throughput/5": "the same unit and board: throughput",
    "rockpro64/lat/2": "the same unit and board: latency",
}

README = """\
# The launch sample: SSSPT's published PTS runs of two drives

A fresh nvmedb site (`make run` on an empty database, or `manage.py seed_launch_sample`) imports the runs in
`{archive}` so that its pages show real results: two drive models, each with an IOPS, a
throughput and a latency run.

## Source and licence

Every file under `platforms/` is a file of the SSSPT project, copied unchanged:

- repository: {repository}
- commit: {commit}
- folder: `{platforms}/` (`platforms/<run>/` here is `{platforms}/<run>/` there)
- licence: MIT, Copyright (c) 2018 Jianshen Liu; the full text is `{license}` (SSSPT's `LICENSE`), beside this file
  and in the archive.

The runs (the drive named by each run's own README.md):

{runs}

The site labels each imported run "Imported from ssspt results (MIT)", links it to its folder at that commit and
re-derives its steady state; see "Imported results" in `docs/methodology.md`. SSSPT's other runs (its whole
`{platforms}/`, 189 MB) are imported from a checkout with `manage.py import_tree`: see "Seeding a
fresh deployment" in the repository's README.md.

## Rebuilding

`python3 scripts/build-launch-sample.py <SSSPT checkout at {short}>` writes the archive, `{license}` and this file
again, byte for byte the same: members in name order, the commit's time as every mtime, no owners, xz preset 9e.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help=f"a checkout of {REPOSITORY} at {COMMIT[:7]}")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write (default: importers/data/launch)")
    args = parser.parse_args(argv)
    checkout: Path = args.checkout
    problem = check_checkout(checkout)
    if problem:
        print(f"build-launch-sample: {problem}", file=sys.stderr)
        return 1
    license_text = (checkout / "LICENSE").read_bytes()
    readme = render_readme().encode()
    members = {"README.md": readme, LICENSE: license_text}
    for run in RUNS:
        folder = checkout / PLATFORMS / run
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                print(f"build-launch-sample: {path} is not a regular file", file=sys.stderr)
                return 1
            if path.is_file():
                members[f"platforms/{run}/{path.relative_to(folder).as_posix()}"] = path.read_bytes()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / ARCHIVE).write_bytes(archive(members))
    (args.out / LICENSE).write_bytes(license_text)
    (args.out / "README.md").write_bytes(readme)
    size = (args.out / ARCHIVE).stat().st_size
    print(f"wrote {args.out / ARCHIVE}: {len(members)} files, {size} bytes")
    return 0


def check_checkout(checkout: Path) -> str:
    """Why `checkout` is not SSSPT at COMMIT ("" when it is, or is a copy without .git whose runs are all there)."""
    missing = [run for run in RUNS if not (checkout / PLATFORMS / run).is_dir()]
    if not (checkout / "LICENSE").is_file() or missing:
        return f"{checkout} is not an SSSPT checkout: no LICENSE or no {PLATFORMS}/{', '.join(missing) or '…'}"
    if (checkout / ".git").exists():
        head = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if head != COMMIT:
            return f"{checkout} is at {head or 'an unknown commit'}, not {COMMIT}: git checkout {COMMIT}"
        changed = subprocess.run(
            ["git", "-C", str(checkout), "status", "--porcelain", "--", "LICENSE", PLATFORMS],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        if changed:
            return f"{checkout} has local changes under {PLATFORMS} or to LICENSE"
    return ""


def render_readme() -> str:
    runs = "\n".join(f"- `platforms/{run}/`: {what}" for run, what in RUNS.items())
    return README.format(
        archive=ARCHIVE,
        repository=REPOSITORY,
        commit=COMMIT,
        short=COMMIT[:7],
        platforms=PLATFORMS,
        license=LICENSE,
        runs=runs,
    )


def archive(members: dict[str, bytes]) -> bytes:
    """A tar.xz of `members` that depends on nothing but their names and bytes: regular files only, in name order."""
    buffer = io.BytesIO()
    preset = 9 | lzma.PRESET_EXTREME
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=preset, format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(members):
            data = members[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = COMMIT_TIME
            info.mode = 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


if __name__ == "__main__":
    sys.exit(main())
