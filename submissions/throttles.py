"""Rate limits for uploads and credential endpoints: one per token (or user) and one per client address.

Every per-address limit keys on `client_ip(request)`, never on a raw header: X-Forwarded-For is read only as far as
NVMEDB_TRUSTED_PROXY_COUNT proxies of our own appended to it, so a client cannot pick its own address.
"""

from __future__ import annotations

import ipaddress
import logging

from django.conf import settings
from django.http import HttpRequest
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

logger = logging.getLogger(__name__)


def client_ip(request: HttpRequest) -> str:
    """The address of the client as the outermost proxy we trust saw it.

    With no trusted proxy (the default) that is REMOTE_ADDR and X-Forwarded-For is ignored. With N proxies, each
    appends the address it received the request from, so the N-th entry from the right was written by our outermost
    proxy; anything to its left came from the client and is ignored.
    """
    request = getattr(request, "_request", request)  # a DRF Request wraps Django's
    remote = request.META.get("REMOTE_ADDR", "") or ""
    proxies = int(getattr(settings, "NVMEDB_TRUSTED_PROXY_COUNT", 0) or 0)
    if proxies > 0:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= proxies:
            candidate = forwarded[-proxies]
            if _valid(candidate):
                return candidate
    return remote


def _valid(address: str) -> bool:
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return False
    return True


def address_key(address: str) -> str:
    """The throttle identity of an address: IPv6 hosts usually hold a whole /64, so they count as one."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address or "unknown"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


class _SettingsRateThrottle(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        # Read at request time (not import time) so settings overrides apply.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_ident(self, request) -> str:
        return address_key(client_ip(request))


class PerUserThrottle(_SettingsRateThrottle):
    def get_cache_key(self, request, view) -> str | None:
        if not request.user or not request.user.is_authenticated:
            return None  # the per-address limit still applies
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class PerAddressThrottle(_SettingsRateThrottle):
    def get_cache_key(self, request, view) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class UploadUserThrottle(PerUserThrottle):
    scope = "upload_user"


class UploadAddressThrottle(PerAddressThrottle):
    scope = "upload_ip"


class AuthUserThrottle(PerUserThrottle):
    scope = "auth_user"


class AuthAddressThrottle(PerAddressThrottle):
    scope = "auth_ip"


def _throttle(throttle_class: type[SimpleRateThrottle], scope: str | None = None) -> SimpleRateThrottle:
    throttle = throttle_class()
    if scope is not None:
        throttle.scope = scope
        throttle.rate = throttle.get_rate()
        throttle.num_requests, throttle.duration = throttle.parse_rate(throttle.rate)
    return throttle


def address_allowed(request, *, scope: str = "auth_ip") -> bool:
    """For the HTML sign-in and sign-up forms, which are not DRF views. Counts this request."""
    return _throttle(AuthAddressThrottle, scope).allow_request(request, None)


def upload_allowed(request) -> bool:
    """The HTML upload form shares the API's upload limits (per account and per address). Counts this request."""
    throttles = [_throttle(UploadUserThrottle), _throttle(UploadAddressThrottle)]
    return all(throttle.allow_request(request, None) for throttle in throttles)


class FailedAuthThrottle(PerAddressThrottle):
    """Failed API-token attempts per address. While an address is over the limit every token it presents is refused
    unread, so guessing tokens costs the guesser the same as giving up."""

    scope = "auth_failed_ip"

    def _history(self, request) -> tuple[str | None, list[float]]:
        if self.rate is None:
            return None, []
        key = self.get_cache_key(request, None)
        now = self.timer()
        try:
            stored = self.cache.get(key, [])
        except Exception:  # noqa: BLE001 - the cache is down: valid tokens must keep working (the count fails open)
            logger.warning("failed-token counter unavailable; not counting", exc_info=True)
            return None, []
        return key, [t for t in stored if t > now - self.duration]

    def blocked(self, request) -> bool:
        _, history = self._history(request)
        return self.rate is not None and len(history) >= self.num_requests

    def record_failure(self, request) -> None:
        key, history = self._history(request)
        if key is None:
            return
        history.insert(0, self.timer())
        try:
            self.cache.set(key, history, self.duration)
        except Exception:  # noqa: BLE001 - as above
            logger.warning("failed-token counter unavailable; not counting", exc_info=True)

    def retry_after(self, request) -> float:
        _, history = self._history(request)
        return max(0.0, history[-1] + self.duration - self.timer()) if history else 0.0
