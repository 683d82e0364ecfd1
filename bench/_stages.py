"""Where a worker path's wall time goes, stage by stage, measured on the path itself (no profiler's overhead).

`StageClock` wraps named functions of the pipeline (module attributes, looked up at each call) while it is active,
adds up each one's wall time, and prints every stage's mean per path and its share of the whole path, with what no
stage covers. A stage may sit inside another ("of which"); the tasks the path ran come from the caller (measured by
Celery's own signals), so the shares add up to the path.
"""

from __future__ import annotations

import contextlib
import importlib
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    label: str
    module: str
    name: str
    inside: str = ""  # the label of the stage it runs within, if any


# The intake of one bundle (submissions.pipeline) and its ingest (analysis.ingest), in the order they run
INGEST_STAGES = (
    Stage("verify: archive stream, hashes, signature, limits", "submissions.pipeline", "verify_stored_bundle"),
    Stage("content fingerprints: parse, fio summaries, digests", "submissions.pipeline", "bundle_fingerprints"),
    Stage("content fingerprints stored", "submissions.pipeline", "record_fingerprints"),
    Stage("content that could match: locked and read", "submissions.pipeline", "lock_fingerprints"),
    Stage("content compared with others' (under lock)", "submissions.pipeline", "first_received_conflict"),
    Stage("read_bundle: cross-checks, steady state, plausibility", "analysis.ingest", "read_bundle"),
    Stage("store_submission: rows, flags, outliers, aggregates", "analysis.ingest", "store_submission"),
    Stage(
        "the drive's aggregates recomputed",
        "analysis.services",
        "refresh_aggregates",
        inside="store_submission: rows, flags, outliers, aggregates",
    ),
    Stage("raw-file identifiers gathered (on commit)", "analysis.raw_identifiers", "identifiers_of_verified"),
)


class StageClock:
    def __init__(self, stages=INGEST_STAGES):
        self.stages = stages
        self.seconds = {stage.label: 0.0 for stage in stages}
        self.paths = 0

    @contextlib.contextmanager
    def timing(self):
        """Times the stages during one path (counted once)."""
        originals = []
        for stage in self.stages:
            module = importlib.import_module(stage.module)
            original = getattr(module, stage.name)
            originals.append((module, stage.name, original))
            setattr(module, stage.name, self._timed(stage.label, original))
        try:
            yield
        finally:
            for module, name, original in originals:
                setattr(module, name, original)
            self.paths += 1

    def _timed(self, label: str, function):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started

        return timed

    def report(self, path_seconds: float, tasks: dict[str, float]) -> None:
        """Each stage's and each task's mean per path, with its share of `path_seconds` (the mean full path)."""
        if not self.paths:
            return
        print(f"where the full path's {path_seconds * 1000:.0f} ms go (wall time, mean of {self.paths} paths):")
        covered = 0.0
        for stage in self.stages:
            mean = self.seconds[stage.label] / self.paths
            covered += 0 if stage.inside else mean
            label = f"  of which {stage.label}" if stage.inside else stage.label
            print(f"  {label:64} {mean * 1000:7.1f} ms {mean / path_seconds:6.1%}")
        for name, mean in sorted(tasks.items()):
            covered += mean
            print(f"  {'task ' + name.rsplit('.', 1)[-1] + ' (queued on commit)':64} {mean * 1000:7.1f} ms "
                  f"{mean / path_seconds:6.1%}")  # fmt: skip
        rest = path_seconds - covered
        print(
            f"  {'the rest: claims, transitions, locks, commits':64} {rest * 1000:7.1f} ms {rest / path_seconds:6.1%}"
        )
