from django.core.exceptions import ImproperlyConfigured

from nvmedb.env import env_bool, env_int, env_list, env_str
from nvmedb.settings.base import *  # noqa: F403

for _required in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL"):
    if not env_str(_required):
        raise ImproperlyConfigured(f"{_required} must be set in production")

STORAGES["staticfiles"] = {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}  # noqa: F405
WHITENOISE_USE_FINDERS = False
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)

# HTTPS only. Behind a TLS-terminating proxy, Django learns the scheme from the header the proxy sets; the proxy must
# overwrite that header on every request (otherwise a client could claim https). SECURE_PROXY_SSL_HEADER is
# "Header-Name: value", or empty when the site terminates TLS itself.
_proxy_header = env_str("SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto: https")
if _proxy_header:
    _name, _, _value = _proxy_header.partition(":")
    if not _name.strip() or not _value.strip():
        raise ImproperlyConfigured(
            f"SECURE_PROXY_SSL_HEADER must look like 'X-Forwarded-Proto: https'; got {_proxy_header!r}"
        )
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _name.strip().upper().replace("-", "_"), _value.strip())
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
# Health checks from the proxy or the orchestrator come over plain HTTP on the inside.
SECURE_REDIRECT_EXEMPT = env_list("SECURE_REDIRECT_EXEMPT", [])
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Subdomains and the preload list are the operator's choice (they bind every subdomain to HTTPS for a long time);
# leaving them off is deliberate, not an oversight for `manage.py check --deploy` to flag.
SILENCED_SYSTEM_CHECKS = [
    *(["security.W005"] if not SECURE_HSTS_INCLUDE_SUBDOMAINS else []),
    *(["security.W021"] if not SECURE_HSTS_PRELOAD else []),
]
