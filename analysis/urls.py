"""The public dataset's pages: browsing (drives, compare, methodology) and downloads (datasets, releases)."""

from django.urls import include, path

urlpatterns = [
    path("", include("analysis.browse.urls")),
    path("datasets/", include("analysis.datasets.urls")),
]
