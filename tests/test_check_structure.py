"""scripts/check_structure.py on small fake repositories: each rule fires on the tree that breaks it, a clean tree
passes, and what it must not count (tests, migrations, TYPE_CHECKING imports, third-party imports) stays out."""

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "check_structure.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("check_structure", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_structure"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


check_structure = _load_script()


def make_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


# A small site: two apps (one found by its apps.py alone) and the client, imports one way only.
CLEAN = {
    "nvmedb/__init__.py": "",
    "nvmedb/settings.py": "import os\n",
    "submissions/__init__.py": "",
    "submissions/apps.py": "",
    "submissions/hooks.py": "INGEST = []\n",
    "submissions/pipeline.py": "from . import hooks\nfrom nvmedb_client import bundle\n",
    "analysis/__init__.py": "",
    "analysis/apps.py": """
        def ready():
            # why: Django loads the apps before the models; the hook is filled once they are ready
            from submissions import hooks
            from analysis.ingest import ingest  # why: same reason
            hooks.INGEST.append(ingest)
    """,
    "analysis/ingest.py": "import json\n\nfrom nvmedb import settings\nfrom submissions.hooks import INGEST\n",
    "importers/__init__.py": "",
    "importers/apps.py": "from analysis import ingest\n",
    "client/src/nvmedb_client/__init__.py": "",
    "client/src/nvmedb_client/bundle.py": "from nvmedb_client.units import GB\n",
    "client/src/nvmedb_client/units.py": "GB = 10**9\n",
    "client/src/nvmedb_client/plan.py": "from .units import GB\n",
    "client/src/nvmedb_client/pts/__init__.py": "",
    "client/src/nvmedb_client/pts/iops.py": "from ..plan import GB\n",
}


def test_a_clean_tree_passes_and_counts_what_it_read(tmp_path, capsys):
    root = make_tree(tmp_path, CLEAN)
    report = check_structure.check(root)
    assert report.problems == []
    modules = set(report.modules)
    assert {"analysis.ingest", "importers.apps", "submissions.pipeline", "nvmedb_client.pts.iops"} <= modules
    edges = {(i.module, i.target) for i in report.imports}
    # relative imports resolved: `from . import hooks` (a module of the package), `from ..plan import GB` (two up)
    assert ("submissions.pipeline", "submissions.hooks") in edges
    assert ("nvmedb_client.pts.iops", "nvmedb_client.plan") in edges
    assert ("nvmedb_client.bundle", "nvmedb_client.units") in edges
    assert not any(target in {"os", "json"} for _, target in edges)  # third-party and stdlib are not project code

    assert check_structure.main(["--root", str(root)]) == 0
    summary = capsys.readouterr().out.strip().splitlines()
    assert len(summary) == 1
    assert "0 import cycles" in summary[0] and "0 function-level imports" in summary[0]


def test_a_cycle_between_two_apps_fails_with_each_hop_located(tmp_path, capsys):
    root = make_tree(
        tmp_path,
        {
            **CLEAN,
            "submissions/services.py": """
                from analysis import ingest

                def publish():
                    return ingest
            """,
            "analysis/ingest.py": """
                def run():
                    # why: looks documented, but a documented import still closes the cycle
                    from submissions.services import publish
                    return publish
            """,
        },
    )
    assert check_structure.main(["--root", str(root)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    cycles = [line for line in lines if "import cycle that" in line]
    assert len(cycles) == 1
    assert "spans apps analysis, submissions" in cycles[0]
    assert "analysis/ingest.py:4" in cycles[0] and "submissions/services.py:2" in cycles[0]
    assert "fix:" in cycles[0]
    assert "1 import cycles" in lines[-1]

    assert check_structure.main(["--root", str(root), "--members"]) == 1
    listed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  modules of the cycle")]
    assert listed == ["  modules of the cycle through analysis.ingest: analysis.ingest, submissions.services"]


def test_a_cycle_inside_one_app_is_allowed(tmp_path):
    root = make_tree(
        tmp_path,
        {**CLEAN, "analysis/a.py": "from analysis import b\n", "analysis/b.py": "from analysis import a\n"},
    )
    assert check_structure.check(root).cycles == []


def test_a_cycle_through_the_clients_plan_fails_even_inside_the_client(tmp_path):
    root = make_tree(
        tmp_path,
        {
            **CLEAN,
            "client/src/nvmedb_client/plan.py": """
                from .units import GB

                def jobs():
                    from nvmedb_client.pts import iops  # why: a why does not excuse a cycle
                    return iops, GB
            """,
        },
    )
    report = check_structure.check(root)
    assert len(report.cycles) == 1
    assert "goes through nvmedb_client.plan" in report.cycles[0]
    assert report.cycles[0].startswith("client/src/nvmedb_client/p")


def test_a_project_import_inside_a_function_needs_a_why(tmp_path):
    root = make_tree(
        tmp_path,
        {
            **CLEAN,
            "analysis/views.py": """
                import json


                def page():
                    import csv  # the standard library is not project code

                    from analysis import ingest
                    return ingest, csv, json


                class Export:
                    def rows(self):
                        from .ingest import INGEST
                        return INGEST

                    def later(self):
                        # why: start-up cost, the exporter loads numpy
                        from analysis import ingest
                        return ingest

                    def text(self):
                        return "# why: a string is not a comment"; from analysis import apps
            """,
        },
    )
    report = check_structure.check(root)
    located = sorted(line.split(": ")[0] for line in report.hidden_imports)
    assert located == ["analysis/views.py:14", "analysis/views.py:23", "analysis/views.py:8"]
    assert all("# why:" in line and "fix:" in line for line in report.hidden_imports)


def test_one_why_heads_a_block_of_imports_but_not_what_follows_other_code(tmp_path):
    root = make_tree(
        tmp_path,
        {
            **CLEAN,
            "analysis/fit.py": """
                def fit():
                    # why: the fit loads numpy; a web process imports this module only to queue it
                    from analysis import ingest
                    from analysis.apps import AnalysisConfig
                    from analysis import views

                    value = 1
                    from analysis import models
                    return ingest, AnalysisConfig, views, models, value
            """,
        },
    )
    report = check_structure.check(root)
    assert [line.split(": ")[0] for line in report.hidden_imports] == ["analysis/fit.py:9"]


def test_imports_that_never_run_or_live_outside_the_site_are_not_counted(tmp_path):
    root = make_tree(
        tmp_path,
        {
            **CLEAN,
            "analysis/typed.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from submissions import services
                else:
                    services = None
            """,
            "submissions/services.py": "from analysis import typed\n",
            "analysis/tests/test_x.py": "def test():\n    from analysis import ingest\n" + "x = 1\n" * 600,
            "analysis/migrations/0001_initial.py": "def forwards():\n    from analysis import ingest\n",
            "bench/publish.py": "def run():\n    from analysis import ingest\n" + "x = 1\n" * 600,
            "scripts/tool.py": "def run():\n    from analysis import ingest\n",
        },
    )
    report = check_structure.check(root)
    assert report.problems == []
    assert not any("tests" in m or "migrations" in m or m.startswith(("bench", "scripts")) for m in report.modules)


def test_a_file_over_500_lines_fails_and_500_passes(tmp_path):
    root = make_tree(
        tmp_path,
        {
            **CLEAN,
            "analysis/long.py": "x = 1\n" * 501,
            "analysis/limit.py": "x = 1\n" * 500,
            "client/src/nvmedb_client/runner.py": "x = 1\n" * 600,
        },
    )
    report = check_structure.check(root)
    assert sorted(line.split(":")[0] for line in report.long_files) == [
        "analysis/long.py",
        "client/src/nvmedb_client/runner.py",
    ]
    assert "501 lines" in " ".join(report.long_files)


def test_a_file_that_cannot_be_parsed_is_a_problem_not_a_crash(tmp_path):
    root = make_tree(tmp_path, {**CLEAN, "analysis/broken.py": "def f(:\n"})
    report = check_structure.check(root)
    assert len(report.problems) == 1
    assert report.problems[0].startswith("analysis/broken.py:1: cannot be parsed")


@pytest.mark.parametrize("clean", [True, False])
def test_the_script_runs_from_the_command_line(tmp_path, clean):
    files = dict(CLEAN) if clean else {**CLEAN, "submissions/long.py": "x = 1\n" * 501}
    root = make_tree(tmp_path, files)
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == (0 if clean else 1), result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("check_structure: ")
    assert ("submissions/long.py:1: 501 lines" in result.stdout) is not clean
