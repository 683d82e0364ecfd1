"""Accounts and their API tokens: sign-up (with the data licence), creating, renaming, revoking and touching tokens."""

import hashlib
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from nvmedb_client import data_license
from submissions.models import ApiToken, DataLicenseAcceptance

TOKEN_PREFIX = "nvmedb_"
TOKEN_DISPLAY_CHARS = 12


def user_create(*, username: str, email: str = "", password: str | None = None) -> AbstractBaseUser:
    user_model = get_user_model()
    if password is None:
        return user_model.objects.create_user(username=username, email=email)  # unusable password: API only
    return user_model.objects.create_user(username=username, email=email, password=password)


@transaction.atomic
def contributor_sign_up(*, username: str, email: str, password: str) -> AbstractBaseUser:
    """An account from the sign-up form, whose checkbox accepted the data licence: both are recorded together."""
    user = user_create(username=username, email=email, password=password)
    data_license_accept(user=user, via=DataLicenseAcceptance.Via.SIGNUP)
    return user


def data_license_accept(*, user: AbstractBaseUser, via: str, license: str = data_license.SPDX) -> DataLicenseAcceptance:
    """Record that `user` accepted the data licence; only the current licence can be accepted."""
    if license != data_license.SPDX:
        raise ValueError(f"The data is published under {data_license.SPDX}, not {license}.")
    return DataLicenseAcceptance.objects.create(user=user, license=license, via=via)


def token_digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


@transaction.atomic
def api_token_create(*, user: AbstractBaseUser, name: str = "") -> tuple[ApiToken, str]:
    """Returns the token row and the token itself, which exists nowhere else: show it once."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name.strip()[:100], prefix=raw[:TOKEN_DISPLAY_CHARS], digest=token_digest(raw)
    )
    return token, raw


def api_token_rename(*, token: ApiToken, name: str) -> ApiToken:
    token.name = name.strip()[:100]
    token.save(update_fields=["name"])
    return token


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_token_touch(*, token: ApiToken) -> None:
    """Record use, at most once a minute, so authentication does not write on every request."""
    now = timezone.now()
    if token.last_used is None or (now - token.last_used).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        token.last_used = now
