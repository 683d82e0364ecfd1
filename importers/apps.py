from django.apps import AppConfig


class ImportersConfig(AppConfig):
    """Importers of existing PTS results (SSSPT, py-sss-pts trees, the launch sample) into the dataset."""

    name = "importers"
