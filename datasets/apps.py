from django.apps import AppConfig


class DatasetsConfig(AppConfig):
    """The data set as downloads: live exports, numbered releases and the read API. Its only model lives with the
    dataset (analysis.models.ExportMeasurementRow, the measurements CSV prepared at write time)."""

    name = "datasets"
