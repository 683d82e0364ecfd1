"""Named users and their credentials, and a bundle storage of each test's own."""

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from submissions import services


@pytest.fixture(autouse=True)
def bundle_storage(settings, tmp_path):
    """Each test stores bundles in its own directory."""
    location = tmp_path / "storage"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(location)}},
    }
    return location


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings):
    # A process-local cache: clearing a Redis cache would flush the database the Celery broker shares.
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "intake-tests"}
    }
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def owner(db):
    return services.user_create(username="owner", email="owner@example.org", password="owner-password-1")


@pytest.fixture
def stranger(db):
    return services.user_create(username="stranger", email="stranger@example.org", password="stranger-password-1")


@pytest.fixture
def staff(db):
    user = services.user_create(username="staff", password="staff-password-1")
    user.is_staff = True
    user.is_superuser = True
    user.save()
    return user


@pytest.fixture
def owner_token(owner) -> str:
    return services.api_token_create(user=owner, name="laptop")[1]


@pytest.fixture
def stranger_token(stranger) -> str:
    return services.api_token_create(user=stranger, name="other")[1]


def api_client(token: str | None = None) -> APIClient:
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


@pytest.fixture
def owner_api(owner_token) -> APIClient:
    return api_client(owner_token)


@pytest.fixture
def stranger_api(stranger_token) -> APIClient:
    return api_client(stranger_token)


@pytest.fixture
def anonymous_api() -> APIClient:
    return api_client()


# --- bundles the dataset publishes (consistent with their real fio outputs), uploaded and validated ---------------


def register_key(user):
    from submissions.tests.bundles import bundle_factory

    key = bundle_factory.new_signing_key()
    services.signing_key_register(user=user, public_key=bundle_factory.public_key_bytes(key), name="test")
    return key


@pytest.fixture
def publishable_bundle(tmp_path, shared_samples):
    """`build(key, samples=None, label="")` writes a signed bundle the ingest publishes (the shared real fio outputs
    with the system files of a real drive). `label` changes the manifest, hence the bundle's bytes, not its runs.
    It is a device run with the pts profile: a trial (file target or quick profile) is never public."""
    from analysis.tests import bundles
    from analysis.tests.test_plausibility_ingest import _device
    from nvmedb_client.bundle import write_bundle

    counter = iter(range(1000))

    def build(key, *, samples=None, label: str = ""):
        work = tmp_path / f"publishable-{next(counter)}"
        work.mkdir()
        run_dir, manifest, files = bundles.consistent_run_dir(work, shared_samples, samples)
        bundles.add_system_files(run_dir, files, shared_samples)
        _device(run_dir, manifest, files, shared_samples)
        manifest["profile"] = manifest["plan"]["profile"]["name"] = "pts"
        if label:
            manifest["test_label"] = label
        return write_bundle(
            run_dir=run_dir, manifest=manifest, files=files, signing_key=key, out_path=work / "run.nvmedb.tar.gz"
        )

    return build


@pytest.fixture
def upload(django_capture_on_commit_callbacks):
    """`upload(client, path)` posts a bundle through the API, runs the queued validation, and returns the
    submission as its uploader sees it."""

    def _upload(client, path) -> dict:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/api/v1/submissions/", data=path.read_bytes(), content_type="application/octet-stream"
            )
        assert response.status_code in (200, 202), response.content
        return client.get(response.json()["url"]).json()

    return _upload
