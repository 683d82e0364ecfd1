"""fio output parsing on every real sample in ../shared/samples/fio, cross-checked against the raw JSON."""

import copy
import json
import math
import re

import pytest

from nvmedb_client import jsonload
from nvmedb_client.fio_output import FioOutputError, parse_fio_output, percentiles_from_bins, summarize

NO_RESULT = {
    "louwrentius__fio-plot__benchmark_script__test__zda__randread-1-1.json": "contains no JSON result",
    "louwrentius__fio-plot__party__fio__1m__write-64-8.json": "is empty",
}
FAILED_JOB = {
    "local__fio-3.33__stdout_stderr_error_missing_file.json": "error 2",
    "louwrentius__fio-plot__party__fio__1m__run-1__write-64-1.json": "error 22",
}


def _sample(shared_samples, name):
    return (shared_samples / "fio" / name).read_bytes()


def _raw(shared_samples, name):
    """The JSON document of a sample that is a clean single document."""
    return json.loads(_sample(shared_samples, name))


def _all_samples(shared_samples):
    paths = sorted((shared_samples / "fio").iterdir())
    assert len(paths) >= 28
    return paths


def test_every_sample_parses_or_says_why_it_cannot(shared_samples):
    for path in _all_samples(shared_samples):
        if path.name in NO_RESULT:
            with pytest.raises(FioOutputError, match=NO_RESULT[path.name]):
                parse_fio_output(path.read_bytes())
            continue
        document = parse_fio_output(path.read_bytes())
        assert document["fio version"].startswith("fio-"), path.name
        if path.name in FAILED_JOB:
            with pytest.raises(FioOutputError, match=FAILED_JOB[path.name]):
                summarize(document)
            continue
        summary = summarize(document)
        assert summary.total_iops > 0, path.name
        assert summary.runtime_s > 0, path.name


def test_error_only_output_is_quoted_in_the_message(shared_samples):
    with pytest.raises(FioOutputError, match="fio: engine libaio not loadable"):
        parse_fio_output(
            _sample(shared_samples, "louwrentius__fio-plot__benchmark_script__test__zda__randread-1-1.json")
        )


def test_bandwidth_is_bytes_per_second_taken_from_bw_bytes_or_kib(shared_samples):
    checked_bw_bytes = checked_kib = 0
    for path in _all_samples(shared_samples):
        if path.name in NO_RESULT or path.name in FAILED_JOB:
            continue
        document = parse_fio_output(path.read_bytes())
        jobs = document.get("jobs") or document["client_stats"]
        if len(jobs) != 1 or "read" not in jobs[0]:
            continue
        raw = jobs[0]["read"]
        summary = summarize(document)
        if "bw_bytes" in raw:
            assert summary.read_bw_bytes_per_s == raw["bw_bytes"], path.name
            # fio rounds bw (KiB/s) down from bw_bytes
            assert raw["bw"] * 1024 <= raw["bw_bytes"] < (raw["bw"] + 1) * 1024, path.name
            checked_bw_bytes += 1
        else:
            assert summary.read_bw_bytes_per_s == raw["bw"] * 1024, path.name
            checked_kib += 1
    assert checked_bw_bytes >= 10 and checked_kib >= 2


def test_fio2_microsecond_latencies_become_nanoseconds(shared_samples):
    name = "louwrentius__fio-plot__example_data__randread-01.json"
    raw = _raw(shared_samples, name)["jobs"][0]["read"]
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert summary.fio_version.startswith("fio-2.")
    assert summary.read_lat_mean_ns == pytest.approx(raw["lat"]["mean"] * 1000)  # total latency, µs -> ns
    assert summary.read_lat_max_ns == raw["lat"]["max"] * 1000
    assert summary.read_clat_mean_ns == pytest.approx(raw["clat"]["mean"] * 1000)
    assert summary.read_slat_mean_ns == pytest.approx(raw["slat"]["mean"] * 1000)
    assert summary.clat_percentiles_ns["read"]["99.000000"] == raw["clat"]["percentile"]["99.000000"] * 1000
    assert "0.000000" not in summary.clat_percentiles_ns["read"]  # fio 2.x pads the map with "0.00": 0
    # fio 2.x printed percentiles of completion latency only: no total-latency percentile is made up from them
    assert summary.percentiles_ns == {}
    assert summary.write_lat_mean_ns is None  # a pure read job measured no write latency


def test_fio2_before_2_21_reports_io_bytes_in_kib(shared_samples):
    name = "louwrentius__fio-plot__example_data__randread-01.json"
    raw = _raw(shared_samples, name)["jobs"][0]["read"]
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert summary.read_bytes == raw["io_bytes"] * 1024
    # bytes moved ~= bandwidth x runtime
    assert summary.read_bytes == pytest.approx(summary.read_bw_bytes_per_s * raw["runtime"] / 1000, rel=0.01)


def test_fio3_nanosecond_latencies_are_kept(shared_samples):
    name = "local__fio-3.33__single_randread_json.json"
    raw = _raw(shared_samples, name)["jobs"][0]["read"]
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert summary.read_lat_mean_ns == raw["lat_ns"]["mean"]
    assert summary.lat_mean_ns == raw["lat_ns"]["mean"]
    assert summary.lat_max_ns == raw["lat_ns"]["max"]
    assert summary.clat_mean_ns == raw["clat_ns"]["mean"]
    assert summary.slat_mean_ns == raw["slat_ns"]["mean"]
    assert summary.read_bytes == raw["io_bytes"]
    assert summary.clat_percentiles_ns["read"] == {k: float(v) for k, v in raw["clat_ns"]["percentile"].items()}
    assert summary.percentiles_ns == {}  # this job did not ask for lat_percentiles


def test_jobs_without_group_reporting_are_summed(shared_samples):
    name = "local__fio-3.33__numjobs3_no_group_reporting.json"
    jobs = [job["write"] for job in _raw(shared_samples, name)["jobs"]]
    assert len(jobs) == 3
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert summary.jobs == 3
    assert summary.write_iops == pytest.approx(sum(job["iops"] for job in jobs))
    assert summary.write_bw_bytes_per_s == sum(job["bw_bytes"] for job in jobs)
    assert summary.write_bytes == sum(job["io_bytes"] for job in jobs)
    weighted = sum(job["lat_ns"]["mean"] * job["total_ios"] for job in jobs) / sum(job["total_ios"] for job in jobs)
    assert summary.write_lat_mean_ns == pytest.approx(weighted)
    assert summary.write_lat_max_ns == max(job["lat_ns"]["max"] for job in jobs)
    # three percentile maps cannot be averaged, and json (not json+) has no bins to merge: none is reported
    assert "write" not in summary.clat_percentiles_ns
    assert summary.read_iops == 0


def test_a_group_reported_job_is_taken_as_it_is(shared_samples):
    name = "local__fio-3.33__numjobs3_group_reporting.json"
    (raw,) = _raw(shared_samples, name)["jobs"]
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert summary.jobs == 1
    assert summary.total_iops == raw["read"]["iops"] + raw["write"]["iops"]


def test_json_plus_bins_reproduce_fios_own_percentiles(shared_samples):
    compared = 0
    for path in [*_all_samples(shared_samples), *sorted((shared_samples / "ssspt-hp-iops-1").glob("*round1.json"))]:
        if path.name in NO_RESULT:
            continue
        document = parse_fio_output(path.read_bytes())
        for job in document.get("jobs") or document.get("client_stats"):
            for direction in ("read", "write"):
                clat = job.get(direction, {}).get("clat_ns", {})
                if not clat.get("bins") or not clat.get("percentile"):
                    continue
                bins = {int(value): count for value, count in clat["bins"].items()}
                ours = percentiles_from_bins(bins, [float(p) for p in clat["percentile"]])
                assert ours == {f"{float(p):f}": float(v) for p, v in clat["percentile"].items()}, path.name
                compared += 1
    assert compared >= 10


def test_several_json_plus_jobs_get_percentiles_from_their_merged_bins(shared_samples):
    name = "local__fio-3.33__randrw_jsonplus.json"
    single = _raw(shared_samples, name)
    double = copy.deepcopy(single)
    double["jobs"].append(copy.deepcopy(single["jobs"][0]))
    one, two = summarize(single), summarize(double)
    # the same latency distribution twice over has the same percentiles, twice the IOPS, the same mean
    assert two.clat_percentiles_ns == one.clat_percentiles_ns
    assert set(two.clat_percentiles_ns) == {"read", "write"}
    assert two.total_iops == pytest.approx(2 * one.total_iops)
    assert two.lat_mean_ns == pytest.approx(one.lat_mean_ns)


def test_unified_mixed_reporting_does_not_invent_a_read_write_split(shared_samples):
    name = "local__fio-3.33__unified_rw_reporting_mixed.json"
    raw = _raw(shared_samples, name)["jobs"][0]["mixed"]
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert summary.read_iops is None and summary.write_iops is None
    assert summary.read_bw_bytes_per_s is None and summary.write_bytes is None
    assert summary.total_iops == raw["iops"]
    assert summary.total_bw_bytes_per_s == raw["bw_bytes"]
    assert summary.lat_mean_ns == raw["lat_ns"]["mean"]
    assert set(summary.clat_percentiles_ns) == {"mixed"}


def test_unified_both_reporting_uses_read_and_write_and_agrees_with_mixed(shared_samples):
    name = "local__fio-3.33__unified_rw_reporting_both.json"
    raw = _raw(shared_samples, name)["jobs"][0]
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert summary.read_iops == raw["read"]["iops"]
    assert summary.write_iops == raw["write"]["iops"]
    assert summary.total_iops == pytest.approx(raw["mixed"]["iops"], rel=1e-6)


def test_client_server_output_reads_client_stats(shared_samples):
    name = "local__fio-3.33__client_server_client_stats.json"
    raw = _raw(shared_samples, name)
    assert "jobs" not in raw
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert summary.read_iops == raw["client_stats"][0]["read"]["iops"]


def test_status_interval_output_yields_the_final_report(shared_samples):
    text = _sample(shared_samples, "local__fio-3.33__status_interval_concatenated.json").decode()
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    starts = [m.start() for m in re.finditer(r"^\{", text, re.MULTILINE)]
    reports = [json.loads(text[a:b]) for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    assert len(reports) == 4
    progress = [report["jobs"][0]["read"]["io_bytes"] for report in reports]
    assert progress == sorted(progress)  # interim reports count up to the final one
    document = parse_fio_output(text)
    assert document == reports[-1]
    assert summarize(document).read_bytes == progress[-1]


@pytest.mark.parametrize(
    "name",
    [
        "local__fio-3.33__normal_plus_json_combined.txt",
        "local__fio-3.33__stdout_psync_iodepth_note_prefix.json",
        "bensonjohnson__FIO-tests__fio.json",
        "louwrentius__fio-plot__deleteme__fio__4k__randread-1-1.json",
    ],
)
def test_text_around_the_json_is_skipped(shared_samples, name):
    text = _sample(shared_samples, name).decode()
    start = text.index('{\n  "fio version"')
    expected, _ = json.JSONDecoder().raw_decode(text, start)
    assert text[:start].strip()  # there really is text before the JSON
    assert parse_fio_output(text) == expected


def test_the_normal_report_after_the_json_agrees_with_the_summary(shared_samples):
    text = _sample(shared_samples, "local__fio-3.33__normal_plus_json_combined.txt").decode()
    kib_per_s = float(re.search(r"bw \(  KiB/s\):.*avg=([\d.]+)", text).group(1))
    summary = summarize(parse_fio_output(text))
    assert summary.read_bw_bytes_per_s == pytest.approx(kib_per_s * 1024, rel=0.05)


def test_a_brace_line_that_is_not_json_does_not_hide_the_result(shared_samples):
    clean = _sample(shared_samples, "local__fio-3.33__single_randread_json.json").decode()
    assert parse_fio_output("{ this is a warning, not json\n" + clean) == json.loads(clean)


def test_oversized_output_is_refused():
    with pytest.raises(FioOutputError, match="more than the 100-byte limit"):
        parse_fio_output("x" * 101, max_bytes=100)


def test_deeply_nested_output_is_refused():
    nested = '{"jobs": ' + "[" * 40 + "]" * 40 + "}"
    with pytest.raises(FioOutputError, match="nested deeper than 32 levels"):
        parse_fio_output(nested)


def test_pathologically_deep_output_gives_a_clear_error_not_a_crash():
    bomb = '{"jobs": ' + "[" * 200_000 + "]" * 200_000 + "}"
    with pytest.raises(FioOutputError, match="nested deeper"):
        parse_fio_output(bomb)
    with pytest.raises(FioOutputError, match="nested deeper"):
        parse_fio_output("warning\n" + bomb)


def test_it_parses_the_same_without_orjson(shared_samples, monkeypatch):
    data = _sample(shared_samples, "local__fio-3.33__randrw_jsonplus.json")
    with_orjson = parse_fio_output(data)
    monkeypatch.setattr(jsonload, "orjson", None)
    assert parse_fio_output(data) == with_orjson


def test_total_iops_is_read_plus_write_on_a_mixed_workload(shared_samples):
    name = "ljishen__SSSPT__analysis__data__platforms__hp__iops__3__wdpc_bs4KB_read65_round5.json"
    raw = _raw(shared_samples, name)["jobs"][0]
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert summary.total_iops == raw["read"]["iops"] + raw["write"]["iops"]
    reads, writes = raw["read"]["total_ios"], raw["write"]["total_ios"]
    expected = (raw["read"]["lat_ns"]["mean"] * reads + raw["write"]["lat_ns"]["mean"] * writes) / (reads + writes)
    assert math.isclose(summary.lat_mean_ns, expected, rel_tol=1e-12)
    assert summary.lat_max_ns == max(raw["read"]["lat_ns"]["max"], raw["write"]["lat_ns"]["max"])


@pytest.mark.fio
def test_real_fio_json_plus_with_status_reports_summarizes_to_what_was_asked(tmp_path):
    from nvmedb_client.system.commands import run_command

    size = 8 * 1024 * 1024
    block_size = 4096
    result = run_command(
        [
            "fio",
            "--name=nvmedb-test",
            f"--filename={tmp_path / 'target'}",
            f"--size={size}",
            f"--bs={block_size}",
            "--rw=randwrite",
            "--ioengine=psync",
            "--numjobs=2",
            "--output-format=json+",
            "--status-interval=1",
            "--percentile_list=50:99:99.9",
            "--lat_percentiles=1",
        ],
        check=True,
    )
    summary = summarize(parse_fio_output(result.stdout))
    assert summary.jobs == 2  # no group_reporting: one entry per job, summed here
    assert summary.write_bytes == 2 * size  # each job writes the whole file once
    assert summary.read_bytes == 0 and summary.read_lat_mean_ns is None
    assert summary.write_iops > 0
    assert 0 < summary.write_lat_mean_ns <= summary.write_lat_max_ns
    assert set(summary.percentiles_ns["write"]) == {"50.000000", "99.000000", "99.900000"}  # from merged bins
    assert 0 < summary.percentiles_ns["write"]["50.000000"] <= summary.percentiles_ns["write"]["99.900000"]
    assert summary.percentiles_ns["write"]["99.900000"] <= summary.write_lat_max_ns


@pytest.mark.parametrize(
    "document, words",
    [
        ({"fio version": "fio-3.33", "jobs": []}, "no job results"),
        ({"fio version": "fio-3.33", "jobs": [{"read": {"iops": "many"}}]}, "unexpected shape"),
        ({"fio version": "fio-3.33", "jobs": [{"read": {"iops": [1]}}]}, "unexpected shape"),
        ({"fio version": 3, "jobs": [{"read": {"iops": 1}}]}, "non-text 'fio version'"),
        ({"fio version": "fio-3.33", "jobs": [{"read": {"iops": float("nan"), "runtime": 1000}}]}, "non-finite"),
        ({"fio version": "fio-3.33", "jobs": ["not a job"]}, "no job results"),
    ],
)
def test_a_malformed_document_raises_a_clear_error_not_a_crash(document, words):
    with pytest.raises(FioOutputError, match=words):
        summarize(document)


def _samples_with_submission_latency(shared_samples):
    for path in [*_all_samples(shared_samples), *sorted((shared_samples / "ssspt-hp-iops-1").glob("*round1.json"))]:
        if path.name in NO_RESULT:
            continue
        try:
            summary = summarize(parse_fio_output(path.read_bytes()))
        except FioOutputError:
            continue  # a failed job's output: no latency to compare
        if summary.slat_mean_ns:
            yield path, summary


def test_latency_is_total_latency_submission_plus_completion_on_real_outputs(shared_samples):
    checked = 0
    for path, summary in _samples_with_submission_latency(shared_samples):
        assert summary.lat_mean_ns > summary.clat_mean_ns, path.name
        # an I/O's total is its slat + clat plus the moments between fio's clocks, so the means nearly add up
        assert summary.lat_mean_ns == pytest.approx(summary.clat_mean_ns + summary.slat_mean_ns, rel=0.02), path.name
        assert summary.lat_max_ns >= summary.clat_max_ns, path.name
        checked += 1
    assert checked >= 10


def test_a_json_plus_output_with_submission_latency_reports_more_than_completion(shared_samples):
    name = "ljishen__SSSPT__analysis__data__platforms__rockpro64__lat__1__wdpc_bs4KB_read0_round1.json"
    raw = _raw(shared_samples, name)["jobs"][0]["write"]
    summary = summarize(parse_fio_output(_sample(shared_samples, name)))
    assert raw["slat_ns"]["mean"] > 40_000  # 45 µs of submission on this ARM board
    assert summary.lat_mean_ns == raw["lat_ns"]["mean"] != raw["clat_ns"]["mean"]
    assert summary.clat_mean_ns == raw["clat_ns"]["mean"]
    assert summary.lat_mean_ns - summary.clat_mean_ns > 40_000


def test_total_latency_percentiles_come_from_fios_lat_map_when_asked_for(shared_samples):
    name = "local__fio-3.33__jobfile_two_groups_stonewall_lat_slat_percentiles.json"
    raw = _raw(shared_samples, name)
    document = copy.deepcopy(raw)
    document["jobs"] = [job for job in raw["jobs"] if job["job options"].get("lat_percentiles") == "1"]
    (job,) = document["jobs"]
    summary = summarize(document)
    assert summary.percentiles_ns["read"] == {k: float(v) for k, v in job["read"]["lat_ns"]["percentile"].items()}
    assert summary.clat_percentiles_ns["read"] == {k: float(v) for k, v in job["read"]["clat_ns"]["percentile"].items()}
    assert summary.percentiles_ns["read"] != summary.clat_percentiles_ns["read"]


@pytest.mark.fio
def test_a_generated_job_file_gives_total_latency_percentiles_in_json_plus(tmp_path):
    from nvmedb_client.fio_jobs import render_cell
    from nvmedb_client.plan import Cell
    from nvmedb_client.system.commands import run_command

    target = tmp_path / "target"
    target.write_bytes(b"\0" * (8 * 1024 * 1024))
    job = render_cell(
        name="lat",
        filename=str(target),
        cell=Cell("randrw", 4096, 65),
        threads=2,
        iodepth=4,
        runtime_s=1,
        range_bytes=8 * 1024 * 1024,
        split=False,
        ioengine="libaio",
    ).replace("direct=1", "direct=0")  # tmpfs has no O_DIRECT
    (tmp_path / "job.fio").write_text(job)
    result = run_command(["fio", "--output-format=json+", str(tmp_path / "job.fio")], check=True)
    raw = parse_fio_output(result.stdout)["jobs"][0]
    assert "bins" in raw["read"]["lat_ns"] and "percentile" in raw["read"]["lat_ns"]
    summary = summarize(parse_fio_output(result.stdout))
    assert set(summary.percentiles_ns) == {"read", "write"}
    assert summary.percentiles_ns["read"] == {k: float(v) for k, v in raw["read"]["lat_ns"]["percentile"].items()}
    for direction in ("read", "write"):
        for key, total in summary.percentiles_ns[direction].items():
            assert total >= summary.clat_percentiles_ns[direction][key] * 0.98  # bins are ~2 % wide


def test_percentile_keys_are_spelled_alike_however_many_an_output_invents():
    """The keys of a latency table as summaries spell them (0 left out), the same on every read; an output with
    thousands of made-up keys is summarized in full and leaves the remembered spellings bounded."""
    from nvmedb_client import fio_output

    def output(percentiles: dict) -> dict:
        read = {"iops": 10.0, "bw_bytes": 40960, "io_bytes": 409600, "runtime": 10000, "total_ios": 100,
                "clat_ns": {"mean": 1000.0, "max": 5000, "N": 100, "percentile": percentiles}}  # fmt: skip
        return {"fio version": "fio-3.33", "jobs": [{"jobname": "j", "error": 0, "read": read}]}

    fio = {"0.00": 0, "1.000000": 100, "99.990000": 4000, "5.5": 200, "1e1": 300}
    for _ in range(2):
        table = summarize(output(fio)).clat_percentiles_ns["read"]
        assert table == {"1.000000": 100.0, "99.990000": 4000.0, "5.500000": 200.0, "10.000000": 300.0}
    invented = {f"{i / 100:.6f}": i for i in range(1, 5001)}
    assert len(summarize(output(invented)).clat_percentiles_ns["read"]) == 5000
    assert len(fio_output._PERCENTILE_ENTRIES) <= 1024
    with pytest.raises(FioOutputError, match="unexpected shape"):
        summarize(output({"p99": 5}))
