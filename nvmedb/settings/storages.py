"""Where bundles ("default" storage) and releases ("releases" storage) are kept, from the environment.

Local directories by default. With NVMEDB_S3_BUCKET set, both live in that S3-compatible bucket (bundles under
`bundles/`, releases under `releases/`), so web and worker processes may run on different machines. Credentials come
from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or any other source boto3 reads: a profile, an instance role).
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from nvmedb.env import env_int, env_str

FILE_SYSTEM = "django.core.files.storage.FileSystemStorage"
OBJECT_STORAGE = "nvmedb.object_storage.ObjectStorage"
RELEASES_PREFIX = "releases"


def object_storage_options(*, bucket: str, endpoint_url: str = "", region: str = "", location: str = "") -> dict:
    """OPTIONS of one ObjectStorage (nvmedb.object_storage): private objects, never overwritten in place."""
    return {
        "bucket_name": bucket,
        "endpoint_url": endpoint_url or None,
        "region_name": region or None,
        "location": location,
        # MinIO and other self-hosted servers answer on one host name, not one per bucket.
        "addressing_style": env_str("NVMEDB_S3_ADDRESSING_STYLE", "path" if endpoint_url else "auto"),
        "signature_version": "s3v4",
        "default_acl": None,
        "querystring_auth": True,
        "connect_timeout": env_int("NVMEDB_S3_CONNECT_TIMEOUT_S", 5),
        "read_timeout": env_int("NVMEDB_S3_READ_TIMEOUT_S", 60),
        "max_attempts": env_int("NVMEDB_S3_MAX_ATTEMPTS", 3),
    }


def storages_from_env(*, var_dir: Path, releases_dir: Path) -> dict:
    """STORAGES without "staticfiles"."""
    bucket = env_str("NVMEDB_S3_BUCKET")
    if not bucket:
        backend = env_str("BUNDLE_STORAGE_BACKEND")
        bundles_dir = env_str("BUNDLE_STORAGE_DIR", str(var_dir / "bundles"))
        return {
            "default": {"BACKEND": backend, "OPTIONS": {}} if backend else {
                "BACKEND": FILE_SYSTEM, "OPTIONS": {"location": bundles_dir}},
            "releases": {"BACKEND": FILE_SYSTEM, "OPTIONS": {"location": str(releases_dir)}},
        }  # fmt: skip
    if env_str("BUNDLE_STORAGE_BACKEND"):
        raise ImproperlyConfigured("Set NVMEDB_S3_BUCKET or BUNDLE_STORAGE_BACKEND, not both.")
    endpoint = env_str("NVMEDB_S3_ENDPOINT_URL")
    region = env_str("NVMEDB_S3_REGION") or env_str("AWS_DEFAULT_REGION")
    releases_bucket = env_str("NVMEDB_S3_RELEASES_BUCKET") or bucket
    return {
        "default": {
            "BACKEND": OBJECT_STORAGE,
            "OPTIONS": object_storage_options(bucket=bucket, endpoint_url=endpoint, region=region),
        },
        "releases": {
            "BACKEND": OBJECT_STORAGE,
            "OPTIONS": object_storage_options(
                bucket=releases_bucket, endpoint_url=endpoint, region=region, location=RELEASES_PREFIX
            ),
        },
    }
