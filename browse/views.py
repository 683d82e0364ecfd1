"""Thin views: validate the request, load the page data (browse.queries), build charts, render."""

from __future__ import annotations

import csv
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import EmptyPage, Paginator
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST, require_safe

from analysis import pcie
from analysis.headline import BY_KEY, HEADLINES, window_label
from analysis.models import DriveModel, FlagKind
from analysis.models.metadata import SPEC_FIELDS
from analysis.selectors import TRIAL_TARGET_KIND, public_test_runs, trial_q
from browse import (
    charts,
    client_wheel,
    compare_pts,
    drive_page,
    effects,
    factors,
    page_cache,
    queries,
    raw_files,
)
from browse import compare as compare_page
from browse import metadata as metadata_services
from browse.charts_compare import compare_charts
from browse.filters import DriveListFilter
from browse.forms import CompareForm, MetadataProposalForm, PageForm, RunChoiceForm
from browse.methodology import methodology_context, methodology_document
from datasets.spreadsheet import spreadsheet_safe
from nvmedb.storage import StorageUnavailable
from reports import registry, units
from reports.chart_kit import Chart
from reports.steady import humanize_variables
from submissions.selectors import submission_for_viewer

PER_PAGE = 25
BUS_BOUND_PCT = round(pcie.BUS_BOUND_UTILIZATION * 100)


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {**queries.home_page(), **client_wheel.install_steps(request)})


def drive_list(request: HttpRequest) -> HttpResponse:
    filterset = DriveListFilter(request.GET, queryset=DriveModel.objects.all())  # the filter keeps public drives only
    page_form = PageForm(request.GET)
    context = {"filter": filterset, "page_form": page_form, "headlines": HEADLINES, "drives": [], "page": None}
    if not (filterset.is_valid() and page_form.is_valid()):
        return render(request, "browse/drive_list.html", context, status=400)
    paginator = Paginator(queries.ordered_ids(filterset.qs), PER_PAGE)
    try:
        page = paginator.page(page_form.cleaned_data["page"] or 1)
    except EmptyPage:
        page_form.add_error("page", f"There are only {paginator.num_pages} page(s).")
        return render(request, "browse/drive_list.html", context, status=400)
    drives = queries.drive_models_in_order(page.object_list)
    queries.headline_cells(drives)
    query = request.GET.copy()
    query.pop("page", None)
    filtered = any(value for name, value in request.GET.items() if name not in ("page", "sort"))
    context.update(drives=drives, page=page, query=query.urlencode(), filtered=filtered)
    return render(request, "browse/drive_list.html", context)


def _public_drive(slug: str):
    try:
        return queries.drive_by_slug(slug)
    except queries.DriveNotPublic as exc:
        raise Http404(str(exc)) from None


def _drive_and_data(request: HttpRequest, slug: str) -> tuple[queries.DriveData | None, str]:
    drive = _public_drive(slug)
    form = RunChoiceForm(request.GET)
    if not form.is_valid():
        return None, "The submission parameter must be a submission id (a UUID)."
    try:
        return queries.drive_data(drive=drive, submission_id=form.cleaned_data["submission"]), ""
    except (queries.SubmissionNotOfDrive, queries.DriveNotPublic) as exc:
        raise Http404(str(exc)) from None


def _render_drive(
    request: HttpRequest, data: queries.DriveData, *, proposal_form=None, status: int = 200, steady=None
) -> HttpResponse:
    overall = data.overall
    if steady is None:
        steady = drive_page.steady_detail(data, None)
    spec_rows = _spec_rows(data)
    for row in data.flag_counts:
        row["label"] = FlagKind(row["kind"]).label if row["kind"] in FlagKind.values else row["kind"]
        row["help"] = FLAG_HELP.get(row["kind"], "")
    context = {
        "drive": data.drive,
        "data": data,
        "headlines": [
            (h, _with_window(units.headline_cell(h, overall.get(h.key)), h, data), spec_rows.get(h.key))
            for h in HEADLINES
        ],
        "window_notes": _window_notes(data),
        "unconfirmed": any(a.unconfirmed for a in overall.values()),
        "level_table": drive_page.level_table(data),
        "sections": drive_page.sections_html(
            data,
            csv_link=lambda key: _chart_csv_link(data, key),
            cacheable=set(request.GET) <= {"variable"},
        ),
        "steady": steady,
        "surface_url": reverse("drive-surface", args=[data.drive.slug])
        + (f"?submission={data.chosen_submission}" if data.chosen_submission else ""),
        **drive_page.own_sections(data, csv_link=lambda key: _chart_csv_link(data, key)),
        "spread": _spread_context(data),
        "spec_rows": spec_rows,
        "flags": _grouped_flags(data.flags),
        "selected": [(test, run) for test, run in data.selected.items()],
        "proposal_form": proposal_form or (MetadataProposalForm() if request.user.is_authenticated else None),
        "query": request.GET.urlencode(),
        "capacity": units.with_binary(data.drive.capacity_bytes, "bytes"),
        "n_runs": data.summary.n_runs,
        "n_submissions": data.summary.n_submissions,
        "n_units": data.summary.n_units,
        "n_surface_runs": data.summary.n_surface_runs,
        "n_compliant_runs": data.summary.n_compliant_runs,
        "all_compliant": data.summary.all_compliant,
        "steady_open": bool(request.GET.get("variable")),
    }
    context["open_section"] = _first_section(context)
    return render(request, "browse/drive_detail.html", context, status=status)


def _first_section(context: dict) -> str:
    """The key of the test section the page opens (the first it shows): every other one is collapsed."""
    if context["sections"]:
        return context["sections"][0]["key"]
    return context["test_sections"][0].anchor if context["test_sections"] else ""


def _grouped_flags(flags) -> list[dict]:
    """The flags on the charted runs, one entry per kind (in the order first seen) with each reason once and how
    many flags gave it: a run with nine steady-state notes reads as one line, its reasons one click away."""
    grouped: dict[str, dict] = {}
    for flag in flags:
        entry = grouped.setdefault(flag.kind, {"kind": flag.kind, "label": flag.get_kind_display(), "reasons": {}})
        reason = humanize_variables(flag.reason)
        entry["reasons"][reason] = entry["reasons"].get(reason, 0) + 1
    for entry in grouped.values():
        entry["n"] = sum(entry["reasons"].values())
        entry["reasons"] = list(entry["reasons"].items())
    return list(grouped.values())


def _spec_rows(data: queries.DriveData) -> dict[str, tuple[str, str]]:
    """Headline key -> (the vendor's figure, the measured median's share of it) for each figure on record."""
    rows = {}
    for name, metric in SPEC_FIELDS.items():
        spec = getattr(data.drive, name)
        if spec is None:
            continue
        headline, aggregate = BY_KEY[metric], data.overall.get(metric)
        measured = aggregate.median if aggregate else None
        rows[metric] = (units.by_unit(headline.unit, spec), units.percent(measured / spec) if measured else "")
    return rows


def _spread_context(data: queries.DriveData) -> dict:
    """What explains the spread (the factor model's stored effects) and the over-provisioning figures."""
    found = drive_page.spread_explained(data)
    op = found["op"]
    return {
        "effects": effects.spread_of(data.drive.pk),
        "n_runs": data.summary.n_runs,
        "op_figures": [(units.percent(hidden), units.percent(spare), n) for hidden, spare, n in op.figures],
        "op_below_capacity": op.below_capacity,
        "op_unknown_units": op.unknown_units,
        "op_breakdown": found.get("op_breakdown", []),
        "full_namespace_pct": units.significant(factors.FULL_NAMESPACE_TOLERANCE * 100),
    }


def _with_window(cell: dict | None, headline, data: queries.DriveData) -> dict | None:
    """Label a headline with what its runs' values are: steady-state window means only if every run was steady."""
    if cell is not None:
        cell["window"] = window_label(*data.summary.steady_runs.get(headline.test, (0, 0)))
    return cell


def _window_notes(data: queries.DriveData) -> list[str]:
    """What the headline values of each test are, the tests that share a label named together ("IOPS, TP: …")."""
    tests_by_label: dict[str, list[str]] = {}
    for test in dict.fromkeys(h.test for h in HEADLINES if h.test in data.summary.steady_runs):
        tests_by_label.setdefault(window_label(*data.summary.steady_runs[test]), []).append(test.upper())
    return [f"{', '.join(tests)}: {label}." for label, tests in tests_by_label.items()]


def drive_detail(request: HttpRequest, slug: str) -> HttpResponse:
    key = drive_page.shared_page_key(request, slug)
    if key is None:
        return _drive_detail(request, slug)
    response = page_cache.render_once(key, lambda: _drive_detail(request, slug))
    return _shared(response) if response.status_code == 200 else response


def _shared(response: HttpResponse) -> HttpResponse:
    patch_vary_headers(response, ("Cookie",))  # the same URL shows a signed-in reader their own page
    return response


def _drive_detail(request: HttpRequest, slug: str) -> HttpResponse:
    data, error = _drive_and_data(request, slug)
    if data is None:
        return HttpResponse(error, status=400, content_type="text/plain; charset=utf-8")
    try:
        steady = drive_page.steady_detail(data, request.GET.get("variable") or None)
    except drive_page.UnknownVariable as exc:
        return HttpResponse(f"{exc} Pick one from the list on the page.", status=400,
                            content_type="text/plain; charset=utf-8")  # fmt: skip
    return _render_drive(request, data, steady=steady)


def _chart_csv_link(data: queries.DriveData, key: str) -> str:
    """A drive chart's CSV: the submission picked (if any) is all that changes its numbers."""
    url = reverse("drive-chart-csv", args=(data.drive.slug, key))
    return url + (f"?submission={data.chosen_submission}" if data.chosen_submission else "")


def _csv_link(request: HttpRequest, url_name: str, *args) -> str:
    query = request.GET.urlencode()
    return reverse(url_name, args=args) + (f"?{query}" if query else "")


def _with_csv_links(found: list[Chart], request: HttpRequest, url_name: str, *args) -> list[Chart]:
    for chart in found:
        chart.csv_url = _csv_link(request, url_name, *args, chart.key)
    return found


def _csv_response(chart: Chart, filename: str) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow(chart.columns)
    for row in chart.rows:
        writer.writerow(["" if cell is None else spreadsheet_safe(cell) for cell in row])
    return response


def drive_chart_csv(request: HttpRequest, slug: str, chart: str) -> HttpResponse:
    data, error = _drive_and_data(request, slug)
    if data is None:
        return HttpResponse(error, status=400, content_type="text/plain; charset=utf-8")
    report = registry.REPORTS.get(chart)
    if report is not None and report.csv_by_test:
        section = report.own_section.load(data.drive, data.chosen_submission)
        found = next((c for c in section.charts if c.key == chart), None) if section else None
    else:
        found = next((c for c in charts.drive_charts(data) if c.key == chart), None)
    if found is None:
        raise Http404("This drive page has no chart by that name.")
    return _csv_response(found, f"{data.drive.slug}-{found.key}.csv")


@require_safe
def drive_surface(request: HttpRequest, slug: str) -> HttpResponse:
    """The drive's surface page (nvmedb extension): its newest public surface run, or that of ?submission=."""
    drive = _public_drive(slug)
    form = RunChoiceForm(request.GET)
    if not form.is_valid():
        return HttpResponse("The submission parameter must be a submission id (a UUID).", status=400,
                            content_type="text/plain")  # fmt: skip
    surface = registry.report("surface").own_page(drive, form.cleaned_data["submission"])
    if surface is None:
        raise Http404("This drive has no public surface run.")
    return render(request, "browse/surface.html", {
        "surface": surface, "target_name": drive.name, "drive_url": reverse("drive-detail", args=[drive.slug]),
    })  # fmt: skip


@require_safe
def submission_surface(request: HttpRequest, submission_id: uuid.UUID) -> HttpResponse:
    """A submission's surface run: anyone's when it is public, and a trial's (a file target, the quick profile) for
    its owner alone (analysis.selectors.own_trials_q); 404 for everyone else."""
    viewer = request.user.pk if request.user.is_authenticated else None
    runs = public_test_runs(trials_of=viewer)
    surface = registry.report("surface").own_page(submission_id=submission_id, runs=runs)
    if surface is None:
        raise Http404("No surface run of this submission is visible to you.")
    run = surface["run"]
    trial = runs.filter(pk=run["id"]).filter(trial_q()).exists()
    file_target = run["target_kind"] == TRIAL_TARGET_KIND
    return render(request, "browse/surface.html", {
        "surface": surface, "owner_view": trial,
        "target_name": "a file on the host's file system" if file_target else run["drive_model__name"],
        "drive_url": "" if trial else reverse("drive-detail", args=[run["drive_model__slug"]]),
    })  # fmt: skip


@login_required
@require_POST
def propose_metadata(request: HttpRequest, slug: str) -> HttpResponse:
    drive = _public_drive(slug)
    try:
        data = queries.drive_data(drive=drive)
    except queries.DriveNotPublic as exc:
        raise Http404(str(exc)) from None
    form = MetadataProposalForm(request.POST)
    if not form.is_valid():
        return _render_drive(request, data, proposal_form=form, status=400)
    values = {name: form.cleaned_data.get(name, "") for name in ("controller", "nand_type", "dram", "form_factor")}
    values.update(form.spec_values())
    metadata_services.proposal_create(
        drive_model=drive,
        proposer=request.user,
        values=values,
        source_url=form.cleaned_data["source_url"],
        note=form.cleaned_data.get("note", ""),
    )
    messages.success(request, "Thank you: your proposal will appear on this page once a staff member approves it.")
    return redirect("drive-detail", slug=drive.slug)


def _compare_data(request: HttpRequest) -> tuple[compare_page.CompareData | None, CompareForm]:
    # ?drives=a,b,c from a link, or ?drives=a&drives=b from the drive list's checkboxes
    form = CompareForm({"drives": ",".join(request.GET.getlist("drives")), "q": request.GET.get("q", "")})
    if not form.is_valid() or form.too_few:
        return None, form
    slugs = form.cleaned_data["drives"]
    found = {d.slug: d for d in queries.public_drive_models().filter(slug__in=slugs)}
    unknown = [s for s in slugs if s not in found]
    if unknown:
        form.add_error("drives", f"No public drive with the slug {unknown[0]!r}.")
        return None, form
    return compare_page.compare_data(drives=[found[s] for s in slugs]), form


def compare(request: HttpRequest) -> HttpResponse:
    data, form = _compare_data(request)
    if data is None:
        # too few drives is a question, not an error: 200 with the picker; a bad slug or too many is a 400
        context = {"form": form, "data": None, **queries.compare_picker(form)}
        return render(request, "browse/compare.html", context, status=200 if form.is_valid() else 400)
    headline_rows = [
        (h, [units.headline_cell(h, data.overall.get(d.pk, {}).get(h.key)) for d in data.drives]) for h in HEADLINES
    ]
    pts_sections = compare_pts.sections(data.drives)
    _with_csv_links([*pts_sections["pts"], *pts_sections["surface"]], request, "compare-chart-csv")
    context = {
        "form": form,
        "data": data,
        "headline_rows": headline_rows,
        "charts": _with_csv_links(compare_charts(data), request, "compare-chart-csv"),
        "pts_sections": pts_sections,
        "query": request.GET.urlencode(),
    }
    return render(request, "browse/compare.html", context)


def compare_chart_csv(request: HttpRequest, chart: str) -> HttpResponse:
    data, form = _compare_data(request)
    if data is None:
        return HttpResponse(
            "; ".join(e for errors in form.errors.values() for e in errors) or "Pick two to four drives: ?drives=a,b",
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    found = next((c for c in compare_charts(data) if c.key == chart), None) or compare_pts.chart(data.drives, chart)
    if found is None:
        raise Http404("The compare page has no chart by that name.")
    return _csv_response(found, f"compare-{found.key}.csv")


def methodology(request: HttpRequest) -> HttpResponse:
    # the document's HTML escapes any raw HTML it holds, so its parts are safe to insert
    document = methodology_document()
    numbers = methodology_context()
    context = {
        "intro": mark_safe(document.intro),  # noqa: S308
        "sections": [
            {**vars(section), "heading": mark_safe(section.heading), "body": mark_safe(section.body)}  # noqa: S308
            for section in document.sections
        ],
        "tests": document.tests,
        "plausibility_rules": numbers["plausibility_rules"],
        "consistency_rules": numbers["consistency_rules"],
        "link_margin_pct": numbers["link_margin_pct"],
    }
    return render(request, "browse/methodology.html", context)


def raw_file(request: HttpRequest, submission_id: uuid.UUID, path: str) -> HttpResponse:
    """A raw file re-emitted by its kind's allow-list and scrubbed (a file of no known kind: a 404 that says so):
    shown as text up to the render limit; above it a page offers it as a download
    (?download=1), streamed; above the download limit, a 404 that says so."""
    found = submission_for_viewer(submission_id=submission_id, viewer=request.user)
    if found is None or found[0].status != "published" or found[0].hidden:
        raise Http404("No public submission with this id.")
    storage_name, download = found[0].storage_name, request.GET.get("download") == "1"
    try:
        listed = raw_files.listed_file(storage_name=storage_name, path=path)  # the manifest only: cheap
        if not listed.served:  # of no known kind: never shown, whatever its size
            message = raw_files.not_served_message(path)
            return HttpResponse(message, status=404, content_type="text/plain; charset=utf-8")
        if listed.size > raw_files.download_max_bytes():
            message = f"{path} ({listed.size} bytes) is larger than the site serves.\n"
            return HttpResponse(message, status=404, content_type="text/plain; charset=utf-8")
        if not download and listed.size > raw_files.render_max_bytes():
            context = {"submission": found[0], "path": path, "size": listed.size, "limit": raw_files.render_max_bytes()}
            return render(request, "browse/raw_file_large.html", context)
        scrubbed = raw_files.open_scrubbed(storage_name=storage_name, path=path)
    except StorageUnavailable:
        raise  # a 503 with Retry-After (nvmedb.faults), not a missing file
    except (raw_files.RawFileNotFound, FileNotFoundError, OSError) as exc:
        raise Http404(str(exc)) from None
    if download:
        response = StreamingHttpResponse(
            (chunk.encode() for chunk in scrubbed.chunks()), content_type="text/plain; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="{path.rsplit("/", 1)[-1]}"'
        return response
    response = HttpResponse(raw_files.inline_text(scrubbed), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = "inline"
    return response


@require_safe
def client_index(request: HttpRequest) -> HttpResponse:
    """The client wheel this site serves (a page pip also reads with --find-links)."""
    found = client_wheel.wheels()
    if not found:
        return HttpResponse(client_wheel.NOT_BUILT, status=404, content_type="text/plain; charset=utf-8")
    return render(request, "browse/client_index.html", {"wheels": found, **client_wheel.install_steps(request)})


@require_safe
def client_wheel_file(request: HttpRequest, filename: str) -> HttpResponse:
    wheel = client_wheel.find(filename)
    try:
        handle = wheel.path.open("rb") if wheel else None
    except FileNotFoundError:  # replaced by a rebuild since the directory was read
        handle = None
    if handle is None:
        message = client_wheel.not_found_message(client_wheel.wheels())
        return HttpResponse(message, status=404, content_type="text/plain; charset=utf-8")
    return FileResponse(handle, as_attachment=True, filename=wheel.name, content_type=client_wheel.CONTENT_TYPE)


FLAG_HELP = {
    FlagKind.BUS_BOUND: f"The PCIe link, not the drive, set this number: it moved ≥ {BUS_BOUND_PCT}% of what the link can carry.",
    FlagKind.LINK_BELOW_CAPABILITY: "The link trained slower or narrower than both ends can do; results may be capped.",
    FlagKind.THERMAL_THROTTLE: "The drive reached its thermal limit during the test and likely slowed itself down.",
    FlagKind.UNWRITTEN_DATA: "Reads hit blocks never written since the purge; drives answer those unrealistically fast.",
    FlagKind.NON_COMPLIANT: "The run departs from the PTS procedure (reasons listed); compare it with care.",
    FlagKind.IMPORTED: "Imported from another tool's published results, not run by the nvmedb client.",
    FlagKind.HELD_FOR_REVIEW: "Something unusual was found; a person checks it before it counts.",
    FlagKind.STEADY_STATE_NOT_REACHED: "No window of 5 rounds met the steady-state rule; the last rounds are shown.",
    FlagKind.STEADY_STATE_CLAIM_DIFFERS: "The client's steady-state verdict differs from the one re-derived here.",
    FlagKind.CROSSCHECK: "Numbers in the raw files disagree with each other beyond tolerance.",
    FlagKind.OUTLIER: "Far from the other contributors' units of the same model (robust z-score beyond ±3.5); "
    "a label for readers, not a hold.",
    FlagKind.SURFACE_CLAIM_DIFFERS: "The client's surface figures differ from those re-derived here; these are shown.",
}
