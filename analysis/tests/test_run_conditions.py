"""The server re-reads the write cache and interruption records itself: a run whose client recorded a drift or an
unaccounted pause is not compliant, whatever the client concluded."""

import json

from analysis.bundle_reader import read_bundle
from analysis.run_conditions import interruption_problems, run_condition_problems, write_cache_problems


def check(block, when, enabled):
    return {"block": block, "when": when, "enabled": enabled, "wanted_enabled": False, "value": int(bool(enabled))}


GOOD = [
    check("iops", "after purge", True),
    check("iops", "after purge, set again", False),
    check("iops", "test start", False),
    check("iops", "test end", False),
]


def test_a_cache_set_again_before_the_tests_io_is_compliant():
    assert write_cache_problems(GOOD, edition="enterprise") == []


def test_a_cache_found_enabled_at_the_end_of_an_enterprise_test_is_not():
    drifted = [*GOOD[:3], check("iops", "test end", True)]
    assert write_cache_problems(drifted, edition="enterprise") == [
        "iops: the write cache was enabled at its end (the enterprise edition runs it disabled)"
    ]


def test_the_client_edition_wants_the_cache_enabled_and_an_unreadable_value_is_not_taken_for_either():
    enabled = [check("lat", "test start", True), check("lat", "test end", None)]
    assert write_cache_problems(enabled, edition="client") == [
        "lat: the write cache was unreadable at its end (the client edition runs it enabled)"
    ]


def test_a_test_without_a_read_back_at_its_end_is_not_compliant():
    assert write_cache_problems(GOOD[:3], edition="enterprise") == [
        "iops: the write cache was not read back at its end"
    ]


def session(n):
    return {"started_at": f"2026-11-23T10:0{n}:00Z", "resumed": n > 0}


def test_a_resumed_run_without_interruption_records_is_not_silently_compliant():
    problems = interruption_problems({"sessions": [session(0), session(1)]}, [])
    assert problems == [
        "the run was resumed 1 time(s) but records 0 interruption(s): the idle time of the others is unknown"
    ]


def test_a_long_pause_between_rounds_that_the_client_let_pass_is_caught():
    gap = {"block": "iops", "length_s": 600.0, "action": "continued", "resumed_at": "2026-11-23T10:10:00Z"}
    problems = interruption_problems({"sessions": [session(0), session(1)], "interruptions": [gap]}, [])
    assert problems == ["iops: rounds went on after a pause of 600 s (more than 60 s between rounds)"]


def test_a_restart_that_still_uses_a_run_from_before_the_pause_is_caught():
    gap = {"block": "lat", "length_s": 30.0, "action": "restart", "resumed_at": "2026-11-23T10:10:00Z",
           "superseded_runs": ["lat-wipc", "lat-r01-rw100-bs512"]}  # fmt: skip
    recorded = {"sessions": [session(0), session(1)], "interruptions": [gap]}
    rerun = [{"id": "lat-wipc", "started_at": "2026-11-23T10:10:01Z"}]
    assert interruption_problems(recorded, rerun) == []
    stale = [{"id": "lat-wipc", "started_at": "2026-11-23T10:09:00Z"}]
    assert interruption_problems(recorded, stale) == [
        "lat: restarted after a pause of 30 s but uses runs from before it"
    ]


def test_write_cache_checks_apply_to_device_targets_only():
    recorded = {"write_cache_checks": [check("iops", "test end", True)]}
    assert run_condition_problems(recorded, {"edition": "enterprise", "target": {"kind": "file"}, "runs": []}) == []
    assert run_condition_problems(recorded, {"edition": "enterprise", "target": {"kind": "device"}, "runs": []})


def test_a_bundle_whose_run_json_records_a_drift_is_read_as_non_compliant(make_verified):
    def mutate(run_dir, manifest, files):
        manifest["target"]["kind"] = "device"
        (run_dir / "run.json").write_text(
            json.dumps({"sessions": [session(0)], "write_cache_checks": [*GOOD[:3], check("iops", "test end", True)]})
        )
        if "run.json" not in files:
            files.append("run.json")

    record = read_bundle(make_verified(mutate=mutate))
    assert record.compliant is False
    reason = "iops: the write cache was enabled at its end (the enterprise edition runs it disabled)"
    assert reason in record.compliance_reasons
    assert any(reason in flag.reason for flag in record.flags if flag.kind == "non_compliant")
