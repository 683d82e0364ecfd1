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
