from django.core.exceptions import ImproperlyConfigured

from nvmedb.env import env_bool, env_str
from nvmedb.settings.base import *  # noqa: F403

for _required in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL"):
    if not env_str(_required):
        raise ImproperlyConfigured(f"{_required} must be set in production")

STORAGES["staticfiles"] = {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}  # noqa: F405
WHITENOISE_USE_FINDERS = False
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
