"""bench/_stages.py times the pipeline's stages on the measured path itself and puts every function back after."""

from __future__ import annotations

import re
import time

from bench import _stages
from bench._stages import Stage, StageClock


def test_each_stage_is_timed_while_active_and_restored_after(capsys):
    original = time.sleep
    stages = (Stage("sleeping", "time", "sleep"), Stage("inner", "time", "monotonic", inside="sleeping"))
    clock = StageClock(stages)
    with clock.timing():
        assert time.sleep is not original  # wrapped, looked up at each call as the pipeline looks it up
        time.sleep(0.02)
        time.sleep(0.01)
    assert time.sleep is original
    time.sleep(0.05)  # not timed: the clock is off
    assert 0.03 <= clock.seconds["sleeping"] < 0.05
    assert clock.paths == 1
    clock.report(0.1, {"analysis.tasks.refit": 0.04})
    out = capsys.readouterr().out
    assert "of which inner" in out
    assert "task refit (queued on commit)" in out
    # 0.1 s path: sleeping ~0.03 and the task 0.04 leave ~0.03 to the rest (the nested stage is not counted twice)
    rest = next(line for line in out.splitlines() if "the rest" in line)
    assert 25 <= float(re.search(r"([\d.]+) ms", rest).group(1)) <= 45


def test_the_ingest_stages_name_functions_that_exist():
    import importlib

    for stage in _stages.INGEST_STAGES:
        assert callable(getattr(importlib.import_module(stage.module), stage.name)), stage
        assert not stage.inside or stage.inside in {s.label for s in _stages.INGEST_STAGES}
