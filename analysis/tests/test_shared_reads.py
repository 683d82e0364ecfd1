"""What the fingerprints and the ingest read once and share: each fio output's summary, each plan series' cells.
Sharing must change no figure and no verdict."""

import copy

from analysis import crosscheck
from analysis.bundle_reader import read_bundle
from analysis.plan_cells import PlanCells
from analysis.plausibility.measurement import planned_runtime_s
from nvmedb_client.fio_output import parse_fio_output, summarize
from submissions.content import SIGNATURE, bundle_fingerprints, signature_values


def test_the_ingest_reads_each_outputs_summary_as_a_fresh_parse_gives_it(make_verified):
    bundle = make_verified()
    fingerprints = bundle_fingerprints(bundle)  # first, as the pipeline runs it: it makes the shared summaries
    record = read_bundle(bundle)
    measurements = [m for test_run in record.test_runs for m in test_run.measurements]
    assert measurements
    for m in measurements:
        fresh = parse_fio_output(bundle.read_bytes(m.raw_file))
        assert m.summary == summarize(fresh), m.raw_file
    signatures = {(f.path, f.direction): f.values for f in fingerprints if f.kind == SIGNATURE}
    for path in {m.raw_file for m in measurements}:
        fresh = parse_fio_output(bundle.read_bytes(path))
        assert {(path, d): v for d, v in signature_values(fresh)} == {
            k: v for k, v in signatures.items() if k[0] == path
        }


def _plan_and_runs(make_verified):
    bundle = make_verified()
    return bundle.manifest["plan"], list(bundle.manifest["runs"])


def test_one_plan_cells_for_every_run_gives_each_runs_own_verdict(make_verified):
    plan, runs = _plan_and_runs(make_verified)
    assert plan.get("blocks") and runs
    wrong = copy.deepcopy(runs)
    for run in wrong[::2]:  # every other run moved off the plan: a cell, a depth or a runtime it does not declare
        run["read_pct"], run["iodepth"], run["runtime_s"] = 37, 3, 1
    cells = PlanCells()
    for run in runs + wrong:
        alone = crosscheck.check_run_against_plan(run=run, plan=plan)
        assert crosscheck.check_run_against_plan(run=run, plan=plan, cells=cells) == alone
    assert any(crosscheck.check_run_against_plan(run=run, plan=plan) for run in wrong), "the check can fail"


def test_plan_cells_keep_lists_for_a_plan_with_unhashable_values():
    plan = {"blocks": [{"test": "iops", "series": [{"phase": "", "cells": [{"pattern": ["x"], "read_pct": {}}]}]}]}
    run = {"id": "r", "test": "iops", "phase": "", "pattern": ["x"], "block_size_bytes": None, "read_pct": {}}
    cells = PlanCells()
    assert crosscheck.check_run_against_plan(run=run, plan=plan, cells=cells) == crosscheck.check_run_against_plan(
        run=run, plan=plan
    )
    assert cells.without_depth(plan["blocks"][0]["series"][0]) == [(["x"], None, {})]
    assert planned_runtime_s(plan, _measurement(), cells) is None


def _measurement():
    from analysis.records import MeasurementRecord

    return MeasurementRecord(
        run_key="r",
        test="iops",
        phase="",
        series="",
        round_number=1,
        block_size_bytes=0,
        read_pct=0,
        summary=None,
        raw_file="fio/r.json",
        json_path="$.jobs[*]",
    )
