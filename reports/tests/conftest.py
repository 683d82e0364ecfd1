"""The reports tests share the analysis tests' fixtures (factories and bundles live there): each starts from an empty
cache (fresh_cache), and the dataset and drive fixtures are the same ones."""

from analysis.tests.conftest import browse_drive, dataset_runs, fresh_cache  # noqa: F401 -- pytest fixtures
