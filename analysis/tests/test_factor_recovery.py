"""A small run of bench/factor_recovery.py: bundles of one drive model with a Gen2 x4 slot (and a host CPU only that
box has) and +25 % spare injected, uploaded through the API, validated, ingested and refitted after commit. The
injected link cap and spare effects lie in their intervals, no unit is held, no normal unit is explained, and the
documented pandas/statsmodels refit of the run_results export gives the factor_effects figures."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import pytest

from analysis.models import FactorEffect
from analysis.tests.test_datasets_run_results import refit_snippet

pytestmark = pytest.mark.django_db
BENCH = Path(__file__).resolve().parents[2] / "bench" / "factor_recovery.py"


def bench():
    if "factor_recovery" not in sys.modules:
        spec = importlib.util.spec_from_file_location("factor_recovery", BENCH)
        module = importlib.util.module_from_spec(spec)
        sys.modules["factor_recovery"] = module
        spec.loader.exec_module(module)
    return sys.modules["factor_recovery"]


@pytest.fixture
def storage(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp_path / "storage")}},
    }
    settings.NVMEDB_REVIEW_FIRST_N = 0


def test_link_cap_and_spare_are_recovered_through_the_upload_path(
    storage, shared_samples, tmp_path, django_capture_on_commit_callbacks, client
):
    fr = bench()
    levels = tuple(level for level in fr.LEVELS if level.factor in ("link_limited", "spare_fraction"))

    def send(api, path):
        with django_capture_on_commit_callbacks(execute=True):
            return fr.post(api, path)

    report = fr.run(1, 5, seed=2, samples=shared_samples, work=tmp_path / "bundles", send=send, levels=levels)
    text = fr.render(report, 1, 5)
    assert report.held == [], text
    assert {line.factor: line.passed for line in report.lines} == {
        "link_limited": True, "spare_fraction": True, "host_cpu": True,
    }, text  # fmt: skip
    assert report.false_explanations == [] and report.not_named == [] and report.ok, text
    assert "overall: PASS" in text

    csv_text = b"".join(client.get("/datasets/run_results.csv").streaming_content).decode()

    code = refit_snippet().replace('pd.read_csv("run_results.csv")', "pd.read_csv(source)")
    code = code.replace("'some-drive'", repr(report.drive_slug)).replace('"iops_4k_read"', repr(fr.MIX))
    scope = {"source": io.StringIO(csv_text)}
    exec(compile(code.replace("print(", "found = ("), "datasets.md", "exec"), scope)  # noqa: S102
    link = FactorEffect.objects.get(drive_model__slug=report.drive_slug, metric=fr.MIX, factor="link_limited")
    ratio, low, high = scope["found"].loc["link_limited"]
    assert (ratio, low, high) == (
        pytest.approx(link.ratio, rel=1e-6), pytest.approx(link.ci_low, rel=1e-6), pytest.approx(link.ci_high, rel=1e-6)
    )  # fmt: skip


def test_a_missed_goal_fails_the_run():
    fr = bench()
    report = fr.Report(held=["unit: held"])
    assert not report.ok and "factor units held: 1 (goal 0) FAIL" in fr.render(report, 1, 7)
    line = fr.FactorLine("x", "throttled", fr.WRITE, 0.8, 0.9, 0.85, 0.95, "estimated", False)
    assert not fr.Report(lines=[line]).ok
