"""Each crash class of issue 14 ends as a clear verdict: refused by verify_bundle, or rejected by the pipeline with
its reason, never an exception out of the reader or the database."""

import json

import pytest

from analysis import columns
from analysis.bundle_reader import read_bundle
from analysis.ingest import ingest_submission
from analysis.models import Measurement, TestRun
from analysis.records import MeasurementRecord, SubmissionRecord, TestRunRecord
from analysis.tests import bundles
from analysis.tests.hostile import HOSTILE, hostile_bundle
from nvmedb_client.bundle import BundleError, verify_bundle

KINDS = sorted(HOSTILE)


@pytest.fixture
def key():
    return bundles.bundle_factory().new_signing_key()


@pytest.mark.parametrize("kind", KINDS)
def test_every_hostile_bundle_is_refused_or_rejected_with_its_reason(kind, tmp_path, shared_samples, key, submission):
    expected_status, expected_text = HOSTILE[kind][1]
    path = hostile_bundle(kind, tmp_path / "work", shared_samples, key)
    if expected_status == "bundle":
        with pytest.raises(BundleError) as refused:
            verify_bundle(path, extract_to=tmp_path / "extracted")
        assert refused.value.code == expected_text
        assert not any((tmp_path / "extracted").iterdir())
        return
    verified = verify_bundle(path, extract_to=tmp_path / "extracted")
    outcome = ingest_submission(submission=submission, bundle=verified)
    assert outcome.status == "rejected", outcome
    assert any(expected_text in reason for reason in outcome.reasons), outcome.reasons
    assert not TestRun.objects.filter(submission=submission).exists()


def test_a_non_utf8_member_name_is_named_in_the_refusal(tmp_path, shared_samples, key):
    path = hostile_bundle("non_utf8_member_name", tmp_path / "work", shared_samples, key)
    with pytest.raises(BundleError, match="not UTF-8"):
        verify_bundle(path, extract_to=tmp_path / "extracted")


def test_nan_in_a_claimed_window_is_refused_as_not_strict_json(tmp_path, shared_samples, key):
    path = hostile_bundle("nan_in_claimed_window", tmp_path / "work", shared_samples, key)
    with pytest.raises(BundleError, match="manifest.json is not strict JSON"):
        verify_bundle(path, extract_to=tmp_path / "extracted")


def test_an_unexpected_error_while_reading_a_file_rejects_at_once_naming_the_file(
    make_verified, submission, monkeypatch
):
    def broken(*args, **kwargs):
        raise TypeError("'int' object is not subscriptable")

    monkeypatch.setattr("analysis.crosscheck.check_iops_bandwidth", broken)
    verified = make_verified()
    outcome = ingest_submission(submission=submission, bundle=verified)
    assert outcome.status == "rejected"
    first = verified.manifest["runs"][0]
    assert outcome.reasons == [
        f"run {first['id']}: {first['output_file']} could not be read (TypeError: 'int' object is not subscriptable)"
    ]


def test_a_run_id_longer_than_its_column_is_rejected_before_the_database_sees_it(submission):
    """PostgreSQL would raise on the varchar; SQLite would store it: the check gives both the same verdict. (A
    client's run id cannot get there: the manifest schema stops at 200 characters, the column holds 255; an imported
    run is keyed by its file name.)"""
    record = SubmissionRecord(source="client", identity=bundles_identity())
    record.test_runs.append(TestRunRecord(test="iops"))
    record.test_runs[0].measurements.append(
        MeasurementRecord(
            run_key="r" * 300, test="iops", phase="tp-write", series="", round_number=1, block_size_bytes=4096,
            read_pct=0, summary=None, raw_file="fio/r.json", json_path="jobs[0]",
        )
    )  # fmt: skip
    problems = columns.record_problems(record)
    assert any(p.endswith("is 300 characters long, more than the 255 of Measurement.run_key") for p in problems), (
        problems
    )
    assert not Measurement.objects.exists()


def test_column_limits_come_from_the_model_fields():
    assert columns.max_length(Measurement, "run_key") == Measurement._meta.get_field("run_key").max_length == 255


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("profile", "p" * 17, "is 17 characters long, more than the 16 of TestRun.profile"),
        ("scheduler", "mq\x00deadline", "contains a NUL character"),
        ("power_on_hours", 2**63, "outside the range -9223372036854775808..9223372036854775807"),
        ("percentage_used", 40000, "outside the range 0..32767 of TestRun.percentage_used"),
        ("warning_temperature_k", float("inf"), "not a finite number"),
        ("missing", {"x": float("nan")}, "holds NaN or Infinity"),
        ("missing", {"x": "a\x00b"}, "contains a NUL character"),
    ],
)
def test_each_kind_of_value_that_does_not_fit_its_column_is_named(field, value, problem):
    record = SubmissionRecord(source="client", identity=bundles_identity())
    setattr(record, field, value)
    assert any(problem in reason for reason in columns.record_problems(record)), columns.record_problems(record)


def test_a_record_that_fits_has_no_problems(make_verified):
    assert columns.record_problems(read_bundle(make_verified())) == []


def bundles_identity():
    from analysis.identity import DriveIdentity

    return DriveIdentity(
        vendor="Samsung",
        pci_vendor_id=0x144D,
        name="Samsung SSD 970",
        model_number="SSD 970",
        capacity_bytes=500 * 10**9,
        firmware="1B2QEXM7",
        serial="S1",
    )


def test_an_oversized_job_file_is_a_reason_to_reject_not_parsed(make_verified, submission):
    def huge_job_file(run_dir, manifest, files):
        run = manifest["runs"][0]
        output = run_dir / run["output_file"]
        doc = json.loads(output.read_text())
        for options in [doc.get("global options") or {}] + [job.get("job options") or {} for job in doc["jobs"]]:
            options.pop("runtime", None)  # so the job file is what says how long fio ran
        output.write_text(json.dumps(doc))
        job = run_dir / run["job_file"]
        job.write_text(job.read_text() + "# padding\n" * 200_000)

    verified = make_verified(mutate=huge_job_file)
    outcome = ingest_submission(submission=submission, bundle=verified)
    assert outcome.status == "rejected"
    assert any("more than the limit of 1048576 for a fio job file" in reason for reason in outcome.reasons)


def test_a_job_file_whose_block_size_is_not_the_one_fio_ran_is_rejected(make_verified, submission):
    """fio echoes bs=4k; the job file kept in the bundle (and served as the run's job) says another size."""

    def other_block_size(run_dir, manifest, files):
        run = manifest["runs"][0]
        doc = json.loads((run_dir / run["output_file"]).read_text())
        echoed = [doc.get("global options") or {}] + [job.get("job options") or {} for job in doc["jobs"]]
        ran = next(options["bs"] for options in echoed if "bs" in options)
        job = run_dir / run["job_file"]
        lines = [
            f"bs={'8m' if ran != '8m' else '4k'}" if line.startswith("bs=") else line
            for line in job.read_text().splitlines()
        ]
        assert any(line.startswith("bs=") for line in lines), "the job file names its block size"
        job.write_text("\n".join(lines) + "\n")

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=other_block_size))
    assert outcome.status == "rejected"
    assert any("the job file says bs=" in reason and "fio ran bs=" in reason for reason in outcome.reasons), (
        outcome.reasons
    )
