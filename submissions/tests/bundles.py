"""Access to the client's bundle factory (client/tests/bundle_factory.py), which builds good and hostile bundles."""

import bundle_factory

__all__ = ["bundle_factory"]
