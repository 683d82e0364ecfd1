"""Download pages: the tables and their columns, live filtered exports, and the numbered releases."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from analysis.tasks import build_release
from datasets import exports, filters, releases, writers
from datasets.tables import TABLES

ATTACHMENT_FORMATS = {"csv", "parquet"}


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    latest = next(iter(releases.list_releases()), None)
    return render(
        request,
        "datasets/index.html",
        {
            "tables": TABLES.values(),
            "formats": writers.FORMATS,
            "latest": latest,
            "latest_citation": _citation(request, latest) if latest else "",
        },
    )


@require_GET
def export(request: HttpRequest, table: str, fmt: str) -> HttpResponse:
    """One table in one format, filtered by the query string, streamed row batch by row batch."""
    if table not in TABLES or fmt not in writers.FORMATS:
        raise Http404("No such table or format.")
    spec = TABLES[table]
    try:
        cleaned = filters.parse(spec, request.GET, control=frozenset({"_size", "include"}))
    except filters.FilterError as exc:
        return HttpResponseBadRequest(f"{exc}\n", content_type="text/plain; charset=utf-8")
    if cleaned.include_trial:
        if not request.user.is_authenticated:
            message = "include=trial adds your own trial runs (file target or quick profile): sign in first.\n"
            return HttpResponse(message, status=403, content_type="text/plain; charset=utf-8")
        cleaned.trials_of = request.user.pk
    response = StreamingHttpResponse(exports.export_stream(spec, cleaned, fmt), content_type=writers.FORMATS[fmt])
    if fmt in ATTACHMENT_FORMATS:
        response["Content-Disposition"] = f'attachment; filename="{spec.name}.{fmt}"'
    response["X-Accel-Buffering"] = "no"  # let a proxy pass bytes on as they come
    if cleaned.include_trial:
        response["Cache-Control"] = "private, no-store"  # one contributor's own rows
    return response


def _citation(request: HttpRequest, release: releases.Release) -> str:
    url = request.build_absolute_uri(reverse("datasets:release-file", args=[release.number, releases.DATAPACKAGE]))
    return release.citation_text(url.removesuffix(releases.DATAPACKAGE))


@require_GET
def release_list(request: HttpRequest) -> HttpResponse:
    items = [(release, _citation(request, release)) for release in releases.list_releases()]
    return render(request, "datasets/releases.html", {"items": items})


@require_POST
def release_build(request: HttpRequest) -> HttpResponse:
    if not (request.user.is_authenticated and request.user.is_staff):
        raise PermissionDenied("Only staff can build a release.")

    transaction.on_commit(build_release.delay)
    messages.success(request, "A release build was queued. It appears here when done (unless nothing changed).")
    return redirect("datasets:releases")


@require_GET
def release_file(request: HttpRequest, number: int, name: str) -> HttpResponse:
    found = releases.release_file(number, name)
    if found is None:
        raise Http404("No such release file.")
    stored_name, size = found
    content_type = "text/plain; charset=utf-8" if name in releases.TEXT_FILES else None
    response = FileResponse(
        releases.open_release_file(stored_name),  # from the release storage, as a stream; FileResponse closes it
        as_attachment=name.endswith((".csv", ".parquet")),
        filename=name,
        content_type=content_type,
    )
    response["Content-Length"] = str(size)
    return response


def release_detail(request: HttpRequest, number: int) -> HttpResponse:
    if releases.get_release(number) is None:
        raise Http404("No such release.")
    return redirect(f"{reverse('datasets:releases')}#release-{number}")
