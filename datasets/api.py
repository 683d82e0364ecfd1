"""The read API (v1): drives, published submissions, measurements and releases. Anyone may read it.

Stability promise: within v1, documented fields are never removed or renamed and their meaning and unit do not
change; new fields may be added. Breaking changes get a new version prefix (/api/v2/).
"""

from __future__ import annotations

from django.db.models import Count, Prefetch
from django.http import Http404
from django.shortcuts import get_object_or_404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.exceptions import ParseError
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from analysis.filters import DriveFilter
from analysis.models import DriveModel, DriveModelAggregate
from analysis.selectors import extension_q, pts_q, public_runs_q, public_submissions, public_test_runs
from datasets import filters, releases
from datasets.serializers import DriveDetailSerializer, DriveSerializer, ReleaseSerializer, row_serializer
from datasets.tables import TABLES
from nvmedb_client import data_license

STABILITY = (
    " Stable within v1: documented fields are never removed or renamed, and keep their meaning and unit; "
    "fields may be added."
)
MEASUREMENTS = TABLES["measurements"]
MeasurementRow = row_serializer(MEASUREMENTS)


class ReadApi:
    authentication_classes: list = []
    permission_classes = [AllowAny]


class DrivePagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class DriveListApi(ReadApi, generics.ListAPIView):
    """Drive models with at least one public run. Same filters and search (`q`) as the drive list page.

    Stable within v1: documented fields are never removed or renamed and keep their meaning and unit."""

    serializer_class = DriveSerializer
    pagination_class = DrivePagination
    filter_backends = [DjangoFilterBackend]
    filterset_class = DriveFilter

    def get_queryset(self):
        return DriveModel.objects.filter(pk__in=public_test_runs().values("drive_model_id")).select_related("vendor")


class DriveDetailApi(ReadApi, generics.RetrieveAPIView):
    """One drive model with its headline aggregates (median and quartiles over units, run, unit and contributor
    counts, and whether a single contributor backs the figure: unconfirmed).

    Stable within v1: documented fields are never removed or renamed and keep their meaning and unit."""

    serializer_class = DriveDetailSerializer
    lookup_field = "slug"

    def get_queryset(self):
        return (
            DriveModel.objects.filter(pk__in=public_test_runs().values("drive_model_id"))
            .select_related("vendor")
            .annotate(
                public_runs=Count("test_runs", filter=public_runs_q("test_runs__") & pts_q("test_runs__")),
                public_surface_runs=Count(
                    "test_runs", filter=public_runs_q("test_runs__") & extension_q("test_runs__")
                ),
            )
            .prefetch_related(Prefetch("aggregates", queryset=DriveModelAggregate.objects.order_by("metric", "factor")))
        )


class PublishedSubmissionSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="The submission's stable id.")
    sha256 = serializers.CharField(help_text="SHA-256 of the bundle as uploaded.")
    size_bytes = serializers.IntegerField(source="size", help_text="Size of the bundle as uploaded (compressed).")
    published_at = serializers.DateTimeField(allow_null=True)
    runs = serializers.SerializerMethodField(help_text="The submission's test runs: run_id, test and drive_slug.")

    def get_runs(self, obj) -> list[dict]:
        return [{"run_id": r.id, "test": r.test, "drive_slug": r.drive_model.slug} for r in obj.public_runs]


class SubmissionPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


def _published_submissions():
    runs = public_test_runs().select_related("drive_model").order_by("test")
    return (
        public_submissions()
        .order_by("-published_at", "id")
        .prefetch_related(Prefetch("test_runs", queryset=runs, to_attr="public_runs"))
    )


class PublishedSubmissionListApi(ReadApi, generics.ListAPIView):
    """Published submissions (never withdrawn, hidden, held or rejected ones), newest first.

    Stable within v1: documented fields are never removed or renamed and keep their meaning and unit."""

    serializer_class = PublishedSubmissionSerializer
    pagination_class = SubmissionPagination

    def get_queryset(self):
        return _published_submissions()


class PublishedSubmissionDetailApi(ReadApi, generics.RetrieveAPIView):
    """One published submission.

    Stable within v1: documented fields are never removed or renamed and keep their meaning and unit."""

    serializer_class = PublishedSubmissionSerializer
    lookup_url_kwarg = "submission_id"

    def get_object(self):
        return get_object_or_404(_published_submissions(), pk=self.kwargs["submission_id"])


class MeasurementPagination(CursorPagination):
    """Stable cursor pages in id order: rows added meanwhile never shift a page."""

    ordering = "pk"
    page_size = 500
    page_size_query_param = "page_size"
    max_page_size = 5000

    def _get_position_from_instance(self, instance, ordering):
        return str(instance[0])  # measurement_id, the rows' first column


MEASUREMENT_PARAMETERS = [
    OpenApiParameter("drive", str, many=True, description="Drive model slug (repeatable)."),
    OpenApiParameter("vendor", str, many=True, description="Vendor slug (repeatable)."),
    OpenApiParameter("test", str, many=True, enum=["iops", "tp", "lat", "wsat"], description="PTS test."),
    OpenApiParameter("firmware", str, many=True, description="Firmware revision (repeatable)."),
    OpenApiParameter("pcie_generation", int, description="Negotiated PCIe generation, 1..7."),
    OpenApiParameter("compliance", str, enum=list(filters.COMPLIANCE), description="pts, quick or imported runs."),
    OpenApiParameter("block_size_bytes", int, many=True, description="Block size in bytes (repeatable)."),
    OpenApiParameter("read_pct", int, many=True, description="Read share of the R/W mix, 0..100 (repeatable)."),
    OpenApiParameter("in_steady_window", bool, description="Only rows inside (true) or outside (false) the window."),
]


@extend_schema_view(get=extend_schema(parameters=MEASUREMENT_PARAMETERS))
class MeasurementListApi(ReadApi, generics.ListAPIView):
    """Measurements, one per cell per round, with the same columns, units and filters as /datasets/measurements.csv.
    Cursor-paginated in id order; follow `next` until it is null. A bad filter value is a 400 that says why.

    Stable within v1: documented fields are never removed or renamed and keep their meaning and unit."""

    serializer_class = MeasurementRow
    pagination_class = MeasurementPagination

    def get_queryset(self):
        try:
            cleaned = filters.parse(
                MEASUREMENTS, self.request.query_params, control=frozenset(), ignore=frozenset({"cursor", "page_size"})
            )
        except filters.FilterError as exc:
            raise ParseError(str(exc)) from None
        return filters.filtered_queryset(MEASUREMENTS, cleaned).values_list(*[c.source for c in MEASUREMENTS.columns])


def _release_data(request: Request, release: releases.Release) -> dict:
    page = reverse("datasets:release-file", args=[release.number, releases.DATAPACKAGE], request=request)
    return {
        "number": release.number,
        "url": reverse("datasets-api:release", args=[release.number], request=request),
        "created": release.created,
        "total_bytes": release.total_bytes,
        "citation": release.citation_text(page.removesuffix(releases.DATAPACKAGE)),
        "license": data_license.SPDX,
        "files": [
            {
                "name": f.name,
                "url": reverse("datasets:release-file", args=[release.number, f.name], request=request),
                "bytes": f.bytes,
                "sha256": f.sha256,
                "rows": f.rows,
            }
            for f in release.files
        ],
    }


class ApiRootApi(ReadApi, APIView):
    class ApiRootSerializer(serializers.Serializer):
        license = serializers.DictField(help_text="The data licence: SPDX id, title and URL (CC BY 4.0).")
        code_license = serializers.CharField(help_text="SPDX id of the software's licence (MIT).")
        attribution = serializers.CharField(help_text="Whom to credit when reusing the data.")
        endpoints = serializers.DictField(child=serializers.URLField())

    @extend_schema(
        operation_id="api_root",
        responses=ApiRootSerializer,
        description="The data licence and the read endpoints. Every value in this API is data under CC BY 4.0."
        + STABILITY,
    )
    def get(self, request: Request) -> Response:
        names = ("drives", "published-submissions", "measurements", "releases")
        return Response(
            {
                "license": {"spdx": data_license.SPDX, "title": data_license.TITLE, "url": data_license.URL},
                "code_license": data_license.CODE_SPDX,
                "attribution": data_license.ATTRIBUTION,
                "endpoints": {name: reverse(f"datasets-api:{name}", request=request) for name in names},
            }
        )


class ReleaseListApi(ReadApi, APIView):
    @extend_schema(responses=ReleaseSerializer(many=True), description="Published releases, newest first." + STABILITY)
    def get(self, request: Request) -> Response:
        return Response([_release_data(request, release) for release in releases.list_releases()])


class ReleaseDetailApi(ReadApi, APIView):
    @extend_schema(
        responses=ReleaseSerializer,
        parameters=[OpenApiParameter("number", OpenApiTypes.INT, OpenApiParameter.PATH)],
        description="One release: its files with sizes, row counts and SHA-256 checksums." + STABILITY,
    )
    def get(self, request: Request, number: int) -> Response:
        release = releases.get_release(number)
        if release is None:
            raise Http404("No such release.")
        return Response(_release_data(request, release))
