"""Serve plotly.js from the installed `plotly` Python package as the static file vendor/plotly/plotly.min.js.

No copy is committed and no CDN is used: the site works offline and behind firewalls, and the JS always matches the
installed plotly version. Only that one file is exposed (the package directory holds other data).
"""

from __future__ import annotations

from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

STATIC_PATH = "vendor/plotly/plotly.min.js"
PREFIX = "vendor/plotly"
FILE_NAME = "plotly.min.js"


def plotly_js_path() -> Path:
    return Path(plotly.__file__).resolve().parent / "package_data" / FILE_NAME


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(plotly_js_path().parent))
        self.storage.prefix = PREFIX

    def check(self, **kwargs):
        from django.core.checks import Error

        if not plotly_js_path().is_file():
            return [Error(f"plotly.js not found at {plotly_js_path()}", id="browse.E001")]
        return []

    def find(self, path, find_all=False, **kwargs):
        if path == STATIC_PATH and plotly_js_path().is_file():
            match = str(plotly_js_path())
            return [match] if find_all or kwargs.get("all") else match
        return []

    def list(self, ignore_patterns):
        if plotly_js_path().is_file():
            yield FILE_NAME, self.storage
