"""Near-duplicates: another account's fio outputs re-signed with a small edit each are still that account's
measurement, and the submission received first keeps it, held or imported. Through the API, the real validation
pipeline and the admin; the signatures themselves on the shared real SSSPT runs."""

import json
import math
from itertools import combinations

import pytest
from django.test import Client

from nvmedb_client.fio_output import parse_fio_output
from submissions import content, first_received, pipeline, services
from submissions.models import MeasurementSignature, Submission, SubmissionStatus
from submissions.rules import RULES
from submissions.tests.bundles import bundle_factory
from submissions.tests.conftest import api_client, register_key
from submissions.tests.test_attribution import scrubbed_copies_of_the_public_raw_files

CHANGELIST = "/admin/submissions/submission/"


def _directions(job: dict) -> list[dict]:
    return [job[d] for d in ("read", "write") if isinstance(job.get(d), dict) and job[d].get("io_bytes")]


def ctx_plus_one(doc: dict) -> None:
    doc["jobs"][0]["ctx"] += 1


def total_ios_as_float(doc: dict) -> None:
    for stats in _directions(doc["jobs"][0]):
        stats["total_ios"] = float(stats["total_ios"])


def an_unknown_key(doc: dict) -> None:
    doc["jobs"][0]["read"]["nvmedb_note"] = "mine"


def iops_mean_plus_a_nano(doc: dict) -> None:
    for stats in _directions(doc["jobs"][0]):
        stats["iops_mean"] += 1e-9


EDITS = {
    "ctx+1": ctx_plus_one,
    "total_ios as a float": total_ios_as_float,
    "an unknown key": an_unknown_key,
    "iops_mean+1e-9": iops_mean_plus_a_nano,
}


def edited_copies(samples, target_dir, edit) -> list:
    """Each sample with `edit` applied, re-written (so neither its bytes nor its measurement digest are the
    original's), under the sample's name (the bundle factory reads block size, mix and round from it)."""
    target_dir.mkdir()
    copies = []
    for sample in samples:
        original = sample.read_bytes()
        doc = json.loads(original)
        edit(doc)
        path = target_dir / sample.name
        path.write_text(json.dumps(doc, indent=2))
        assert content.measurement_digest(path.read_bytes()) != content.measurement_digest(original)
        copies.append(path)
    return copies


def assert_rejected_as_a_near_duplicate_of(copy: dict, original_id) -> None:
    assert copy["status"] == "rejected", copy["report"]
    assert copy["report"]["rule"] == "near_duplicate"
    assert copy["report"]["summary"] == RULES["near_duplicate"]
    assert f"of those of submission {original_id}, which another contributor sent first" in copy["report"]["detail"]
    assert not Submission.objects.get(pk=copy["id"]).test_runs.exists(), "nothing of it reaches the dataset"


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_another_accounts_fio_outputs_re_signed_with_one_edit_are_rejected_as_near_duplicates(
    edit, owner, owner_api, stranger, stranger_api, shared_samples, publishable_bundle, upload, tmp_path
):
    published = upload(owner_api, publishable_bundle(register_key(owner)))
    assert published["status"] == "published", published["report"]

    samples = bundle_factory.default_fio_samples(shared_samples)
    stolen = upload(
        stranger_api,
        publishable_bundle(register_key(stranger), samples=edited_copies(samples, tmp_path / "edited", EDITS[edit])),
    )
    assert_rejected_as_a_near_duplicate_of(stolen, published["id"])
    assert (
        "100% of the measurements in these fio outputs match, within a relative 0.0001, 100% of those"
        in (stolen["report"]["detail"])
    )


def test_a_copy_padded_with_more_runs_of_ones_own_is_still_a_near_duplicate(
    owner, owner_api, stranger, stranger_api, shared_samples, publishable_bundle, upload, tmp_path
):
    published = upload(owner_api, publishable_bundle(register_key(owner)))
    stolen = edited_copies(bundle_factory.default_fio_samples(shared_samples), tmp_path / "edited", ctx_plus_one)
    own_run = shared_samples / "ssspt-more" / "hp" / "lat" / "2"
    padding = sorted(
        [*own_run.glob("wdpc_bs512B_read*_round[1-5].json"), *own_run.glob("wdpc_bs8KB_read*_round[1-5].json")]
    )
    padded = upload(stranger_api, publishable_bundle(register_key(stranger), samples=[*stolen, *padding]))
    assert_rejected_as_a_near_duplicate_of(padded, published["id"])
    assert (
        "33% of the measurements in these fio outputs match, within a relative 0.0001, 100% of those"
        in (padded["report"]["detail"])
    )


def test_the_public_scrubbed_download_re_signed_with_ctx_plus_one_is_rejected_as_a_near_duplicate(
    owner, owner_api, stranger, stranger_api, client, publishable_bundle, upload, tmp_path
):
    published = upload(owner_api, publishable_bundle(register_key(owner)))
    downloaded = scrubbed_copies_of_the_public_raw_files(client, published, tmp_path / "downloaded")
    copies = edited_copies(downloaded, tmp_path / "edited", ctx_plus_one)
    stolen = upload(stranger_api, publishable_bundle(register_key(stranger), samples=copies))
    assert_rejected_as_a_near_duplicate_of(stolen, published["id"])


def test_an_honest_other_run_of_the_same_drive_is_no_near_duplicate(
    owner, owner_api, stranger, stranger_api, shared_samples, publishable_bundle, upload
):
    """Two SSSPT latency runs of one drive on one host (ssspt-more/hp/lat/1 and /2), the same 4 KiB cells and rounds,
    from two accounts: the same drive and workload, other measurements."""
    runs = shared_samples / "ssspt-more" / "hp" / "lat"
    first_run, second_run = (sorted((runs / n).glob("wdpc_bs4KB_read*_round[1-5].json")) for n in ("1", "2"))
    assert len(first_run) == len(second_run) == 15
    published = upload(owner_api, publishable_bundle(register_key(owner), samples=first_run))
    assert published["status"] == "published", published["report"]

    theirs = upload(stranger_api, publishable_bundle(register_key(stranger), samples=second_run))
    assert theirs["status"] == "published", theirs["report"]
    assert first_received.content_matches(Submission.objects.get(pk=theirs["id"])) == {}


def test_a_perturbed_copy_of_an_imported_ssspt_run_is_rejected_as_a_near_duplicate(
    owner, owner_api, shared_samples, publishable_bundle, upload, tmp_path
):
    from django.core.management import call_command

    call_command("import_results", str(shared_samples / "ssspt-hp-iops-1"), "--format", "ssspt")
    imported = Submission.objects.get(uploader__username="nvmedb-import")
    assert MeasurementSignature.objects.filter(submission=imported).count() > 300, "imported runs are signed too"

    samples = bundle_factory.default_fio_samples(shared_samples)
    claimed = upload(
        owner_api,
        publishable_bundle(
            register_key(owner), samples=edited_copies(samples, tmp_path / "edited", iops_mean_plus_a_nano)
        ),
    )
    assert_rejected_as_a_near_duplicate_of(claimed, imported.pk)


# --- the first received wins, held or not ---------------------------------------------------------------------------


@pytest.fixture
def review_first_one(settings):
    settings.NVMEDB_REVIEW_FIRST_N = 1


def approve(staff, *submission_ids):
    client = Client()
    client.force_login(staff)
    return client.post(
        CHANGELIST, {"action": "approve_submissions", "_selected_action": [str(i) for i in submission_ids]}, follow=True
    )


def test_a_newcomers_held_original_is_not_pre_empted_by_an_established_accounts_copy(
    review_first_one, owner, owner_api, staff, shared_samples, publishable_bundle, upload, tmp_path
):
    original = upload(owner_api, publishable_bundle(register_key(owner)))
    assert original["status"] == "held" and original["report"]["rule"] == "review"

    established = api_client(services.api_token_create(user=staff)[1])  # trusted: published without review
    same_outputs = upload(established, publishable_bundle(register_key(staff)))
    assert same_outputs["status"] == "rejected"
    assert same_outputs["report"]["rule"] == "content_of_another_account"
    assert (
        f"first received from another contributor in submission {original['id']}" in (same_outputs["report"]["detail"])
    )
    edited = edited_copies(bundle_factory.default_fio_samples(shared_samples), tmp_path / "edited", ctx_plus_one)
    near_copy = upload(established, publishable_bundle(register_key(staff), samples=edited))
    assert_rejected_as_a_near_duplicate_of(near_copy, original["id"])

    response = approve(staff, original["id"])
    assert "Published 1 submission(s)." in response.content.decode()
    assert Submission.objects.get(pk=original["id"]).status == SubmissionStatus.PUBLISHED


def test_approving_the_original_withdraws_a_copy_published_before_the_rule(
    review_first_one, owner, owner_api, staff, shared_samples, publishable_bundle, upload, tmp_path, monkeypatch
):
    from analysis.models import DriveModelAggregate, TestRun

    original = upload(owner_api, publishable_bundle(register_key(owner)))
    assert original["status"] == "held"

    # before this rule only published submissions counted: the established account's copy published at once
    with monkeypatch.context() as before:
        before.setattr(pipeline, "first_received_conflict", lambda submission, rows=None: None)
        edited = edited_copies(bundle_factory.default_fio_samples(shared_samples), tmp_path / "edited", ctx_plus_one)
        established = api_client(services.api_token_create(user=staff)[1])
        copy = upload(established, publishable_bundle(register_key(staff), samples=edited))
    assert copy["status"] == "published", copy["report"]

    response = approve(staff, original["id"])
    assert "Published 1 submission(s)." in response.content.decode()
    assert Submission.objects.get(pk=original["id"]).status == SubmissionStatus.PUBLISHED
    withdrawn = Submission.objects.get(pk=copy["id"])
    assert withdrawn.status == SubmissionStatus.WITHDRAWN and withdrawn.hidden
    assert withdrawn.report["rule"] == "copy_withdrawn"
    assert f"A copy of submission {original['id']}, which another contributor sent first" in withdrawn.report["detail"]
    assert withdrawn.events.last().note.startswith("withdrawn: A copy of submission")
    models = TestRun.objects.filter(submission_id=original["id"]).values_list("drive_model_id", flat=True)
    counts = DriveModelAggregate.objects.filter(drive_model_id__in=models, factor="all").values_list(
        "n_runs", flat=True
    )
    assert set(counts) == {1}, "the drive's aggregates count the original, not its copy"


def test_the_review_page_lists_near_duplicates_with_account_status_time_and_share(
    review_first_one,
    owner,
    owner_api,
    stranger,
    stranger_api,
    staff,
    shared_samples,
    publishable_bundle,
    upload,
    tmp_path,
):
    original = upload(owner_api, publishable_bundle(register_key(owner)))
    edited = edited_copies(bundle_factory.default_fio_samples(shared_samples), tmp_path / "edited", ctx_plus_one)
    copy = upload(stranger_api, publishable_bundle(register_key(stranger), samples=edited))
    assert copy["report"]["rule"] == "near_duplicate"

    client = Client()
    client.force_login(staff)
    page = client.get(f"{CHANGELIST}{original['id']}/change/").content.decode()
    assert "Near-duplicates" in page
    row = page[page.index(f">{copy['id']}</a>") :].split("</tr>")[0]
    received = Submission.objects.get(pk=copy["id"]).created
    for shown in ("stranger", "Rejected", f"{received:%Y-%m-%d %H:%M:%S} UTC (later)", "<td>100%</td>"):
        assert shown in row, shown
    alone = client.get(f"{CHANGELIST}{copy['id']}/change/").content.decode()
    assert f">{original['id']}</a>" in alone and "received earlier" in alone


def test_held_submissions_validated_before_signatures_existed_get_them_from_the_command(
    review_first_one, owner, owner_api, stranger, stranger_api, shared_samples, publishable_bundle, upload, tmp_path
):
    from django.core.management import call_command

    held = upload(owner_api, publishable_bundle(register_key(owner)))
    assert held["status"] == "held"
    signed = MeasurementSignature.objects.filter(submission_id=held["id"])
    count = signed.count()
    assert count == 20, "5 rounds: 4 KiB writes, 64 KiB reads and writes, 1 MiB reads"
    signed.delete()  # as before signatures existed
    call_command("fingerprint_submissions")
    assert signed.count() == count

    edited = edited_copies(bundle_factory.default_fio_samples(shared_samples), tmp_path / "edited", ctx_plus_one)
    copy = upload(stranger_api, publishable_bundle(register_key(stranger), samples=edited))
    assert_rejected_as_a_near_duplicate_of(copy, held["id"])


# --- the signatures on the real runs --------------------------------------------------------------------------------


def signatures(path) -> list:
    return content.signature_values(parse_fio_output(path.read_bytes()))


def test_signatures_survive_the_edits_and_scrubbing_but_not_a_change_of_what_was_measured(shared_samples):
    sample = bundle_factory.default_fio_samples(shared_samples)[0]
    original = signatures(sample)
    assert original
    for edit in EDITS.values():
        doc = json.loads(sample.read_bytes())
        edit(doc)
        doc["jobs"][0]["job options"]["filename"] = "/dev/disk/by-id/nvme-[scrubbed]"
        edited = content.signature_values(parse_fio_output(json.dumps(doc).encode()))
        assert [d for d, _ in edited] == [d for d, _ in original]
        assert all(content.figures_agree(a, b) for (_, a), (_, b) in zip(edited, original, strict=True))
    doc = json.loads(sample.read_bytes())
    for stats in _directions(doc["jobs"][0]):
        stats["lat_ns"]["mean"] *= (
            1.001  # a tenth of a percent: far below run-to-run variation, ten times the tolerance
        )
    changed = content.signature_values(parse_fio_output(json.dumps(doc).encode()))
    assert not any(content.figures_agree(a, b) for (_, a), (_, b) in zip(changed, original, strict=True))


def test_the_agreeing_range_holds_every_figure_that_agrees_and_little_else():
    """Candidates are read by ranges of IOPS and largest latency (content.agreeing_range): every figure that agrees
    within the tolerance lies in its range, on both sides and at the edge, and one a hundredth of the tolerance beyond
    it does not."""
    tolerance = content.NEAR_TOLERANCE
    for iops in (1.0, 999.9995, 35977.967034, 1e6 + 0.4, 7.3e-3, 8.1e9, -35977.967034, -1.0):  # a hostile latency
        low, high = content.agreeing_range(iops)
        edges = (iops * (1 - tolerance), iops / (1 - tolerance), math.nextafter(iops / (1 - tolerance), math.inf))
        inside = (iops * (1 - tolerance * 0.999), iops / (1 - tolerance * 0.999), iops)
        for other in inside:
            assert content.figures_agree([iops], [other]), other
        for other in inside + edges:  # at the very edge rounding decides whether they agree: if they do, it is in
            assert low <= other <= high or not content.figures_agree([iops], [other]), other
        for other in (iops * (1 - tolerance * 1.01), iops / (1 - tolerance * 1.01)):
            assert not content.figures_agree([iops], [other])
            assert not low <= other <= high, other
    assert content.agreeing_range(0.0) == (0.0, 0.0) and not content.figures_agree([0.0], [1e-300])
    assert content.agreeing_bounds((8.0, None)) == (content.agreeing_range(8.0),)  # nothing past a missing figure
    assert content.agreeing_bounds((8.0, 5.0)) == (content.agreeing_range(8.0), content.agreeing_range(5.0))


def test_no_two_rounds_of_a_real_ssspt_run_are_near_duplicates(shared_samples):
    """All 392 outputs of one SSSPT IOPS run of one drive: no signature of one matches a signature of another."""
    found = [
        (path.name, signature)
        for path in sorted((shared_samples / "ssspt-hp-iops-1").glob("wdpc_*.json"))
        for signature in signatures(path)
    ]
    assert len(found) > 500
    matching = [
        (a, b)
        for (a, (da, va)), (b, (db, vb)) in combinations(found, 2)
        if a != b and da == db and content.figures_agree(va, vb)
    ]
    assert matching == []
