"""Server-rendered pages for people: home, drive list, drive page, compare, methodology, raw files, the client."""

from django.urls import path

from browse import views

urlpatterns = [
    path("", views.home, name="home"),
    path("drives/", views.drive_list, name="drive-list"),
    path("drives/<slug:slug>/", views.drive_detail, name="drive-detail"),
    path("drives/<slug:slug>/surface/", views.drive_surface, name="drive-surface"),
    path("drives/<slug:slug>/charts/<str:chart>.csv", views.drive_chart_csv, name="drive-chart-csv"),
    path("drives/<slug:slug>/metadata/", views.propose_metadata, name="drive-propose-metadata"),
    path("compare/", views.compare, name="compare"),
    path("compare/charts/<str:chart>.csv", views.compare_chart_csv, name="compare-chart-csv"),
    path("methodology/", views.methodology, name="methodology"),
    path("client/", views.client_index, name="client-index"),
    path("client/<str:filename>", views.client_wheel_file, name="client-wheel"),
    path("submissions/<uuid:submission_id>/surface/", views.submission_surface, name="submission-surface"),
    path("submissions/<uuid:submission_id>/files/<path:path>", views.raw_file, name="submission-raw-file"),
]
