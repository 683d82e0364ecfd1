"""What a bundle says is stored whole or refused with the reason: ingest never cuts a value to fit its column."""

import json

from analysis.ingest import ingest_submission
from analysis.limits import PURGE_LABEL_CHARS, PURGE_METHOD_CHARS
from analysis.models import DemandIntensityPoint, Measurement, OperatingPoint, TestRun
from nvmedb_client.bundle import manifest_schema
from nvmedb_client.device import purge_attempts

# The widest labels the client writes: a drive with a two-digit LBA format, PI type 3 and Sanitize support.
ID_CTRL = {"crypto_erase_supported": False, "sanitize_crypto_erase_supported": True}
ID_NS = {"lba_format_index": 63, "pi_type": 3, "pi_first": 1, "metadata_extended": 1, "size_bytes": 10**12}


def client_labels():
    return [m.label for m in purge_attempts("/dev/nvme0n1", ID_CTRL, ID_NS, nvme_version="2.8")]


def with_purges(*methods):
    def mutate(run_dir, manifest, files):
        purges = [{"block": "iops", "method": method} for method in methods]
        (run_dir / "run.json").write_text(json.dumps({"purges": purges}))
        files.append("run.json")

    return mutate


def test_every_purge_method_label_the_client_writes_fits_the_label_limit():
    assert max(len(label) for label in client_labels()) <= PURGE_LABEL_CHARS
    assert len(", ".join(client_labels())) <= PURGE_METHOD_CHARS


def test_a_run_that_fell_back_through_every_purge_method_keeps_their_names_whole(submission, make_verified):
    labels = client_labels()
    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=with_purges(*labels)))
    assert outcome.status != "rejected", outcome.reasons
    stored = TestRun.objects.get(submission=submission).purge_method
    assert stored == ", ".join(sorted(labels)) and len(stored) > 32


def test_a_purge_method_longer_than_any_client_label_is_rejected_naming_the_field_and_its_limit(
    submission, make_verified
):
    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=with_purges("x" * 121)))
    assert outcome.status == "rejected"
    assert any("purge_method" in r and f"{PURGE_LABEL_CHARS} characters" in r for r in outcome.reasons), outcome.reasons
    assert not TestRun.objects.filter(submission=submission).exists()


def test_too_many_distinct_purge_methods_are_rejected_not_cut(submission, make_verified):
    methods = [f"{n} {'m' * 110}" for n in range(5)]
    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=with_purges(*methods)))
    assert outcome.status == "rejected"
    assert any(f"the {PURGE_METHOD_CHARS} characters of purge_method" in r for r in outcome.reasons), outcome.reasons


def test_a_write_cache_state_that_is_neither_enabled_nor_disabled_is_missing_with_the_reason(submission, make_verified):
    def mutate(run_dir, manifest, files):
        (run_dir / "run.json").write_text(json.dumps({"purges": [], "write_cache": "enabled-by-firmware-policy"}))
        files.append("run.json")

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate, system=False))
    assert outcome.status != "rejected", outcome.reasons
    run = TestRun.objects.get(submission=submission)
    assert run.write_cache == "" and "enabled-by-firmware-policy" in run.missing["write_cache"]


def test_columns_holding_run_ids_and_patterns_take_every_value_the_manifest_schema_allows():
    run = manifest_schema()["$defs"]["run"]["properties"]
    longest_id = int(run["id"]["pattern"].rsplit("{1,", 1)[1].split("}")[0])
    for model in (Measurement, DemandIntensityPoint, OperatingPoint):
        assert model._meta.get_field("run_key").max_length >= longest_id, model
    assert Measurement._meta.get_field("pattern").max_length >= run["pattern"]["maxLength"]


def test_an_imported_runs_source_reference_too_long_for_its_column_is_refused_with_the_limit_not_cut(
    db, tmp_path, shared_samples, capsys
):
    import shutil

    from django.core.management import call_command

    root = tmp_path / "platforms"
    shutil.copytree(shared_samples / "ssspt-more/hp/lat/3", root / "hp/lat/3")
    base = "https://example.org/" + "a" * 490 + "/"
    call_command("import_tree", str(root), "--json", "--source-base", base)
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["status"] == "rejected" and "source_reference" in run["reason"] and "500" in run["reason"], run
    assert not TestRun.objects.exists()
