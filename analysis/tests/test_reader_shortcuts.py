"""The bundle reader's shortcuts give what the plain path gives: one walk of each fio output's figures for every
figure check, the output's echo of its options made once, job files parsed back to back before the checks, each
smart-log content parsed once, a size parsed once per text, a gate's reason worded only when it fails, each
smart-log's counters read once for every gate, and a measurement's plainly finite figures passed without naming each."""

import copy
import dataclasses
import itertools
import json
import math

from analysis import bundle_checks, bundle_reader, crosscheck, fio_sizes, plausibility
from analysis.bundle_reader import read_bundle
from analysis.plausibility import measurement as plausibility_measurement
from analysis.plausibility import smart as plausibility_smart
from analysis.plausibility.limits import LINK_MARGIN, LinkBounds, against_link, within_link
from analysis.tests import bundles
from nvmedb_client.system.nvme import parse_smart_log


def _documents(bundle) -> list[dict]:
    return [bundle.fio_output(run["output_file"]) for run in bundle.manifest["runs"]]


def _odd(doc: dict) -> list[dict]:
    """`doc` broken or reshaped the ways the figure checks treat differently."""
    unusable = copy.deepcopy(doc)
    unusable["jobs"][0]["read"]["iops"] = "1e400"
    unusable["jobs"][0]["write"]["runtime"] = 2**70
    unusable["jobs"][0]["write"]["bw"] = True
    inflated = copy.deepcopy(doc)
    for direction in ("read", "write"):
        inflated["jobs"][0][direction]["iops"] = inflated["jobs"][0][direction].get("iops", 0) * 3 + 1000
        inflated["jobs"][0][direction]["io_kbytes"] = 10**9
    groups = copy.deepcopy(doc)  # two job groups (stonewall), each with its own block size
    groups["jobs"].append(copy.deepcopy(groups["jobs"][0]))
    groups["jobs"][1]["job options"] = {**groups["jobs"][1].get("job options", {}), "bs": "8k"}
    groups["jobs"].append("not a job")
    mix = copy.deepcopy(doc)
    mix["global options"] = {"bssplit": "4k/50:64k/50"}
    return [unusable, inflated, groups, mix]


def test_the_figure_checks_given_one_walk_of_an_output_say_what_their_own_walks_say(make_verified):
    documents = _documents(make_verified())
    assert documents
    failed = set()
    for doc in documents + _odd(documents[0]):
        directions = crosscheck.figure_directions(doc)
        figures = crosscheck.check_figures(doc, raw_file="f")
        assert crosscheck.check_figures(doc, raw_file="f", directions=directions) == figures
        for block_size in (None, 4096, 8192):
            alone = crosscheck.check_iops_bandwidth(doc, block_size_bytes=block_size, raw_file="f")
            shared = crosscheck.check_iops_bandwidth(
                doc, block_size_bytes=block_size, raw_file="f", directions=directions
            )
            assert shared == alone
            failed |= {f.check for f in alone}
        for declared in (None, 60, 10**6):
            alone = crosscheck.check_bytes_runtime(doc, raw_file="f", declared_runtime_s=declared)
            shared = crosscheck.check_bytes_runtime(
                doc, raw_file="f", declared_runtime_s=declared, directions=directions
            )
            assert shared == alone
            failed |= {f.check for f in alone}
        assert crosscheck.direction_runtime_s(doc, directions) == crosscheck.direction_runtime_s(doc)
        failed |= {f.check for f in figures}
    assert failed == {"figures", "iops_bandwidth", "bytes_runtime"}, "every check can fail"


def test_the_job_file_check_given_the_outputs_echo_says_what_it_says_alone(make_verified):
    failed = False
    for doc in _documents(make_verified()):
        echoed = crosscheck.job_options(doc)
        for file_options in ({}, {"bs": echoed.get("bs", "4k"), "rw": "trim"}, {"bs": "3k", "rw": echoed.get("rw")}):
            alone = crosscheck.check_job_file_matches_output(file_options=file_options, doc=doc, raw_file="j")
            given = crosscheck.check_job_file_matches_output(
                file_options=file_options, doc=doc, raw_file="j", echoed=echoed
            )
            assert given == alone
            failed = failed or bool(alone)
    assert failed, "the check can fail"


def test_a_size_parsed_once_per_text_is_a_fresh_parse():
    texts = ["4k", "4KiB", " 16KB ", "1.5m", "0.5k", "4k/50:8k/50", "", 4096, "9" * 19 + "p", "4k" + " " * 70]
    for text in texts * 2:  # the second time from what was kept
        for kb_base in (1024, 1000):
            assert fio_sizes.parse_size(text, kb_base=kb_base) == fio_sizes._size.__wrapped__(
                str(text), kb_base == 1000
            )
    assert [fio_sizes.parse_size(t) for t in ("4k", "4KiB", "1.5m")] == [4096, 4000, 1572864]
    kept = fio_sizes._size.cache_info().currsize
    assert fio_sizes.parse_size(" " * 100 + "8k") == 8192
    assert fio_sizes._size.cache_info().currsize == kept, "a long text is parsed, never kept"


def test_a_value_within_the_link_is_one_against_link_passes():
    """The gates word a link reason only for a value outside within_link: it is exactly the value against_link
    fails, up to and including the bound with its margin (the negotiated link's where lspci reported one)."""
    for bounds in (LinkBounds(None, 8e9, "a"), LinkBounds(3.9e9, 8e9, "b")):
        for allowed in (1.0, 2.0):
            edge = (bounds.capability if bounds.negotiated is None else bounds.negotiated) * allowed * (1 + LINK_MARGIN)
            for value in (0.0, 1e9, 4.3e9, 8.9e9, 1.7e10, 1e20, math.inf, math.nan, -1.0, edge, edge * (1 + 1e-15)):
                within = within_link(value, bounds, allowed)
                assert within == (value <= edge), (bounds, value, allowed)
                assert (against_link("r", "w", value, bounds, allowed) == []) == within, (bounds, value, allowed)


def _shortcut_bundle(make_verified, shared_samples):
    """A bundle whose runs have smart-logs, most of the same content as the one before (a run's log after is the next
    run's before), one of whose job files is absent and one oversized: each shortcut and each way around it."""
    smart = json.loads((shared_samples / bundles.SMART).read_text())

    def mutate(run_dir, manifest, files):
        (run_dir / "smart").mkdir(exist_ok=True)
        runs = manifest["runs"]
        for index, run in enumerate(runs):
            for side in ("before", "after"):
                path = f"smart/{index}.{side}.json"
                if side == "after" or index % 3:  # every third run's log before is its own content
                    smart["data_units_written"] = int(smart.get("data_units_written") or 0) + 1000 + index
                # broken counters: one in a log shared by two runs (run 2's after, run 3's before), one going back
                broken = {"media_errors": -1} if (index, side) in ((2, "after"), (3, "before")) else {}
                broken = {"power_cycles": 0} if index == 4 else broken
                (run_dir / path).write_text(json.dumps(smart | broken))
                run[f"smart_{side}"] = path
                files.append(path)
        runs[-1]["job_file"] = "jobs/absent.fio"
        oversized = run_dir / runs[0]["job_file"]
        oversized.write_text(oversized.read_text() + "# padding\n" * 120_000)

    return make_verified(mutate=mutate)


def test_the_reader_with_its_shortcuts_gives_the_record_of_the_plain_path(make_verified, shared_samples, monkeypatch):
    bundle = _shortcut_bundle(make_verified, shared_samples)
    runs = bundle.manifest["runs"]
    documents = {str(run["id"]): bundle.fio_output(run["output_file"]) for run in runs}
    parsed = bundle_checks._job_files(bundle, runs, documents)
    assert parsed[0] is None and parsed[-1] is None and all(parsed[1:-1]), "the shortcut and the way around it"
    fast = read_bundle(bundle)
    assert _shared_smart_logs(fast), "smart-logs of the same content share one parse"

    monkeypatch.setattr(bundle_checks, "_job_files", lambda bundle, runs, documents: [None] * len(runs))
    monkeypatch.setattr(bundle_reader, "SHARED_SMART_BYTES", -1)
    monkeypatch.setattr(plausibility, "SmartLogs", _UnsharedSmartLogs)
    monkeypatch.setattr(plausibility_measurement, "_plainly_finite_non_negative", lambda m: False)
    plain = read_bundle(bundle)
    assert not _shared_smart_logs(plain)
    assert plain == fast
    assert repr(plain) == repr(fast)
    assert fast.reject_reasons and "job_files" in fast.missing, "the bundle has what the plain path reports"
    assert {"smart_values", "smart_progress"} <= {r.split(":")[0] for r in fast.reject_reasons}, "the gates fail too"


def _shared_smart_logs(record) -> set[int]:
    measurements = [m for test_run in record.test_runs for m in test_run.measurements]
    befores = {id(m.smart_before) for m in measurements if m.smart_before is not None}
    return befores & {id(m.smart_after) for m in measurements if m.smart_after is not None}


class _UnsharedSmartLogs(plausibility_smart.SmartLogs):
    """The gates' smart-log reads, each made afresh."""

    def counters(self, smart):
        return plausibility_smart.finite_counters(smart)

    def values_failures(self, smart, label):
        return plausibility_smart.check_smart_values(smart, label)


def test_shared_smart_log_reads_say_what_each_read_alone_says(shared_samples):
    real = parse_smart_log((shared_samples / bundles.SMART).read_bytes())
    odd = (None, True, -1, 2**63, 10**400, math.nan, math.inf, -0.0, 1e308, "7", 0)
    logs = [real] + [
        real | {key: value} for key in ("data_units_read", "power_on_hours", "media_errors") for value in odd
    ]
    logs += [real | {"percent_used": 256}, real | {"temperature_k": 10.0}, {}]
    bounds = [LinkBounds(None, 1e9, "l"), LinkBounds(1e6, 1e9, "n")]
    shared = plausibility_smart.SmartLogs()
    failed = set()
    for before, after in itertools.product(logs, repeat=2):
        for window, bound in itertools.product((None, 60.0, 3 * 3600.0), bounds):
            alone = plausibility.check_smart_progress(before, after, window_s=window, bounds=bound, label="r")
            assert (
                plausibility.check_smart_progress(before, after, window_s=window, bounds=bound, label="r", logs=shared)
                == alone
            )
            failed |= {f.severity for f in alone}
        for label in ("a", "b"):
            assert shared.values_failures(before, label) == plausibility.check_smart_values(before, label)
        # submission_failures skips a log compared with itself from one snapshot to the next
        assert plausibility.check_smart_progress(before, before, window_s=None, bounds=bounds[1], label="r") == []
    assert failed == {plausibility.REJECT, plausibility.HOLD}, "the comparisons fail both ways"


def test_plainly_finite_figures_are_what_the_named_check_finds_nothing_in(make_verified):
    bundle = make_verified()
    record = read_bundle(bundle)
    m = record.test_runs[0].measurements[0]
    assert plausibility_measurement._plainly_finite_non_negative(m), "a real run takes the shortcut"
    odd = (None, True, -1, 0, 2**63 - 1, 2**63, 2**1100, math.nan, math.inf, -0.0, 1e308, -1e-300, "7", 1.5)
    found = set()
    for value in odd:
        for changed in (
            dataclasses.replace(m, summary=dataclasses.replace(m.summary, read_iops=value)),
            dataclasses.replace(m, summary=dataclasses.replace(m.summary, percentiles_ns={"read": {"99.0": value}})),
            dataclasses.replace(m, declared_runtime_s=value),
            dataclasses.replace(m, block_size_bytes=value),
        ):
            named = plausibility_measurement._figures_not_finite_non_negative(changed)
            assert plausibility.check_finite_non_negative(changed) == named, (value, changed)
            found.add(bool(named))
    assert found == {True, False}


def test_the_cross_checks_number_readers_take_the_usual_numbers_first_and_the_rest_as_before():
    cases = {5: 5.0, 2**1100: None, -(2**1100): None, 1.5: 1.5, math.nan: None, math.inf: None, True: None}
    cases |= {"7": 7.0, "1e400": None, "x": None, None: None, b"1": None}
    for value, number in cases.items():
        assert crosscheck._number(value) == number and type(crosscheck._number(value)) is type(number), value
    for value in (2**63, -(2**63), 2**63 - 1, math.nan, True, "1", None, 1e19, -0.5):
        bad = crosscheck._bad_figure({"iops": 1.0, "bw": value})
        usable = type(value) in (int, float) and abs(value) < 2**63
        assert bad == (None if usable else f"bw = {str(value)[:40]}"), value
