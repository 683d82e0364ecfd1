"""The drive page below its first screen: one section per test with its summary charts and how to read them, and the
per-variable steady-state detail behind one selector (one chart, never one per variable).

Section HTML derives only from the drive's data: the default page's is written with the drive's summary
(browse.summaries), other selections' is cached per data version. The default page as a reader without a
session sees it is cached whole, keyed by its summary's version and the drive's own columns.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass

from django.conf import settings
from django.core.cache import cache
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from analysis.headline import BY_KEY, HEADLINES
from analysis.models import DriveModel, FactorFitSummary
from browse import factors, page_cache, queries
from browse.charts import drive_charts
from browse.queries import STATISTICS_SECONDS, DriveData
from reports import registry, units
from reports.chart_kit import Chart
from reports.steady import convergence_windows, variable_label, window_chart


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    how_to_read: str
    short: str = ""  # its name in the page's list of sections


SECTIONS: tuple[Section, ...] = (
    *(Section(test, s.title, s.how_to_read, s.short) for test, s in registry.core_sections().items()),
    Section("conditions", "Test conditions: temperature",
            "A line that reaches the warning threshold means the drive may have slowed itself down.", "Temperature"),
    Section("spread", "Every unit of this drive, by firmware and PCIe generation",
            "Each point is one unit (the median of its runs); points far apart at one level are unit-to-unit spread.",
            "Units by firmware and PCIe"),
)  # fmt: skip
# chart key -> the core test whose section shows it (each test's steady-state charts are keyed steady-<test>)
SECTION_OF_CHART = {key: test for test, s in registry.core_sections().items() for key in s.chart_keys}


def section_of(chart: Chart) -> str:
    key = chart.key
    if key.startswith("window-"):
        return "window"
    if key.startswith("by-"):
        return "spread"
    if key == "temperature":
        return "conditions"
    if key.startswith("steady-"):
        return key.removeprefix("steady-")
    return SECTION_OF_CHART.get(key, "")


def sections_html(data: DriveData, *, csv_link, cacheable: bool) -> list[dict]:
    """[{key, title, how_to_read, html}] for the sections that have charts, built from escaped parts: the default
    page's were built with the drive's data (browse.summaries), other selections per version."""
    if cacheable and data.is_default_selection and data.stored is not None:
        return [{**s, "html": mark_safe(s["html"])} for s in data.stored["sections"]]  # noqa: S308 -- built below
    key = f"browse:drive-sections:v3:{data.drive.pk}:{data.drive.slug}:{data.version}"  # its links name the slug
    cacheable = cacheable and data.version is not None and data.is_default_selection
    if cacheable and (found := cache.get(key)) is not None:
        return [{**s, "html": mark_safe(s["html"])} for s in found]  # noqa: S308 -- built below with format_html
    found = build_sections(data, csv_link=csv_link)
    if cacheable:
        cache.set(key, found, STATISTICS_SECONDS)
    return [{**s, "html": mark_safe(s["html"])} for s in found]  # noqa: S308


def own_sections(data: DriveData, *, csv_link) -> dict:
    """The sections of the tests that have their own (reports.registry.own_sections), for the drive page's context:
    each one's data under its name (None when the page does not show it: the drive has no public run of its tests
    or nothing to show of them) and, under "test_sections", the OwnSection of each shown, in page order."""
    on_drive = set(data.summary.tests)
    found: dict = {"test_sections": []}
    for tests, report in registry.own_sections():
        section = report.own_section
        loaded = None
        if on_drive & set(tests):
            loaded = section.load(data.drive, data.chosen_submission, csv_link=csv_link)
        shown = loaded is not None and section.shows(loaded)
        found[section.name] = loaded if shown else None
        if shown:
            found["test_sections"].append(section)
    return found


def build_sections(data: DriveData, *, csv_link) -> list[dict]:
    """The sections' HTML as plain strings (JSON- and cache-safe), every value escaped by the charts."""
    built = drive_charts(data)
    for chart in built:
        chart.csv_url = csv_link(chart.key)
    found = [
        {"key": s.key, "title": s.title, "how_to_read": s.how_to_read, "short": s.short,
         "charted": any(not c.sentence for c in charts_of),  # a section of sentences only has nothing to read
         "html": "".join(str(c.html) for c in charts_of)}
        for s in SECTIONS
        if (charts_of := [c for c in built if section_of(c) == s.key])
    ]  # fmt: skip
    return found


def level_table(data: DriveData) -> str:
    """The headline metrics per factor level (firmware, PCIe generation, link width, edition) as an HTML table."""
    if data.stored is not None:
        return mark_safe(data.stored["level_table"])  # noqa: S308 -- built by level_table_html
    return level_table_html(data.aggregates)


def level_table_html(aggregates) -> str:
    """One row per level of each factor with two levels or more, a column per headline metric (median, spread and
    sample, as the drive list shows them); the factors with one level are a sentence, since their figures are the
    headline table's."""
    by_factor: dict[str, dict[str, dict[str, object]]] = {}
    labels: dict[str, str] = {}
    for a in aggregates:
        if a.factor == "all" or a.metric not in BY_KEY:
            continue
        by_factor.setdefault(a.factor, {}).setdefault(a.level, {})[a.metric] = a
        labels[a.factor] = a.get_factor_display()
    if not by_factor:
        return ""
    varying = {factor: levels for factor, levels in by_factor.items() if len(levels) >= 2}
    single = [(labels[factor], next(iter(levels))) for factor, levels in by_factor.items() if len(levels) < 2]
    parts = []
    if varying:
        metrics = [
            h for h in HEADLINES if any(h.key in by_metric for lv in varying.values() for by_metric in lv.values())
        ]
        head = format_html_join("", '<th scope="col" class="num">{}</th>', ((h.label,) for h in metrics))
        body = format_html_join(
            "",
            '<tr><th scope="row">{}</th><td>{}</td>{}</tr>',
            (
                (
                    labels[factor],
                    level,
                    format_html_join(
                        "",
                        '<td class="num metric">{}</td>',
                        (
                            (cell["html"] if (cell := units.headline_cell(h, by_metric.get(h.key))) else "—",)
                            for h in metrics
                        ),
                    ),
                )
                for factor, levels in varying.items()
                for level, by_metric in sorted(levels.items())
            ),
        )
        parts.append(format_html(
            '<table class="levels"><thead><tr><th scope="col">Factor</th><th scope="col">Level</th>{}</tr></thead>'
            "<tbody>{}</tbody></table>", head, body,
        ))  # fmt: skip
    if single:
        named = format_html_join("; ", "{} <strong>{}</strong>", single)
        parts.append(format_html(
            '<p class="note" id="levels-single">{}: {}. One level each, so their figures are the headline table\'s.</p>',
            "The same level on every run" if not varying else "And the same level on every run", named,
        ))  # fmt: skip
    return mark_safe("".join(str(p) for p in parts))  # noqa: S308 -- every part built with format_html


PAGE_FIELDS = tuple(f.attname for f in DriveModel._meta.concrete_fields) + (
    "vendor__name", "page_summary__version", "page_summary__data_version", "page_summary__updated",
)  # fmt: skip


def shared_page_key(request, slug: str) -> str | None:
    """The cache key of a drive's default page as anyone without a session sees it, or None when this request is
    not that page. The same in every web process (browse.page_cache): it names this deployment, the
    version of the drive's stored summary, the drive's data version (raised at every change of its public data),
    whether the page must say its summary lags (queries.freshness), when its factor effects were last fitted and
    every column of the drive and its vendor's name (staff-approved metadata), read in one query; a drive without a
    current summary has no key (its page is computed)."""
    if request.GET or settings.SESSION_COOKIE_NAME in request.COOKIES or "messages" in request.COOKIES:
        return None
    fitted = FactorFitSummary.objects.filter(drive_model=OuterRef("pk")).order_by("-fitted_at").values("fitted_at")
    row = (
        DriveModel.objects.filter(slug=slug, page_summary__slug=slug, page_summary__format=queries.SUMMARY_FORMAT)
        .annotate(fitted=Subquery(fitted[:1]))
        .values(*PAGE_FIELDS, "fitted")
        .first()
    )
    if row is None:
        return None
    lags = (
        row["page_summary__data_version"] < row["data_version"]
        and row["data_changed_at"] is not None
        and (timezone.now() - row["data_changed_at"]).total_seconds() > queries.FRESH_SECONDS
    )
    named = repr(sorted(row.items())) + f"|lags={lags}"
    return f"browse:drive-page:v2:{page_cache.deployment_id()}:{hashlib.sha256(named.encode()).hexdigest()}"


class UnknownVariable(LookupError):
    pass


def variable_choices(data: DriveData) -> list[tuple[str, str, str]]:
    """(test, value, label) of every tracking variable of the charted runs that has a window to draw."""
    test_of = {run["id"]: test for test, run in data.selected.items()}
    return [
        (test_of[w.test_run_id], w.variable, variable_label(w))
        for w in data.windows
        if w.test_run_id in test_of and w.rounds and w.values and w.average is not None
    ]


def steady_detail(data: DriveData, variable: str | None) -> dict:
    """The selector's options (grouped by test) and the one window chart of the chosen variable (by default the
    first headline cell): raises UnknownVariable for a variable the charted runs do not track."""
    choices = variable_choices(data)
    if not choices:
        return {"options": SafeString(""), "chart": SafeString(""), "chosen": None, "n": 0}
    if variable is None:
        chosen_window = next((w for w in factors_first(data) if w.variable in {c[1] for c in choices}), None) or next(
            w for w in data.windows if w.variable == choices[0][1]
        )
    else:
        chosen_window = next((w for w in data.windows if w.variable == variable), None)
        if chosen_window is None or variable not in {c[1] for c in choices}:
            raise UnknownVariable(f"The charted runs track no variable {variable!r}.")
    groups = []
    for test in dict.fromkeys(c[0] for c in choices):
        options = format_html_join(
            "", '<option value="{}"{}>{}</option>',
            ((value, mark_safe(" selected") if value == chosen_window.variable else "", label)
             for t, value, label in choices if t == test),
        )  # fmt: skip
        groups.append(format_html('<optgroup label="{} test">{}</optgroup>', test.upper(), options))
    chart = window_chart(chosen_window)
    return {"options": mark_safe("".join(groups)), "chart": chart.html, "chosen": chosen_window,  # noqa: S308
            "chosen_label": variable_label(chosen_window), "n": len(choices)}  # fmt: skip


def factors_first(data: DriveData) -> list:
    """The windows of the headline cells first, so the default detail is a variable the headlines use."""
    return convergence_windows(list(data.windows))


# --- what explains the spread -------------------------------------------------------------------------------------


def spread_explained(data: DriveData) -> dict:
    """The over-provisioning figures and the headline metrics by over-provisioning: written with the drive's data,
    else from one query over its public runs, cached per data version. (What explains the spread is the factor
    model's stored effects: browse.effects.)"""
    if data.stored is not None:
        return spread_from_json(data.stored["spread"])
    key = f"browse:drive-factors:v3:{data.drive.pk}:{data.version}"
    found = cache.get(key) if data.version is not None else None
    if found is None:
        found = compute_spread(data)
        if data.version is not None:
            cache.set(key, found, STATISTICS_SECONDS)
    return found


def compute_spread(data: DriveData, runs: list[dict] | None = None) -> dict:
    """From the drive's public PTS runs as queries.factor_runs reads them (`runs`, when the caller has them)."""
    runs = queries.factor_runs(data.drive.pk, data.runs_of) if runs is None else runs
    return {"op": factors.overprovisioning_summary(runs), "op_breakdown": factors.op_breakdown(runs)}


def spread_to_json(found: dict) -> dict:
    return {"op": asdict(found["op"]), "op_breakdown": found["op_breakdown"]}


def spread_from_json(stored: dict) -> dict:
    """A stored spread; a summary written before the factor model also holds the old factor table ("rows"), which
    nothing reads any more."""
    op = stored["op"]
    return {
        "op": factors.Overprovisioning(**{**op, "figures": [tuple(f) for f in op["figures"]]}),
        "op_breakdown": [tuple(row) for row in stored["op_breakdown"]],
    }
