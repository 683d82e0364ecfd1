"""Settings shared by every environment. Everything a deployment changes comes from the environment."""

import secrets
from pathlib import Path

import dj_database_url
from celery.schedules import crontab

from nvmedb.env import env_bool, env_int, env_list, env_str
from nvmedb.settings.storages import storages_from_env

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("NVMEDB_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _local_secret_key() -> str:
    """A per-checkout random key, so a development site needs no configuration and no secret is ever committed."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = env_str("SECRET_KEY") or _local_secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "submissions",
    "analysis",
    "importers",
    "reports",
    "browse",
    "datasets",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "nvmedb.security.ContentSecurityPolicyMiddleware",
    "nvmedb.faults.ServiceUnavailableMiddleware",
]

ROOT_URLCONF = "nvmedb.urls"
WSGI_APPLICATION = "nvmedb.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'nvmedb.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Pages and exports run many short or streamed queries; PostgreSQL's JIT spent ~1 s compiling the export query
    # before its first row (EXPLAIN ANALYZE on 1 M rows) and saves nothing for queries like these.
    # random_page_cost 1.1, not the default 4 (priced for spinning disks): the rows read by key are in memory or on
    # SSD, and at 4 the planner hashed all 61 k rounds to join the 431 measurements of four runs (13.2 ms against
    # 1.1 ms by key, a drive page summary's rebuild).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("options", "-c jit=off -c random_page_cost=1.1")
# A connection kept between requests is checked before reuse, so the first request after a database restart does not
# fail on a connection the server has closed.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "submissions:profile"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "browse.staticfinders.PlotlyFinder",  # plotly.js from the installed plotly package
]
# Serve static files from the app directories without collectstatic, so plain `runserver` works with DEBUG off.
WHITENOISE_USE_FINDERS = True
# Versioned, immutable data set releases (datasets.releases), when they are kept on local disk.
NVMEDB_RELEASES_DIR = Path(env_str("NVMEDB_RELEASES_DIR", str(VAR_DIR / "releases")))
# The client wheel served at /client/ (browse.client_wheel); scripts/build-client-wheel.sh builds it here.
NVMEDB_CLIENT_WHEEL_DIR = Path(env_str("NVMEDB_CLIENT_WHEEL_DIR", str(VAR_DIR / "client")))
# Uploaded bundles ("default") and releases ("releases"): local directories, or an S3-compatible bucket when
# NVMEDB_S3_BUCKET is set (nvmedb.settings.storages).
STORAGES = {
    **storages_from_env(var_dir=VAR_DIR, releases_dir=NVMEDB_RELEASES_DIR),
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Bundles are streamed to storage; these bound what one upload may cost the site.
NVMEDB_MAX_BUNDLE_BYTES = env_int("NVMEDB_MAX_BUNDLE_BYTES", 1024**3)
# Public raw files: shown inline up to the first size, offered as a streamed download up to the second.
NVMEDB_RAW_FILE_RENDER_MAX_BYTES = env_int("NVMEDB_RAW_FILE_RENDER_MAX_BYTES", 2 * 1024**2)
NVMEDB_RAW_FILE_DOWNLOAD_MAX_BYTES = env_int("NVMEDB_RAW_FILE_DOWNLOAD_MAX_BYTES", 64 * 1024**2)
# Keyed hash for drive serial numbers (analysis): never publish a raw serial.
NVMEDB_SERIAL_HASH_KEY = env_str("NVMEDB_SERIAL_HASH_KEY") or SECRET_KEY

# Celery: Redis when REDIS_URL is set; otherwise a broker kept in local files, which needs no daemon.
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # A message a dead worker had taken comes back after this long; it must outlive the longest task.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT_S", 3600)}
    # Rate limits must be shared by every web process; while Redis is away each process uses its own memory.
    CACHES = {"default": {"BACKEND": "nvmedb.cache.FailOpenRedisCache", "LOCATION": REDIS_URL}}
else:
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        # Broadcast (remote control) messages; without this kombu writes them to ./control.
        "control_folder": str(_broker_dir / "control"),
    }
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_BEAT_SCHEDULE: dict = {
    "requeue-stranded-submissions": {
        "task": "submissions.tasks.requeue_stranded",
        "schedule": float(env_int("NVMEDB_REQUEUE_INTERVAL_S", 60)),
    },
    # Weekly data set release; NVMEDB_RELEASE_CRON is "minute hour day_of_month month_of_year day_of_week".
    "build-weekly-release": {
        "task": "analysis.tasks.build_release",
        "schedule": crontab.from_string(env_str("NVMEDB_RELEASE_CRON", "0 3 * * mon")),
    },
}

# Submission pipeline. A submission still `received` after NVMEDB_REQUEUE_RECEIVED_AFTER_S (its message was lost or
# the broker was down), or in a worker's hands longer than the hard time limit allows, is queued again.
NVMEDB_VALIDATION_SOFT_TIME_LIMIT_S = env_int("NVMEDB_VALIDATION_SOFT_TIME_LIMIT_S", 1500)
NVMEDB_VALIDATION_TIME_LIMIT_S = env_int("NVMEDB_VALIDATION_TIME_LIMIT_S", 1800)
NVMEDB_REQUEUE_RECEIVED_AFTER_S = env_int("NVMEDB_REQUEUE_RECEIVED_AFTER_S", 120)
NVMEDB_REQUEUE_WORKING_AFTER_S = env_int("NVMEDB_REQUEUE_WORKING_AFTER_S", NVMEDB_VALIDATION_TIME_LIMIT_S + 120)
NVMEDB_MAX_VALIDATION_ATTEMPTS = env_int("NVMEDB_MAX_VALIDATION_ATTEMPTS", 5)
# A validating worker renews a lease of this many seconds (submissions.leases); once a killed worker's lease lapses,
# its submission is queued again without waiting for NVMEDB_REQUEUE_WORKING_AFTER_S.
NVMEDB_VALIDATION_LEASE_S = env_int("NVMEDB_VALIDATION_LEASE_S", 30)
# A contributor's first N submissions wait for staff review (admin action "Approve and publish"); 0 turns review off.
NVMEDB_REVIEW_FIRST_N = env_int("NVMEDB_REVIEW_FIRST_N", 3)
# How many reverse proxies in front of the site append to X-Forwarded-For. 0: the client is REMOTE_ADDR and the header
# is ignored; N: the client is the N-th address from the right (what the outermost trusted proxy saw).
NVMEDB_TRUSTED_PROXY_COUNT = env_int("NVMEDB_TRUSTED_PROXY_COUNT", 0)
# Test-only: makes validation sleep so a test can kill a worker mid-task. Zero everywhere else.
NVMEDB_TEST_VALIDATION_DELAY_S = float(env_str("NVMEDB_TEST_VALIDATION_DELAY_S", "0") or 0)

# Seconds a client is told to wait (Retry-After) when the database, the queue or bundle storage is unavailable.
NVMEDB_RETRY_AFTER_S = env_int("NVMEDB_RETRY_AFTER_S", 30)
# Content-Security-Policy of every response (nvmedb.security); an empty value sends none. Every script the site runs
# is one of its own static files (plotly.js, charts.js, the Swagger UI): no inline script, no eval. Figures travel in
# <script type="application/json"> blocks, which are data. Plotly and the Swagger UI set inline styles.
DEFAULT_CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
NVMEDB_CONTENT_SECURITY_POLICY = env_str("NVMEDB_CONTENT_SECURITY_POLICY", DEFAULT_CONTENT_SECURITY_POLICY)

REST_FRAMEWORK = {
    "EXCEPTION_HANDLER": "nvmedb.faults.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "submissions.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # DRF's own throttles, if any view uses them, read the client address the way submissions.throttles.client_ip does.
    "NUM_PROXIES": NVMEDB_TRUSTED_PROXY_COUNT,
    # Per token (or signed-in user) and per client address; the scopes are used by the intake endpoints.
    "DEFAULT_THROTTLE_RATES": {
        "upload_user": env_str("NVMEDB_RATE_UPLOAD_USER", "60/hour"),
        "upload_ip": env_str("NVMEDB_RATE_UPLOAD_IP", "120/hour"),
        "auth_user": env_str("NVMEDB_RATE_AUTH_USER", "60/hour"),
        "auth_ip": env_str("NVMEDB_RATE_AUTH_IP", "30/minute"),
        "auth_failed_ip": env_str("NVMEDB_RATE_AUTH_FAILED_IP", "20/hour"),
        "signup_ip": env_str("NVMEDB_RATE_SIGNUP_IP", "10/hour"),
    },
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "nvmedb API",
    "DESCRIPTION": "The open dataset of NVMe SSD performance measured with the SNIA PTS. The data this API serves "
    "is published under CC BY 4.0 (credit: nvmedb contributors); the software is under the MIT licence.",
    "VERSION": "1",
    "LICENSE": {"name": "CC-BY-4.0", "url": "https://creativecommons.org/licenses/by/4.0/"},
    # Served from our own static files: the site works offline and behind firewalls.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two choice fields are called `status`: a submission's and a factor effect's in an explanation line.
    "ENUM_NAME_OVERRIDES": {
        "SubmissionStatusEnum": "submissions.models.SubmissionStatus",
        "EffectStatusEnum": ["estimated", "indicative"],
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
