from nvmedb.env import env_int
from nvmedb.settings.base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Unit tests run tasks in-process; tests marked `celery_worker` start a real worker against Redis instead.
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
# Throttle counters must not share the broker's Redis database, nor leak between tests.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Tests serve static files from the finders; there is no collectstatic output for WhiteNoise to index.
WHITENOISE_AUTOREFRESH = True
# Tests about something else publish directly; the review tests (submissions/tests/test_review.py) turn review on.
NVMEDB_REVIEW_FIRST_N = env_int("NVMEDB_REVIEW_FIRST_N", 0)
