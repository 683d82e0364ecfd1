"""Read API (v1) routes. The intake (submissions.api_urls) owns /submissions/, /keys/ and /me/."""

from django.urls import path

from datasets import api

app_name = "datasets-api"
urlpatterns = [
    path("", api.ApiRootApi.as_view(), name="root"),
    path("drives/", api.DriveListApi.as_view(), name="drives"),
    path("drives/<slug:slug>/", api.DriveDetailApi.as_view(), name="drive"),
    path("published-submissions/", api.PublishedSubmissionListApi.as_view(), name="published-submissions"),
    path(
        "published-submissions/<uuid:submission_id>/",
        api.PublishedSubmissionDetailApi.as_view(),
        name="published-submission",
    ),
    path("measurements/", api.MeasurementListApi.as_view(), name="measurements"),
    path("releases/", api.ReleaseListApi.as_view(), name="releases"),
    path("releases/<int:number>/", api.ReleaseDetailApi.as_view(), name="release"),
]
