from django.apps import AppConfig


class ReportsConfig(AppConfig):
    """Each PTS test's report, as the SNIA PTS calls it: its drive-page charts and its export tables, one package per
    test (reports/<test>/) behind reports.registry, on a shared chart toolkit (chart_kit, steady, units) and the
    shared table types (table_types, table_kit). No models of its own: it reads the dataset (analysis.models); browse
    and datasets ask it, it asks neither."""

    name = "reports"
