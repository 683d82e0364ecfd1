"""A drive's run counts as its pages show them: its runs of the PTS tests, of which those that followed the PTS
procedure (compliant) are counted apart, and apart from them the runs of an nvmedb extension (the queue-depth x
block-size surface), which never count as PTS results. A run of a PTS test is a PTS result only when compliant: an
imported run (SSSPT, a quick profile) is a "test run", never a "PTS test run"."""

from __future__ import annotations

from django.db.models import QuerySet

from analysis.selectors import is_extension, pts_q


def pts_runs(runs: QuerySet) -> QuerySet:
    """The PTS runs of a run queryset (what the spread factors and the list's run filters read)."""
    return runs.filter(pts_q())


def pts_flags(flags: QuerySet) -> QuerySet:
    """Flags on a PTS run, its measurements or a whole submission: not those on a surface run or its cells."""
    return flags.filter(pts_q("test_run__"))


def run_counts(runs: list[dict]) -> dict[str, int]:
    """n_runs, n_submissions and n_units over the runs of PTS tests in `runs` (rows with test, submission_id,
    unit_id and compliant), n_compliant_runs over those that are PTS-compliant; n_surface_runs over the others."""
    pts = [r for r in runs if not is_extension(r["test"])]
    return {
        "n_runs": len(pts),
        "n_compliant_runs": sum(1 for r in pts if r.get("compliant")),
        "n_submissions": len({r["submission_id"] for r in pts}),
        "n_units": len({r["unit_id"] for r in pts if r["unit_id"] is not None}),
        "n_surface_runs": len(runs) - len(pts),
    }
