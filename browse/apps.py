from django.apps import AppConfig


class BrowseConfig(AppConfig):
    """The read side's pages: drive list and pages, compare, the surface, methodology, submission pages and raw
    files. No models of its own: it reads the dataset (analysis.models) and its page summaries."""

    name = "browse"
