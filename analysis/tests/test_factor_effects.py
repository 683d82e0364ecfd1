"""The factor model wired to the database: rows read from public runs (analysis.factor_rows), effects stored after a
publish or a withdrawal (analysis.factor_effects, by a task after commit), exported and shown on the drive page."""

from __future__ import annotations

import csv
import io
import json
import random
import re

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models import F

from analysis import tasks
from analysis.factor_effects import refresh_factor_effects
from analysis.factor_rows import drive_rows, throughput
from analysis.models import DriveModel, FactorEffect, FactorFitSummary
from analysis.tests.factories import (
    DriveModelFactory,
    FlagFactory,
    HostFactory,
    PcieLinkFactory,
    SubmissionFactory,
    TestRunFactory,
    UserFactory,
)
from datasets.tables import TABLES
from submissions.services import submission_approve, submission_withdraw

pytestmark = pytest.mark.django_db

SEQ, RW = "bw_1m_read", "iops_4k_write"
GEN2_USABLE = 5e9 * 4 * 0.8 / 8 * 256 / 280  # Gen2 x4 at MaxPayload 256: about 1.83 GB/s


def gen2_link():
    return PcieLinkFactory(
        capable_speed_gts=5.0, speed_gts=5.0, generation=2, path_speed_gts=5.0, usable_bandwidth_bytes_per_s=GEN2_USABLE
    )


def population(*, status_of=None) -> dict:
    """Seven normal units, a unit in a Gen2 x4 slot (its link at capability: the slot is Gen2), a throttled unit and
    two units on an older firmware; two runs each, four contributors. Returns the drive and each unit's submission."""
    rng = random.Random(7)
    drive = DriveModelFactory()
    users = [UserFactory() for _ in range(4)]
    specs = [(f"n{i}", {}, 1.0) for i in range(7)]
    specs += [("gen2", {"link": "gen2"}, {SEQ: 0.25, RW: 1.0}), ("hot", {"throttled": True}, 0.8)]
    specs += [(f"old{i}", {"firmware": "1.4.2"}, 0.93) for i in range(2)]
    submissions = {}
    for number, (name, conditions, ratio) in enumerate(specs):
        status = (status_of or {}).get(name, "published")
        submission = SubmissionFactory(uploader=users[number % 4], status=status)
        submissions[name] = submission
        unit_noise = rng.gauss(0, 0.01)
        link = gen2_link() if conditions.get("link") == "gen2" else PcieLinkFactory()
        firmware = conditions.get("firmware", "2.1.0")
        unit = None
        for test in ("tp", "iops"):  # one run of each test per submission
            ratios = ratio if isinstance(ratio, dict) else {SEQ: ratio, RW: ratio}
            headline = {
                key: base * ratios[key] * (1 + unit_noise + rng.gauss(0, 0.003))
                for key, base in ((SEQ, 6.5e9), (RW, 2.0e5))
            }
            extra = {"unit": unit} if unit else {}
            run = TestRunFactory(
                submission=submission, drive_model=drive, test=test, headline=headline, pcie_link=link,
                firmware__revision=firmware, max_temperature_k=320.0, percentage_used=3, overprovisioning=0.0,
                **extra,
            )  # fmt: skip
            unit = run.unit
            if conditions.get("throttled"):
                FlagFactory(submission=submission, test_run=run, kind="thermal_throttle", reason="ran hot")
    return {"drive": drive, "submissions": submissions, "users": users}


def effects(drive, metric) -> dict[str, list[FactorEffect]]:
    found: dict[str, list[FactorEffect]] = {}
    for row in FactorEffect.objects.filter(drive_model=drive, metric=metric):
        found.setdefault(row.factor, []).append(row)
    return found


def test_the_rows_carry_unit_contributor_value_and_each_recorded_factor():
    world = population()
    rows = drive_rows(world["drive"])
    seq = rows.rows[SEQ]
    assert len(seq) == 22 and len({r.unit for r in seq}) == 11 and len({r.contributor for r in seq}) == 4
    gen2 = [r for r in seq if r.link == "Gen2 x4"]
    assert len(gen2) == 2 and all(r.link_limited and r.link_below_capability is False for r in gen2)
    assert not any(r.link_limited for r in seq if r.link == "Gen4 x4")
    # random write moves 0.8 GB/s, well within the Gen2 link: not limited by it
    assert not any(r.link_limited for r in rows.rows[RW])
    assert sum(r.throttled for r in seq) == 2 and all(r.throttled is False for r in seq if r.value > 6e9)
    assert {r.firmware for r in seq} == {"2.1.0", "1.4.2"}
    assert {r.spare_fraction for r in seq} == {0.0} and {r.percentage_used for r in seq} == {3.0}
    assert {r.kernel for r in seq} == {HostFactory.kernel} and {r.scheduler for r in seq} == {"none"}


def test_nothing_is_guessed_an_unknown_link_temperature_or_lone_unit_is_none():
    drive = DriveModelFactory()
    run = TestRunFactory(
        drive_model=drive, test="tp", headline={SEQ: 6e9}, pcie_link=None, max_temperature_k=None, scheduler=""
    )
    rows = drive_rows(drive)
    (row,) = rows.rows[SEQ]
    assert row.unit == run.unit_id and row.link_limited is None and row.link_below_capability is None
    assert row.throttled is None and row.scheduler is None and row.spare_fraction is None
    assert "usable bandwidth is not recorded" in rows.notes[SEQ][0]
    # a unit alone has nothing to be compared with: link-limited is unknown, not "no"
    other = DriveModelFactory()
    TestRunFactory(drive_model=other, test="tp", headline={SEQ: 6e9})
    assert drive_rows(other).rows[SEQ][0].link_limited is None
    assert "no other unit measured this metric" in drive_rows(other).notes[SEQ][0]


def test_trials_surface_runs_and_unpublished_runs_are_not_rows():
    world = population(status_of={"n0": "held"})
    drive = world["drive"]
    TestRunFactory(drive_model=drive, test="tp", headline={SEQ: 1e9}, profile="quick")
    TestRunFactory(drive_model=drive, test="surface", headline={SEQ: 1e9})
    assert len({r.unit for r in drive_rows(drive).rows[SEQ]}) == 10


def test_throughput_of_each_kind_of_headline():
    assert throughput("bw_1m_read", {"bw_1m_read": 5e9}) == 5e9
    assert throughput("iops_4k_read", {"iops_4k_read": 1e6}) == 4096e6
    assert throughput("iops_64k_65_35", {"iops_64k_65_35": 1e4}) == pytest.approx(65536e4 * 0.65)
    assert throughput("lat_4k_p9999", {"lat_4k_mean": 20_000.0, "lat_4k_p9999": 1e6}) == pytest.approx(4096 / 20e-6)
    assert throughput("lat_4k_p9999", {"lat_4k_p9999": 1e6}) is None


def test_approving_a_submission_refits_its_drive_after_commit_with_the_expected_statuses(
    django_capture_on_commit_callbacks,
):
    world = population(status_of={"old1": "held"})
    drive = world["drive"]
    staff = UserFactory(is_staff=True)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        submission_approve(submission=world["submissions"]["old1"], by=staff)
        assert not FactorEffect.objects.filter(drive_model=drive).exists()  # not inside the publishing transaction
    assert callbacks
    seq = effects(drive, SEQ)
    (link,) = seq["link_limited"]
    assert link.status == "indicative" and link.n_units == 1 and "1 unit — indicative" in link.note
    assert abs(link.ratio - 0.25) < 0.01 and link.ci_low < link.ratio < link.ci_high < 1
    (hot,) = seq["throttled"]
    assert hot.status == "indicative" and abs(hot.ratio - 0.8) < 0.03 and hot.ci_low < hot.ratio < hot.ci_high < 1
    (old,) = seq["firmware"]
    assert (old.status, old.level, old.n_units, old.reference) == ("estimated", "1.4.2", 2, "2.1.0")
    assert old.n_contributors == 2 and old.ci_low < old.ratio < old.ci_high and old.variance_share is not None
    for factor in ("link_below_capability", "spare_fraction", "percentage_used", "host_cpu", "kernel", "scheduler"):
        assert [r.status for r in seq[factor]] == ["constant"], factor
    assert effects(drive, RW)["link_limited"][0].status == "constant"
    fit = FactorFitSummary.objects.get(drive_model=drive, metric=SEQ)
    assert (fit.status, fit.n_units, fit.n_runs, fit.n_contributors) == ("fitted", 11, 22, 4)
    assert fit.r_squared > 0.9


def test_withdrawing_the_gen2_box_leaves_the_link_constant(django_capture_on_commit_callbacks):
    world = population()
    drive = world["drive"]
    refresh_factor_effects(drive)
    assert effects(drive, SEQ)["link_limited"][0].status == "indicative"
    gen2 = world["submissions"]["gen2"]
    with django_capture_on_commit_callbacks(execute=True):
        submission_withdraw(submission=gen2, by=gen2.uploader)
    assert [r.status for r in effects(drive, SEQ)["link_limited"]] == ["constant"]
    assert FactorFitSummary.objects.get(drive_model=drive, metric=SEQ).n_units == 10


def test_a_refit_queued_for_a_change_an_earlier_refit_read_fits_nothing(django_capture_on_commit_callbacks):
    world = population()
    drive = world["drive"]
    gen2, hot = world["submissions"]["gen2"], world["submissions"]["hot"]
    with django_capture_on_commit_callbacks(execute=True):
        submission_withdraw(submission=gen2, by=gen2.uploader)  # its refit runs after the commit
    first = FactorFitSummary.objects.get(drive_model=drive, metric=SEQ)
    drive.refresh_from_db()
    assert first.n_units == 10 and drive.factors_version == drive.data_version > 0
    assert tasks.refresh_factor_effects(drive.pk) is None  # a second refit queued for the same change
    assert FactorFitSummary.objects.get(drive_model=drive, metric=SEQ).pk == first.pk  # nothing was refitted
    with django_capture_on_commit_callbacks(execute=True):
        submission_withdraw(submission=hot, by=hot.uploader)  # a new change is fitted again
    assert FactorFitSummary.objects.get(drive_model=drive, metric=SEQ).n_units == 9
    assert refresh_factor_effects(drive) > 0  # the command's refit (a changed model) always fits


def test_a_fit_of_older_data_never_replaces_a_stored_fit_of_newer_data():
    world = population()
    drive = world["drive"]
    refresh_factor_effects(drive)
    before = set(FactorEffect.objects.filter(drive_model=drive).values_list("pk", flat=True))
    # what a refit that read version N finds when a refit of a later change wrote while it was fitting
    DriveModel.objects.filter(pk=drive.pk).update(factors_version=F("data_version") + 1)
    assert refresh_factor_effects(drive) is None
    assert set(FactorEffect.objects.filter(drive_model=drive).values_list("pk", flat=True)) == before


def test_a_drive_with_one_unit_has_too_few_units_and_no_ratio():
    drive = DriveModelFactory()
    run = TestRunFactory(drive_model=drive, test="tp", headline={SEQ: 6e9})
    TestRunFactory(drive_model=drive, unit=run.unit, test="tp", headline={SEQ: 6.1e9})
    refresh_factor_effects(drive)
    fit = FactorFitSummary.objects.get(drive_model=drive, metric=SEQ)
    assert fit.status == "too_few_units" and fit.n_units == 1
    assert not FactorEffect.objects.filter(drive_model=drive, ratio__isnull=False).exists()


def test_the_command_refits_every_drive(capsys):
    world = population()
    call_command("refresh_factor_effects")
    assert FactorEffect.objects.filter(drive_model=world["drive"], status="estimated").exists()
    assert "factor effect rows written" in capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_factor_effects_export_has_one_row_per_effect_with_its_interval(client, fmt):
    world = population()
    other = DriveModelFactory()
    TestRunFactory(drive_model=other, test="tp", headline={SEQ: 6e9})
    refresh_factor_effects(world["drive"])
    refresh_factor_effects(other)
    response = client.get(f"/datasets/factor_effects.{fmt}")
    assert response.status_code == 200
    body = b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(body)))
        assert list(rows[0]) == TABLES["factor_effects"].column_names
    else:
        rows = json.loads(body)
    expected = ["drive_slug", "drive_name", "vendor", "metric", "factor", "level", "ratio", "ci_low", "ci_high",
                "variance_share", "n_units", "n_contributors", "status", "note"]  # fmt: skip
    assert set(expected) <= set(rows[0])
    firmware = next(r for r in rows if r["metric"] == SEQ and r["factor"] == "firmware")
    assert firmware["drive_slug"] == world["drive"].slug and firmware["status"] == "estimated"
    assert float(firmware["ci_low"]) < float(firmware["ratio"]) < float(firmware["ci_high"])
    assert int(firmware["n_units"]) == 2 and firmware["level"] == "1.4.2"
    assert len(rows) == FactorEffect.objects.count()
    # a drive filter keeps that drive's effects only
    filtered = client.get(f"/datasets/factor_effects.json?drive={other.slug}")
    body = b"".join(filtered.streaming_content) if filtered.streaming else filtered.content
    assert {r["drive_slug"] for r in json.loads(body)} == {other.slug}


def factors_text(client, drive) -> tuple[str, str]:
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    section = html[html.index('id="factors-section"') : html.index("</section>", html.index('id="factors"'))]
    return section, " ".join(re.sub(r"<[^>]+>", " ", section).split())


def test_the_drive_page_shows_each_effect_with_its_interval_units_and_status(client):
    world = population()
    drive = world["drive"]
    refresh_factor_effects(drive)
    section, text = factors_text(client, drive)
    assert 'id="factor-effects"' in section
    rows = re.findall(r"<tr><td>(.*?)</tr>", section, re.S)
    assert 0 < len(rows) <= 6
    first = " ".join(re.sub(r"<[^>]+>", " ", rows[0]).split())
    # the Gen2 box explains most of sequential read's spread: its effect first, with its interval and its one unit
    assert first.startswith("1024 KiB sequential read link-limited −7") and "1 unit, 1 contributor" in first
    assert re.search(r"\[−\d+, −\d+\]", first) and "1 unit — indicative" in first
    assert re.search(
        r"firmware 1\.4\.2 −\d+(\.\d)?% \[−\d+(\.\d)?, [−+]?\d+(\.\d)?\] \d+% 2 units, 2 contributors estimated", text
    )
    assert "Units were not assigned to conditions at random" in text and "from 11 units (4 contributors)" in text
    assert "always +" not in text and not re.search(r"(?<![\[,−\d.] )\+\d+%", text.split("Units were")[0])


def test_a_drive_with_one_unit_shows_a_sentence_not_a_table(client):
    drive = DriveModelFactory()
    run = TestRunFactory(drive_model=drive, test="tp", headline={SEQ: 6e9}, max_temperature_k=320.0)
    TestRunFactory(drive_model=drive, unit=run.unit, test="iops", headline={SEQ: 6.1e9}, max_temperature_k=320.0)
    refresh_factor_effects(drive)
    section, text = factors_text(client, drive)
    assert "<table" not in section
    assert "Measured on 1 unit from 2 contributors: too few to tell the effects of the conditions apart." in text
    assert "The same on every unit fitted:" in text and "firmware" in text


def test_a_drive_not_fitted_yet_says_so(client):
    drive = DriveModelFactory()
    TestRunFactory(drive_model=drive, test="tp", headline={SEQ: 6e9})
    section, text = factors_text(client, drive)
    assert "<table" not in section and "has not been fitted on these 1 run yet" in text


def test_the_command_with_missing_fits_only_drives_without_a_fit_of_their_current_data(capsys):
    fitted, missing, behind = population()["drive"], population()["drive"], population()["drive"]
    refresh_factor_effects(fitted)
    refresh_factor_effects(behind)
    # a change whose refit was lost (the broker away, a database crash before the refit's commit was flushed)
    DriveModel.objects.filter(pk=behind.pk).update(data_version=F("data_version") + 1)
    before = set(FactorEffect.objects.filter(drive_model=fitted).values_list("pk", flat=True))
    call_command("refresh_factor_effects", "--missing", "--queue")  # tasks run in-process here (always eager)
    assert "2 drive model refits queued" in capsys.readouterr().out
    assert set(FactorEffect.objects.filter(drive_model=fitted).values_list("pk", flat=True)) == before
    assert FactorFitSummary.objects.filter(drive_model=missing).exists()
    behind.refresh_from_db()
    assert behind.factors_version == behind.data_version


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_refit_commits_without_waiting_for_the_flush_and_only_its_own_transaction():
    drive = population()["drive"]
    statements = []

    def record(execute, sql, params, many, context):
        statements.append((sql, connection.in_atomic_block))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        refresh_factor_effects(drive)
    relaxed = [i for i, (sql, _) in enumerate(statements) if sql == "SET LOCAL synchronous_commit TO OFF"]
    deletes = [i for i, (sql, _) in enumerate(statements) if sql.startswith('DELETE FROM "analysis_factorunitfigures"')]
    assert len(relaxed) == 1 and deletes and relaxed[0] < deletes[0] and statements[relaxed[0]][1]
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone() == ("on",)  # SET LOCAL ended with the refit's transaction

    statements.clear()
    with transaction.atomic(), connection.execute_wrapper(record):  # inside a transaction of other rows: untouched
        refresh_factor_effects(drive)
    assert statements and not any("synchronous_commit" in sql for sql, _ in statements)
