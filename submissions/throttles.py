"""Rate limits for uploads and credential endpoints: one per token (or user) and one per client address."""

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle


class _SettingsRateThrottle(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        # Read at request time (not import time) so settings overrides apply.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


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


def address_allowed(request, *, scope: str = "auth_ip") -> bool:
    """For the HTML sign-in and sign-up forms, which are not DRF views."""
    throttle = AuthAddressThrottle()
    throttle.scope = scope
    throttle.rate = throttle.get_rate()
    throttle.num_requests, throttle.duration = throttle.parse_rate(throttle.rate)
    return throttle.allow_request(request, None)
