"""A real quick run of the client whose ws-vod samples fio runs rate-limited (shared by the client's and the server's
tests). Unthrottled, every half-second sample on a small file reads its whole slice, so every sample would start
again at 0 and the carried positions could not be seen. Only fio's copy of each ws-vod job file is limited; the job
files the run keeps in its bundle are the client's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

FIO_WRAPPER = """#!{python}
import os, sys
args = sys.argv[1:]
if args and os.path.basename(args[-1]).startswith("ws-vod-r"):
    text = open(args[-1]).read().replace("[global]\\n", "[global]\\nrate=8m,1m\\n", 1)
    copy = os.path.join({rated!r}, os.path.basename(args[-1]))
    open(copy, "w").write(text)
    args[-1] = copy
os.execv({fio!r}, [{fio!r}, *args])
"""


def throttled_quick_run(base: Path, tests: str) -> tuple[dict, Path]:
    """Runs `nvmedb-client run --profile quick --tests TESTS` on a 64 MiB file under `base`; returns its --json
    answer and the folder of the rate-limited job files fio ran."""
    (base / "bin").mkdir()
    rated = base / "rated"
    rated.mkdir()
    wrapper = base / "bin" / "fio"
    wrapper.write_text(FIO_WRAPPER.format(python=sys.executable, rated=str(rated), fio=shutil.which("fio")))
    wrapper.chmod(0o755)
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config"), "NVMEDB_QUICK_CELL_S": "0.5",
           "PATH": f"{base / 'bin'}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", "from nvmedb_client.cli import main; main()", "run", "--target-file",
         str(base / "target.img"), "--size", "64MiB", "--profile", "quick", "--tests", tests,
         "--out", str(base / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout), rated
