"""The run_results table: one row per public PTS run with each headline metric, the rule that produced it, and every
condition the factor model (analysis.factor_model) fits as its own typed column, so a modeller can refit the
`factor_effects` figures from one file. Registered in datasets.tables.TABLES.

The factor columns are read as analysis.factor_rows reads them for the model: the same fields, the same thermal
verdict (a thermal-throttle flag on the run or its whole submission; not throttled when the run records its highest
temperature), the same spare ÷ user capacity, and link-limited per metric against the throughput other units of the
drive model reached. Everything is a database expression, so the export streams like the other tables.
"""

from __future__ import annotations

from django.db.models import (
    BooleanField,
    Case,
    DateTimeField,
    Exists,
    ExpressionWrapper,
    F,
    FloatField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce

from analysis.headline import HEADLINES, LAST_ROUNDS_MEAN, STEADY_WINDOW_MEAN, Headline
from analysis.models import FactorUnitFigures, FlagKind
from analysis.selectors import public_pts_runs, run_flagged_q
from reports.table_types import Column

# analysis.factor_rows.LATENCY_THROUGHPUT_METRIC (not imported: factor_rows loads the model, and numpy with it)
LATENCY_THROUGHPUT_METRIC = "lat_4k_mean"


def _c(name, type_, description, source=None, unit=""):
    return Column(name=name, type=type_, description=description, source=source or name, unit=unit)


def _value(key: str, prefix: str = ""):
    return Cast(KT(f"{prefix}headline__{key}"), FloatField())


def _rule(headline: Headline):
    """The rule of analysis.headline.window_mean, as the drive pages word it for one run."""
    return Case(
        When(~Q(headline__has_key=headline.key), then=Value(None)),
        When(steady=True, then=Value(STEADY_WINDOW_MEAN)),
        default=Value(LAST_ROUNDS_MEAN),
    )


def _throughput(headline: Headline):
    """analysis.factor_rows.throughput in SQL: the bytes/s on the busier direction a run's value implies."""
    if headline.unit == "bytes/s":
        return _value(headline.key)
    if headline.unit == "IOPS":
        busier = max(headline.read_pct, 100 - headline.read_pct) / 100
        return ExpressionWrapper(
            _value(headline.key) * Value(headline.block_size_bytes * busier), output_field=FloatField()
        )
    return ExpressionWrapper(
        Value(headline.block_size_bytes * 1e9) / _value(LATENCY_THROUGHPUT_METRIC), output_field=FloatField()
    )


def _link_limited(headline: Headline):
    """True when the run's usable link bandwidth is below the throughput a run of another unit of the drive model
    reached on this metric; None without a usable bandwidth, a value, or another unit to compare with."""
    unit_key = Coalesce(F("unit_id"), -F("pk"))  # a run without a unit is a unit of its own
    others = (
        public_pts_runs()
        .filter(drive_model_id=OuterRef("drive_model_id"), headline__has_key=headline.key)
        .alias(unit_key=unit_key, reached=_throughput(headline))
        .exclude(unit_key=Coalesce(OuterRef("unit_id"), -OuterRef("pk")))
        .filter(reached__isnull=False)
    )
    return Case(
        When(Q(pcie_link__usable_bandwidth_bytes_per_s__isnull=True) | ~Q(headline__has_key=headline.key), then=None),
        When(~Exists(others), then=None),
        When(Exists(others.filter(reached__gt=OuterRef("pcie_link__usable_bandwidth_bytes_per_s"))), then=True),
        default=Value(False),
        output_field=BooleanField(),
    )


def _run_flags(**kinds) -> ExpressionWrapper:
    """A flag on the run (or on one of its measurements) or on its whole submission (analysis.selectors)."""
    return ExpressionWrapper(run_flagged_q(**kinds), output_field=BooleanField())


def _throttled():
    return Case(
        When(_run_flags(kind=FlagKind.THERMAL_THROTTLE), then=Value(True)),
        When(max_temperature_k__isnull=False, then=Value(False)),
        default=None,
        output_field=BooleanField(),
    )


def _spare_fraction():
    """analysis.overprovisioning.spare_vs_user: p / (1 − p) for a hidden share p in [0, 1), else missing."""
    return Case(
        When(
            overprovisioning__gte=0,
            overprovisioning__lt=1,
            then=ExpressionWrapper(F("overprovisioning") / (1.0 - F("overprovisioning")), output_field=FloatField()),
        ),
        default=None,
        output_field=FloatField(),
    )


def _normalized(headline: Headline, field: str, output_field=None):
    """The unit's figure of the drive's public fit (analysis.factor_figures), on the runs that measure the metric."""
    figures = FactorUnitFigures.objects.filter(
        drive_model_id=OuterRef("drive_model_id"),
        metric=headline.key,
        fit__isnull=False,
        unit_key=Coalesce(OuterRef("unit_id"), -OuterRef("pk")),  # analysis.factor_rows.unit_number
    )
    output_field = output_field or FloatField()
    return Case(
        When(Q(headline__has_key=headline.key), then=Subquery(figures.values(field)[:1], output_field=output_field)),
        default=None,
        output_field=output_field,
    )


def _normalized_columns(h: Headline) -> list:
    return [
        _c(f"{h.key}_normalized", "number", f"What the unit would do on {h.key} at the factor model's reference "
           "conditions (capable link, modal firmware, host CPU, kernel and scheduler, no throttling, median spare "
           "and wear): its figure (the geometric mean of its runs) ÷ the fitted effects of its recorded conditions. "
           "The same on each run of the unit; empty when the drive's fit has too few units or leaves the unit out "
           "(a factor it uses is not recorded for the unit).", _normalized(h, "normalized"), h.unit),
        _c(f"{h.key}_normalized_low", "number", f"Low end of {h.key}_normalized's 95 % interval (t, the fit's "
           "residual degrees of freedom; the uncertainty of the effects removed).", _normalized(h, "normalized_low"),
           h.unit),
        _c(f"{h.key}_normalized_high", "number", f"High end of {h.key}_normalized's 95 % interval.",
           _normalized(h, "normalized_high"), h.unit),
        _c(f"{h.key}_fitted_at", "datetime", f"When the fit that gave {h.key}_normalized ran (UTC): the "
           "factor_effects rows of the same drive and metric with this fitted_at are its effects. A drive's data "
           "changed since is refitted in the background, so a figure can be that much older.",
           _normalized(h, "fitted_at", DateTimeField())),
    ]  # fmt: skip


def _metric_columns() -> list:
    columns = []
    for h in HEADLINES:
        direction = "higher is better" if h.higher_is_better else "lower is better"
        columns += [
            _c(h.key, "number", f"{h.label} ({h.test} test), {direction}; the key the factor_effects table's metric "
               "column names. Empty when the run does not measure it.", _value(h.key), h.unit),
            _c(f"{h.key}_rule", "string", f"How {h.key} was read from the rounds: '{STEADY_WINDOW_MEAN}' (the PTS "
               f"measurement window), or '{LAST_ROUNDS_MEAN}' when the run did not reach steady state.", _rule(h)),
            _c(f"{h.key}_link_limited", "boolean", f"The run's usable link bandwidth is below the throughput a run "
               f"of another unit of the drive model reached on {h.key} (IOPS × block size × the busier direction's "
               "share; latency: 4 KiB ÷ mean latency). The factor model compares with each other unit's median "
               "run, the same when units have one run of the test. Empty without a usable bandwidth or another "
               "unit to compare with.", _link_limited(h)),
            *_normalized_columns(h),
        ]  # fmt: skip
    return columns


def run_result_columns() -> tuple:
    flag_columns = tuple(
        _c(f"flag_{kind.value}", "boolean", f"A '{kind.value}' flag ({kind.label}) on the run, one of its "
           "measurements or its whole submission.", _run_flags(kind=kind.value))
        for kind in FlagKind
    )  # fmt: skip
    return (
        _c("run_id", "integer", "The run (see the runs table).", "pk"),
        _c("submission_id", "string", "The submission (bundle) the run came from (UUID)."),
        _c("drive_slug", "string", "The drive model's stable identifier (used in URLs).", "drive_model__slug"),
        _c("drive_name", "string", "Canonical model name.", "drive_model__name"),
        _c("vendor", "string", "Vendor name.", "drive_model__vendor__name"),
        _c("unit_serial_hash", "string", "Keyed hash of the unit's serial number: the factor model's unit (its "
           "runs are averaged first). Empty when unknown: the run is then a unit of its own.", "unit__serial_hash"),
        _c("test", "string", "PTS test (see the runs table)."),
        _c("edition", "string", "PTS edition: enterprise or client."),
        _c("profile", "string", "pts, quick or imported."),
        _c("compliant", "boolean", "The run followed the PTS exactly."),
        *_metric_columns(),
        _c("capable_gts", "number", "Link speed per lane both ends can do (LnkCap).", "pcie_link__capable_speed_gts",
           "GT/s"),
        _c("capable_width", "integer", "Link width the drive can do (LnkCap).", "pcie_link__capable_width"),
        _c("negotiated_gts", "number", "Negotiated link speed per lane (LnkSta).", "pcie_link__speed_gts", "GT/s"),
        _c("negotiated_width", "integer", "Negotiated link width (LnkSta).", "pcie_link__width"),
        _c("usable_link_bytes_per_s", "number", "Link bandwidth left after line encoding and TLP overhead on the "
           "narrowest link of the path.", "pcie_link__usable_bandwidth_bytes_per_s", "bytes/s"),
        _c("link_below_capability", "boolean", "The link trained slower or narrower than both ends can do (empty "
           "when lspci did not report both ends).", "pcie_link__below_capability"),
        _c("throttled", "boolean", "The factor model's thermal throttling: a thermal_throttle flag on the run or its "
           "submission; false when the run records its highest temperature and has none; empty otherwise.",
           _throttled()),
        _c("spare_fraction", "number", "Spare ÷ user capacity (0.28 = 28 % spare), from the share of raw capacity "
           "the namespace does not expose.", _spare_fraction()),
        _c("max_temperature_k", "number", "Highest composite temperature in the run's smart-logs.", unit="K"),
        _c("warning_temperature_k", "number", "The drive's warning temperature threshold (id-ctrl wctemp).",
           unit="K"),
        _c("critical_temperature_k", "number", "The drive's critical temperature threshold (id-ctrl cctemp).",
           unit="K"),
        _c("percentage_used", "integer", "Drive wear before the test (smart-log percentage used).", unit="%"),
        _c("firmware", "string", "Firmware revision during the run.", "firmware__revision"),
        _c("host_cpu", "string", "Host CPU model.", "host__cpu_model"),
        _c("kernel", "string", "Host kernel release.", "host__kernel"),
        _c("scheduler", "string", "The block device's I/O scheduler during the run."),
        _c("flag_kinds", "string", "Kinds of flags on the whole run or its submission, ';'-separated and sorted "
           "(as the runs table's flag_kinds).", "flag_kinds__kinds"),
        *flag_columns,
    )  # fmt: skip


def run_results(*, trials_of: int | None = None) -> QuerySet:
    return public_pts_runs(trials_of=trials_of)


def table(table_class):
    return table_class(
        "run_results",
        "Run results",
        "One row per public run of a PTS test, for modelling: each headline metric with the rule that produced it, "
        "and every condition the factor model fits (link, throttling, spare area, wear, firmware, host CPU, kernel, "
        "scheduler) as its own typed column, with one boolean column per flag kind, and per metric the unit's "
        "normalized figure from the factor model with its 95 % interval and the fit's time. Throttle time is not "
        "recorded per run (only whether it throttled), so there is no throttle-seconds column; contributors are not "
        "published per run (exports carry no account id): the factor_effects table counts them.",
        run_result_columns(),
        run_results,
        run_prefix="",
    )
