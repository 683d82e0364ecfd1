"""A signature's figures are the summary's own, by name, in their order: runtime, IOPS, bandwidth, bytes, mean total
and completion latency, largest total latency; one signature per direction that did I/O, or one of the mixed total
where fio reported only that (unified_rw_reporting). On real fio outputs of the shared samples."""

from nvmedb_client.fio_output import parse_fio_output, summarize
from submissions import content

FIGURES = ("runtime_s", "{}iops", "{}bw_bytes_per_s", "{}bytes", "{}lat_mean_ns", "{}clat_mean_ns", "{}lat_max_ns")


def by_name(summary, prefix: str, latency_prefix: str) -> tuple:
    names = [name.format(latency_prefix if "lat" in name else prefix) for name in FIGURES]
    return tuple(None if getattr(summary, name) is None else float(getattr(summary, name)) for name in names)


def test_each_direction_gets_the_summarys_figures_by_name(shared_samples):
    checked = 0
    paths = [*(shared_samples / "fio").glob("*.json"), *(shared_samples / "ssspt-hp-iops-1").glob("*.json")]
    for path in sorted(paths):
        try:
            doc = parse_fio_output(path.read_bytes())
            summary = summarize(doc)
        except Exception:  # noqa: BLE001, S112 - samples of failed runs: signature_values gives none for them
            continue
        for direction, values in content.signature_values(doc, summary):
            if direction == "mixed":
                continue
            assert values == by_name(summary, f"{direction}_", f"{direction}_"), path.name
            checked += 1
    assert checked > 300


def test_unified_rw_reporting_gets_one_signature_of_the_mixed_total(shared_samples):
    doc = parse_fio_output((shared_samples / "fio" / "local__fio-3.33__unified_rw_reporting_mixed.json").read_bytes())
    summary = summarize(doc)
    assert summary.read_iops is None and summary.write_iops is None
    assert content.signature_values(doc, summary) == [("mixed", by_name(summary, "total_", ""))]
