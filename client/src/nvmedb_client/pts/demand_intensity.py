"""The TC x QD sweep that ECW and DIRTH share: its plan, and the demand-intensity curve derived from the raw fio
outputs (the client's claim in the manifest, re-derived by `verify` and by the server from the same files).

A round runs every (TC, QD) cell once, TC from high to low and QD from high to low inside it; rounds repeat until
the tracked cell (the highest TC and QD) is steady by the PTS rule, at most the profile's round limit. The curve is
read from the steady round (or the last round when steady state was not reached, which the entry says).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from nvmedb_client.fio_output import FioOutputError, parse_fio_output, percentiles_from_bins, summarize
from nvmedb_client.plan_types import Block, Cell, PlanContext, Planned, Series, TrackingVariable
from nvmedb_client.pts import dirth, dirth_capture, dirth_prewrite, ecw
from nvmedb_client.pts.figures import ManifestFigures
from nvmedb_client.tracking_verdicts import evaluate_test

TESTS = ("ecw", "dirth")
PTS_THREADS = (32, 16, 8, 6, 4, 2, 1)
PTS_DEPTHS = (32, 16, 8, 6, 4, 2, 1)
QUICK_THREADS = (2, 1)
QUICK_DEPTHS = (4, 1)
FIVE_NINES = 99.999
# (block size recorded, read %) of each test's cells; the tracked cell is the sweep's highest TC and QD
TRACKED_CELL = {"ecw": (ecw.NOMINAL_BLOCK_SIZE, ecw.READ_PCT), "dirth": (dirth.BLOCK_SIZE, dirth.READ_PCT)}
TRACKED_PHASES = ("wdpc",)
MAX_BINS = 4096  # fio 3.x keeps 1856 latency bins per direction; more is not fio's output
MAX_BIN_VALUE_NS = 2**63


def grid(profile_name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return (QUICK_THREADS, QUICK_DEPTHS) if profile_name == "quick" else (PTS_THREADS, PTS_DEPTHS)


def build_block(test: str, *, profile, max_rounds: int, wipc_threads: int, lba_size_bytes: int | None):
    """(the Block of `test`, None) or (None, the reason it cannot run on this namespace)."""
    if test == "ecw" and lba_size_bytes and lba_size_bytes > ecw.SMALLEST_BLOCK_SIZE:
        return None, (
            f"ecw skipped: its block-size mix issues {ecw.SMALLEST_BLOCK_SIZE}-byte blocks, which direct I/O cannot "
            f"issue on a namespace of {lba_size_bytes}-byte LBAs"
        )
    bs, read_pct = TRACKED_CELL[test]
    workload = "ecw" if test == "ecw" else None
    threads, depths = grid(profile.name)
    cells = tuple(Cell("randrw", bs, read_pct, tc, qd, workload) for tc in threads for qd in depths)
    series = Series(test, "wdpc", cells, threads[0], depths[0], profile.cell_runtime_s, max_rounds)
    captures = dirth_capture.plan_captures(profile) if test == "dirth" else ()
    prewrites = (
        dirth_prewrite.plan_prewrites(profile, max_rounds=max_rounds, threads=threads[0], iodepth=depths[0])
        if test == "dirth"
        else ()
    )
    block = Block(test, test, purge=True, wipc=True, series=(series,), wipc_threads=wipc_threads, captures=captures,
                  prewrites=prewrites)  # fmt: skip
    return block, None


def plan_blocks(test: str, ctx: PlanContext) -> Planned:
    """ECW or DIRTH: its sweep's block, or no block and the reason this namespace cannot run it."""
    block, reason = build_block(test, profile=ctx.profile, max_rounds=ctx.max_rounds, wipc_threads=ctx.threads,
                                lba_size_bytes=ctx.lba_size_bytes)  # fmt: skip
    return Planned((block,) if block else (), (reason,) if reason else ())


def tracking_variables(
    test: str, *, block_sizes: Sequence[int] = (), demand_point: tuple[int, int] | None = None
) -> list[TrackingVariable]:
    """The total IOPS of the sweep's `demand_point` cell (its highest TC and QD); none before a cell is known."""
    if demand_point is None:
        return []
    bs, read_pct = TRACKED_CELL[test]
    tc, qd = demand_point
    return [
        TrackingVariable(
            id=f"{test}.total_iops.tc{tc}.qd{qd}",
            test=test,
            phase="wdpc",
            metric="total_iops",
            block_size_bytes=bs,
            read_pct=read_pct,
            threads=tc,
            iodepth=qd,
        )
    ]


def describe_series(test: str, series: Mapping) -> list[str]:
    """The `nvmedb-client plan` lines of a TC x QD sweep (a series of plan_to_dict)."""
    cells = series["cells"]
    threads = ", ".join(str(t) for t in dict.fromkeys(c["threads"] for c in cells))
    depths = ", ".join(str(q) for q in dict.fromkeys(c["iodepth"] for c in cells))
    first = cells[0]
    if test == "ecw":
        sizes = ", ".join(f"{size / 1024:g} KiB {pct}%" for size, pct in ecw.BLOCK_SIZE_MIX)
        zones = ", ".join(f"{ios}% of I/Os to {share}% of the range" for ios, share in ecw.LBA_ZONES)
        stimulus = [f"    stimulus: random, {first['read_pct']}/{100 - first['read_pct']} R/W, blocks {sizes}",
                    f"    hot zones: {zones}"]  # fmt: skip
    else:
        stimulus = [f"    stimulus: random, {first['read_pct']}/{100 - first['read_pct']} R/W, "
                    f"{first['block_size_bytes'] / 1024:g} KiB blocks"]  # fmt: skip
    lines = [
        f"  {series['phase']}: TC x QD sweep, {series['runtime_s']:g} s per cell, {len(cells)} cell(s) per round",
        f"    thread counts (outer loop, high to low): {threads}",
        f"    queue depths (inner loop, high to low): {depths}",
        *stimulus,
    ]
    for variable in series["tracking_variables"]:
        lines.append(f"    tracking: {variable['metric']} at TC {variable['threads']} / QD {variable['iodepth']}")
    lines.append(f"    stop: {series['stop_rule']}")
    if test == "dirth":
        lines.append(
            "    then: the curve from the steady (or last) round; MaxIOPS and MidIOPS among the cells whose mean "
            f"response time is below {dirth.RESPONSE_TIME_CEILING_NS / 1e6:g} ms, MinIOPS (TC 1/QD 1), each captured "
            "again (below) for its response-time histogram from fio's json+ bins"
        )
    else:
        lines.append("    then: the demand-intensity curve from the steady (or last) round")
    return lines


def before_round(runner, block, round_number: int) -> None:
    """The runner's step before each round of a sweep: DIRTH's pre-write (ECW plans none)."""
    dirth_prewrite.run_before_round(runner, block, round_number)


def workload_options(name: str) -> list[str]:
    if name == "ecw":
        return ecw.fio_options()
    raise ValueError(f"unknown workload {name!r}")


def workload_job_lines(name: str) -> tuple[list[str], list[str]]:
    """The ECW's job lines: its block-size mix and LBA hot zones in place of bs=, nothing after the R/W mix."""
    return workload_options(name), []


# -- the derivation ------------------------------------------------------------------------------------------------


def parsing(read: Callable[[str], bytes]) -> Callable[[str], Mapping]:
    """A `load` for derive from a reader of raw files: each fio output parsed when asked for. A verified bundle's
    `parsed` cache is the server's `load` (see rederive): its ingest has parsed every output once already."""
    return lambda path: parse_fio_output(read(path))


def derive_all(runs: Sequence[dict], load: Callable[[str], Mapping]) -> list[dict]:
    """The manifest's `demand_intensity[]`: one entry per ECW or DIRTH test that has runs. `load` gives the parsed
    fio output of the run directory (or bundle) by its relative path (raising FioOutputError, OSError or KeyError)."""
    return [entry for test in TESTS if (entry := derive(test, runs, load)) is not None]


def derive(test: str, runs: Sequence[dict], load: Callable[[str], Mapping]) -> dict | None:
    measured = [r for r in runs if r.get("test") == test and r.get("phase") == "wdpc" and _is_cell(r)]
    if not measured:
        return None
    summaries, problems = {}, {}
    for run in measured:
        try:
            summaries[run["id"]] = summarize(load(run["output_file"]))
        except (FioOutputError, OSError, KeyError) as exc:
            problems[run["id"]] = f"its fio output cannot be read: {exc}"
    verdicts = evaluate_test(test, tracking_variables, measured, summaries, TRACKED_PHASES)
    steady_round = next((v["steady_round"] for v in verdicts if v["steady"]), None)
    chosen = steady_round if steady_round is not None else max(int(r["round"]) for r in measured)
    basis = "steady round" if steady_round is not None else "last round: steady state not reached"
    cells = sorted({(int(r["threads"]), int(r["iodepth"])) for r in measured}, reverse=True)
    in_round = {(int(r["threads"]), int(r["iodepth"])): r for r in measured if int(r["round"]) == chosen}
    points = []
    for tc, qd in cells:
        run = in_round.get((tc, qd))
        point = {"threads": tc, "iodepth": qd, "oio": tc * qd}
        if run is None:
            point["missing"] = f"round {chosen} has no run of TC {tc}/QD {qd}"
        elif run["id"] in problems:
            point.update(run_id=run["id"], missing=problems[run["id"]])
        else:
            summary = summaries[run["id"]]
            tail, tail_problem = _five_nines(load(run["output_file"]))
            point.update(run_id=run["id"], iops=summary.total_iops, lat_mean_ns=summary.lat_mean_ns)
            point["lat_p99_999_ns"] = tail
            if tail_problem:
                point["lat_p99_999_missing"] = tail_problem
        points.append(point)
    entry = {"test": test, "round": chosen, "round_basis": basis, "points": points}
    if test == "dirth":
        entry["operating_points"] = dirth.operating_points(points)
        captures = dirth_capture.capture_runs(runs, test)
        if captures:  # a bundle without captures (older clients) keeps the sweep cell's histogram, unlabelled
            entry["histograms"] = dirth_capture.histograms(entry["operating_points"], captures, load, _histogram_entry)
            return entry
        by_run = {r["id"]: r for r in measured}
        entry["histograms"] = [
            _histogram_entry(op, by_run[op["run_id"]], load) for op in entry["operating_points"] if "run_id" in op
        ]
    return entry


def _is_cell(run: Mapping) -> bool:
    return all(isinstance(run.get(key), int) and run[key] >= 1 for key in ("threads", "iodepth", "round"))


def _histogram_entry(point: Mapping, run: Mapping, load: Callable[[str], Mapping]) -> dict:
    try:
        bins, kind = latency_bins(load(run["output_file"]))
    except (FioOutputError, OSError, KeyError) as exc:
        return {"point": point["name"], "run_id": run["id"], "missing": f"its fio output cannot be read: {exc}"}
    if not bins:
        return {"point": point["name"], "run_id": run["id"], "missing": "its fio output has no json+ latency bins"}
    return {
        "point": point["name"],
        "run_id": run["id"],
        "latency": kind,
        "total_ios": sum(bins.values()),
        "buckets": dirth.histogram(bins),
    }


def _five_nines(doc: Mapping) -> tuple[float | None, str | None]:
    try:
        bins, _ = latency_bins(doc)
    except FioOutputError as exc:
        return None, str(exc)
    if not bins:
        return None, "no json+ latency bins to read the 99.999th percentile from"
    value = percentiles_from_bins(bins, [FIVE_NINES]).get(f"{FIVE_NINES:f}")
    return value, None


def latency_bins(doc: Mapping) -> tuple[dict[int, int], str | None]:
    """Every job's and direction's json+ bins of total latency (`lat_ns`, the PTS response time) merged, or of
    completion latency (`clat_ns`) when the output has no total-latency bins; (bins, "lat" | "clat" | None).
    Hostile shapes raise FioOutputError."""
    entries = doc.get("jobs")
    if not isinstance(entries, list):
        raise FioOutputError("fio output has no 'jobs' list")
    for kind in ("lat", "clat"):
        merged: dict[int, int] = {}
        for entry in entries:
            for direction in ("read", "write", "mixed"):
                data = entry.get(direction) if isinstance(entry, dict) else None
                latency = data.get(f"{kind}_ns") if isinstance(data, dict) else None
                bins = latency.get("bins") if isinstance(latency, dict) else None
                if bins is not None:
                    _merge_bins(merged, bins)
        if merged:
            return merged, kind
    return {}, None


def _merge_bins(merged: dict[int, int], bins: object) -> None:
    if not isinstance(bins, dict) or len(bins) > MAX_BINS:
        raise FioOutputError(f"fio output has latency bins that are not a map of at most {MAX_BINS} entries")
    for key, count in bins.items():
        try:
            value = int(key)
        except (TypeError, ValueError):
            raise FioOutputError(f"fio output has a latency bin {key!r} that is not a whole number of ns") from None
        if not 0 <= value < MAX_BIN_VALUE_NS or isinstance(count, bool) or not isinstance(count, int):
            raise FioOutputError(f"fio output has a latency bin {key!r}: {count!r} out of range")
        if not 0 <= count < MAX_BIN_VALUE_NS:
            raise FioOutputError(f"fio output has a latency bin count {count!r} out of range")
        merged[value] = merged.get(value, 0) + count


# -- comparing the claim -------------------------------------------------------------------------------------------


def claim_differences(claimed: object, derived: Iterable[dict]) -> list[str]:
    """Sentences naming every test whose claimed curve, operating points or histograms differ from the raw data."""
    entries = claimed if isinstance(claimed, list) else []
    claims = {e["test"]: e for e in entries if isinstance(e, dict) and isinstance(e.get("test"), str)}
    differences = []
    for entry in derived:
        claim = claims.pop(entry["test"], None)
        if claim is None:
            differences.append(f"the manifest has no demand-intensity result for {entry['test']}")
            continue
        for key in ("round", "points", "operating_points", "histograms"):
            if claim.get(key) != entry.get(key):
                differences.append(f"{entry['test']}: the manifest's {key.replace('_', ' ')} differ from the raw data")
    for test in sorted(claims, key=str):
        differences.append(f"the manifest claims a demand-intensity result for {test}, which its runs do not support")
    return differences


def summary_lines(derived: Iterable[dict]) -> list[str]:
    """One sentence per test for `nvmedb-client verify`: where its curve comes from and its operating points."""
    lines = []
    for entry in derived:
        measured = sum(1 for p in entry["points"] if "iops" in p)
        line = (
            f"{entry['test'].upper()}: demand-intensity curve re-derived from round {entry['round']} "
            f"({entry['round_basis']}), {measured} of {len(entry['points'])} TC x QD cells measured"
        )
        chosen = [
            f"{op['name']} TC {op['threads']}/QD {op['iodepth']}"
            for op in entry.get("operating_points", [])
            if "threads" in op
        ]
        line += f"; operating points {', '.join(chosen)}" if chosen else ""
        histograms = entry.get("histograms", [])
        if histograms:
            line += "; histograms from " + ("the captures" if "source" in histograms[0] else "the sweep cells")
        line += "".join(f"; {h['point']}: {h['missing']}" for h in histograms if h.get("flag"))
        lines.append(line)
    return lines


def rederive(bundle) -> list[dict]:
    """derive_all from a verified bundle's raw files (nvmedb_client.bundle.VerifiedBundle)."""
    return derive_all(bundle.manifest["runs"], bundle.fio_output)


def manifest_claim(manifest: Mapping, *, read: Callable[[str], bytes], summaries=None, ioengine=None) -> list | None:
    """The manifest's `demand_intensity[]` of a finished run, read from its files (None: no ECW or DIRTH runs)."""
    return derive_all(manifest["runs"], parsing(read)) or None


MANIFEST_FIGURES = ManifestFigures(
    key="demand_intensity",
    mismatch="ECW/DIRTH claim differs",
    derive=manifest_claim,
    rederive=rederive,
    differences=claim_differences,
    verify_lines=summary_lines,
)


def describe_block(block: Mapping) -> list[str]:
    """The `nvmedb-client plan` lines after a sweep's series: DIRTH's pre-writes and captures (a block of plan_to_dict)."""
    return dirth_prewrite.describe(block.get("prewrites") or []) + dirth_capture.describe(block.get("captures") or [])
