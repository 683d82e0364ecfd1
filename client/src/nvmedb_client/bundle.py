"""Write and verify nvmedb result bundles (docs/bundle-format.md).

Verification treats the bundle as hostile: the archive is read once, as a stream, never with `extractall`; every
member's name and type is checked before a byte of it is kept; each member is hashed as it is read; sizes, counts and
the compression ratio are enforced while decompressing, so a bomb is stopped before it fills memory or the disk.
`verify_bundle_stream` keeps the files in memory (up to `BundleLimits.max_memory_bytes`, the rest in a private
temporary directory under numbered names) and reads from any binary file object, such as a file opened from Django's
storage, local or remote; `verify_bundle` extracts a bundle file on disk into a directory.

The parts live in bundle_format (names, limits, schema), bundle_write, bundle_verify, bundle_files (the verified
bundle and where its files are) and bundle_rederive; their public names are re-exported here, where the client and
the server import them.
"""

from __future__ import annotations

# re-exported: the bundle's public names live here
from nvmedb_client.bundle_files import ExtractedFiles, HeldFiles, VerifiedBundle  # noqa: F401
from nvmedb_client.bundle_format import (  # noqa: F401
    BUNDLE_SUFFIX,
    FILES_DIR,
    FORMAT_VERSION,
    MANIFEST_NAME,
    MAX_MANIFEST_DEPTH,
    MAX_NAME_BYTES,
    MAX_PATH_LENGTH,
    MAX_SIGNATURE_BYTES,
    READ_VERSIONS,
    SIGNATURE_NAME,
    BundleError,
    BundleLimits,
    _schema_validators,
    bundle_file_name,
    encode_manifest,
    manifest_errors,
    manifest_schema,
)
from nvmedb_client.bundle_rederive import rederive_steady_state  # noqa: F401
from nvmedb_client.bundle_verify import verify_bundle, verify_bundle_stream  # noqa: F401
from nvmedb_client.bundle_write import write_bundle  # noqa: F401
