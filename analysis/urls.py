"""The public dataset's pages: browsing (drives, compare, methodology) and downloads (datasets, releases)."""

from django.urls import include, path

urlpatterns = [
    path("", include("browse.urls")),
    path("datasets/", include("datasets.urls")),
]
