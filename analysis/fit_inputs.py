"""What a factor fit of a drive model reads: its public PTS runs with their unit, contributor, headline and recorded
conditions (analysis.factor_rows builds the model's rows from them), and the digest of those inputs.

The refit stores the digest with the figures it fitted (analysis.factor_figures); a submission's page reads the same
columns again and compares (analysis.explain_model.metric_models). Equal inputs give equal rows, so equal digests
mean the stored figures are those a fit would give now; a page so tells current figures from figures of older data
with one query, without building the rows.
"""

from __future__ import annotations

import hashlib

from django.db.models import BooleanField, ExpressionWrapper, QuerySet

from analysis.models import DriveModel, FlagKind
from analysis.selectors import pts_q, public_pts_runs, run_flagged_q

RUN_FIELDS = (
    "id", "unit_id", "submission__uploader_id", "headline", "overprovisioning", "percentage_used",
    "max_temperature_k", "scheduler", "firmware__revision", "host__cpu_model", "host__kernel",
    "pcie_link__generation", "pcie_link__width", "pcie_link__below_capability",
    "pcie_link__usable_bandwidth_bytes_per_s",
)  # fmt: skip
# and a thermal-throttle flag on the run or its submission; the submission and the link's speed are not in the rows,
# but a submission's page places its unit among these runs too (analysis.explain): one query serves both
INPUT_FIELDS = (*RUN_FIELDS, "thermal_flag", "submission_id", "pcie_link__speed_gts")
POSITION = {name: index for index, name in enumerate(INPUT_FIELDS)}  # a field's place in the tuples read
DIGEST_FORMAT = b"nvmedb fit inputs 1\n"  # what is hashed, so a digest of another format never compares equal


def fit_runs(drive_model: DriveModel, runs_of: QuerySet | None = None) -> QuerySet:
    """The drive's public PTS runs (or PTS runs of `runs_of`), by id, with their thermal flag annotated."""
    thermal = ExpressionWrapper(run_flagged_q(kind=FlagKind.THERMAL_THROTTLE), output_field=BooleanField())
    runs = public_pts_runs() if runs_of is None else runs_of.filter(pts_q())
    return runs.filter(drive_model=drive_model).annotate(thermal_flag=thermal).order_by("id")


def inputs_digest(runs: list) -> str:
    """SHA-256 of the runs a fit read, in order: each run as the tuple of its INPUT_FIELDS (a dict of them, as
    analysis.factor_rows.public_runs reads it, or the tuple itself)."""
    hashed = hashlib.sha256(DIGEST_FORMAT)
    hashed.update("\n".join(repr(_as_tuple(run)) for run in runs).encode())
    return hashed.hexdigest()


def _as_tuple(run) -> tuple:
    return run if isinstance(run, tuple) else tuple(run[name] for name in INPUT_FIELDS)


def current_inputs(drive_model: DriveModel, submission=None) -> tuple[list[tuple], list[tuple]]:
    """What a fit of the drive would read now, as tuples: its public runs, and `submission`'s runs of the drive that
    are not public (a held unit is fitted with the public ones)."""
    public = list(fit_runs(drive_model).values_list(*INPUT_FIELDS))
    if submission is None:
        return public, []
    seen = {run[0] for run in public}
    own = fit_runs(drive_model, submission.test_runs.all()).values_list(*INPUT_FIELDS)
    return public, [run for run in own if run[0] not in seen]


def unit_key(unit_id: int | None, run_id: int) -> object:
    """A run's unit in the rows: its physical unit's id, or "run-<id>" (a run whose unit is unknown is its own)."""
    return unit_id if unit_id is not None else f"run-{run_id}"


def unit_number(key: object) -> int:
    """A unit key of the rows as a number: the physical unit's id, or minus the run's id ("run-<id>")."""
    return -int(key.removeprefix("run-")) if isinstance(key, str) else int(key)
