from django.contrib import admin
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from submissions.views import (
    RateLimitedLoginView,
    RateLimitedPasswordResetConfirmView,
    RateLimitedPasswordResetView,
    admin_login,
)


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    return HttpResponsePermanentRedirect(static("favicon.svg"))  # resolved per request: no manifest at import time


urlpatterns = [
    # browsers ask for /favicon.ico on pages that name no icon (the admin's)
    path("favicon.ico", favicon),
    path("admin/login/", admin_login, name="admin-login"),  # rate-limited; the admin's other pages follow
    path("admin/", admin.site.urls),
    path("accounts/login/", RateLimitedLoginView.as_view(), name="login"),
    path("accounts/password_reset/", RateLimitedPasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/reset/<uidb64>/<token>/",
        RateLimitedPasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("submissions.urls")),
    path("", include("analysis.urls")),
    path("api/v1/", include("submissions.api_urls")),
    path("api/v1/", include("datasets.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view loads its start-up script as a file: the Content-Security-Policy allows no inline script.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
]
