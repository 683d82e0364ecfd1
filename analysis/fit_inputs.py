"""What a factor fit of a drive model reads: its public PTS runs with their unit, contributor, headline and recorded
conditions (analysis.factor_rows builds the model's rows from them), and the digest of those inputs.

The refit stores the digest with the figures it fitted (analysis.factor_figures); a submission's page reads the same
columns again and compares (analysis.explain_model.metric_models). Equal inputs give equal rows, so equal digests
mean the stored figures are those a fit would give now; a page so tells current figures from figures of older data
with one query, without building the rows.
"""

from __future__ import annotations

import hashlib
import math
from operator import itemgetter

import orjson
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
# the inputs that are floats (the headline's values too): what orjson would write as null were one NaN or infinite
FLOAT_FIELDS = (
    "overprovisioning",
    "max_temperature_k",
    "pcie_link__usable_bandwidth_bytes_per_s",
    "pcie_link__speed_gts",
)
DIGEST_FORMAT = b"nvmedb fit inputs 2\n"  # what is hashed, so a digest of another format never compares equal
REPR_FORMAT = b"nvmedb fit inputs 1\n"  # the runs' Python repr: where orjson's text would not tell them apart

_as_tuple = itemgetter(*INPUT_FIELDS)
_FLOAT_POSITIONS = tuple(POSITION[name] for name in FLOAT_FIELDS)
_HEADLINE = POSITION["headline"]


def fit_runs(drive_model: DriveModel, runs_of: QuerySet | None = None) -> QuerySet:
    """The drive's public PTS runs (or PTS runs of `runs_of`), by id, with their thermal flag annotated."""
    thermal = ExpressionWrapper(run_flagged_q(kind=FlagKind.THERMAL_THROTTLE), output_field=BooleanField())
    runs = public_pts_runs() if runs_of is None else runs_of.filter(pts_q())
    return runs.filter(drive_model=drive_model).annotate(thermal_flag=thermal).order_by("id")


def inputs_digest(runs: list) -> str:
    """SHA-256 of the runs a fit read, in order: each run as the tuple of its INPUT_FIELDS (a dict of them, as
    analysis.factor_rows.public_runs reads it, or the tuple itself), the list written by orjson (a tenth of the
    time of the runs' repr). Where that text could hide a difference (a NaN or an infinity, which it writes as
    null; a value it cannot write) the runs' repr is hashed instead, under its own format."""
    tuples = [run if type(run) is tuple else _as_tuple(run) for run in runs]
    if _all_finite(tuples):
        try:
            return hashlib.sha256(DIGEST_FORMAT + orjson.dumps(tuples)).hexdigest()
        except (TypeError, orjson.JSONEncodeError):  # an integer beyond 64 bits, a type orjson does not write
            pass
    hashed = hashlib.sha256(REPR_FORMAT)
    hashed.update("\n".join(repr(run) for run in tuples).encode())
    return hashed.hexdigest()


def _all_finite(tuples: list[tuple]) -> bool:
    """Whether every float input of the runs is finite: their sum is (a sum that overflows only sends the runs to
    the repr)."""
    total = 0.0
    try:
        for run in tuples:
            if headline := run[_HEADLINE]:
                total += sum(filter(None, headline.values()))  # a metric not measured is None (and 0 is finite)
            for position in _FLOAT_POSITIONS:
                if (value := run[position]) is not None:
                    total += value
    except TypeError:  # a value that is no number: the repr tells it apart
        return False
    return math.isfinite(total)


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
