"""Server-rendered pages: sign up, profile (tokens and keys), uploading a bundle, and a submission's page."""

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView, PasswordResetConfirmView, PasswordResetView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from nvmedb_client import units
from submissions import accounts, hooks, key_registration, keys, moderation, receiving, selectors
from submissions.forms import SigningKeyForm, SignupForm, TokenCreateForm, TokenUpdateForm, UploadForm
from submissions.models import SubmissionStatus
from submissions.selectors import Visibility
from submissions.throttles import address_allowed, upload_allowed
from submissions.upload import MULTIPART_OVERHEAD_BYTES, BundleTooLarge, LimitedTemporaryFileUploadHandler

TOO_MANY = "Too many attempts from your address; wait a few minutes and try again."
TOO_MANY_UPLOADS = "Too many uploads from your account or address; wait a while and try again."


class RateLimitedPostMixin:
    """The sign-in limit per address on a form's POST: sign-in and asking for a password reset."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not address_allowed(request):
            return HttpResponse(TOO_MANY, status=429, content_type="text/plain")
        return super().post(request, *args, **kwargs)


class RateLimitedLoginView(RateLimitedPostMixin, LoginView):
    pass


class RateLimitedPasswordResetView(RateLimitedPostMixin, PasswordResetView):
    pass


class RateLimitedPasswordResetConfirmView(PasswordResetConfirmView):
    """Every request checks the reset token in its URL (Django judges it before any POST), so every request counts."""

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not address_allowed(request):
            return HttpResponse(TOO_MANY, status=429, content_type="text/plain")
        return super().dispatch(request, *args, **kwargs)


def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin's own sign-in form, behind the same per-address limit as the site's."""
    if request.method == "POST" and not address_allowed(request):
        return HttpResponse(TOO_MANY, status=429, content_type="text/plain")
    return admin.site.login(request)


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("submissions:profile")
    form = SignupForm(request.POST or None)
    if request.method == "POST":
        if not address_allowed(request, scope="signup_ip") or not address_allowed(request):
            return HttpResponse(TOO_MANY, status=429, content_type="text/plain")
        if form.is_valid():
            user = accounts.contributor_sign_up(
                username=form.cleaned_data["username"],
                email=form.cleaned_data.get("email") or "",
                password=form.cleaned_data["password1"],
            )
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, "Welcome! Create an API token below, then run `nvmedb-client login`.")
            return redirect("submissions:profile")
    return render(request, "registration/signup.html", {"form": form})


def _profile(request: HttpRequest, *, new_token: str = "", status: int = 200, **forms) -> HttpResponse:
    # a fresh challenge on every render: one the contributor let expire is replaced by reloading the page
    challenge = key_registration.challenge_issue(user=request.user)["challenge"]
    key_form = forms.get("key_form")
    if key_form is None or not key_form.is_bound:
        key_form = SigningKeyForm(initial={"challenge": challenge})
    else:
        key_form.data = key_form.data.copy()
        key_form.data["challenge"] = challenge
    context = {
        "tokens": selectors.api_tokens_of(request.user),
        "keys": selectors.signing_keys_of(request.user),
        "submissions": selectors.submissions_of(request.user)[:100],
        "new_token": new_token,
        "token_form": forms.get("token_form") or TokenCreateForm(),
        "key_form": key_form,
        "key_challenge": challenge,
        "server_url": request.build_absolute_uri("/"),
    }
    response = render(request, "submissions/profile.html", context, status=status)
    if new_token:
        response["Cache-Control"] = "no-store"  # the page holds a secret shown only once
    return response


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    return _profile(request)


@login_required
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    form = TokenCreateForm(request.POST)
    if not form.is_valid():
        return _profile(request, token_form=form, status=400)
    token, raw = accounts.api_token_create(user=request.user, name=form.cleaned_data["name"])
    messages.success(request, f"Token {token.prefix}… created. Copy it now: it is not shown again.")
    # Rendered, not redirected: the token must not be kept anywhere to show it after a redirect.
    return _profile(request, new_token=raw)


@login_required
@require_POST
def token_update(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(selectors.api_tokens_of(request.user), pk=token_id)
    form = TokenUpdateForm(request.POST)
    if form.is_valid():
        if form.cleaned_data["action"] == "revoke":
            accounts.api_token_revoke(token=token)
            messages.success(request, f"Token {token.prefix}… revoked.")
        else:
            accounts.api_token_rename(token=token, name=form.cleaned_data["name"])
            messages.success(request, f"Token {token.prefix}… renamed.")
    return redirect("submissions:profile")


@login_required
@require_POST
def key_add(request: HttpRequest) -> HttpResponse:
    form = SigningKeyForm(request.POST)
    if form.is_valid():
        try:
            key, created = key_registration.signing_key_register_proven(user=request.user, **form.cleaned_data)
        except (keys.InvalidPublicKey, keys.KeyOfAnotherAccount) as exc:
            form.add_error("public_key", str(exc))
        except key_registration.InvalidProof as exc:
            form.add_error("signature", str(exc))
        else:
            messages.success(request, f"Signing key {key.fingerprint} {'added' if created else 'was already here'}.")
            return redirect("submissions:profile")
    return _profile(request, key_form=form, status=400)


@login_required
@require_POST
def key_revoke(request: HttpRequest, key_id: int) -> HttpResponse:
    key = get_object_or_404(selectors.signing_keys_of(request.user), pk=key_id)
    keys.signing_key_revoke(key=key)
    messages.success(request, f"Signing key {key.fingerprint} revoked: bundles it signs are no longer accepted.")
    return redirect("submissions:profile")


def _upload_page(request: HttpRequest, form: UploadForm, *, status: int = 200, error: str = "") -> HttpResponse:
    limit = units.size_both(settings.NVMEDB_MAX_BUNDLE_BYTES)
    context = {"form": form, "limit": limit, "error": error}
    return render(request, "submissions/upload.html", context, status=status)


def _too_large(request: HttpRequest) -> HttpResponse:
    error = str(BundleTooLarge(settings.NVMEDB_MAX_BUNDLE_BYTES))
    return _upload_page(request, UploadForm(), status=413, error=error)


@csrf_protect
def _upload(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _upload_page(request, UploadForm())
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _upload_page(request, form, status=400)
    upload = form.cleaned_data["bundle"]
    try:
        submission, created = receiving.submission_create(
            uploader=request.user, stream=upload, original_name=upload.name
        )
    except (receiving.NotGzip, receiving.EmptyUpload) as exc:
        form.add_error("bundle", str(exc))
        return _upload_page(request, form, status=400)
    if not created:
        messages.info(request, "You had already sent this exact bundle; here is that submission.")
    return redirect("submissions:detail", submission_id=submission.pk)


# The CSRF check reads the form, so it must run after the size-limited upload handler is installed.
@csrf_exempt
@login_required
def upload(request: HttpRequest) -> HttpResponse:
    if request.method == "POST" and not upload_allowed(request):
        return HttpResponse(TOO_MANY_UPLOADS, status=429, content_type="text/plain")
    limit = settings.NVMEDB_MAX_BUNDLE_BYTES
    length = request.META.get("CONTENT_LENGTH") or "0"
    if request.method == "POST" and length.isdigit() and int(length) > limit + MULTIPART_OVERHEAD_BYTES:
        return _too_large(request)
    request.upload_handlers = [LimitedTemporaryFileUploadHandler(request, limit=limit)]
    try:
        return _upload(request)
    except BundleTooLarge:
        return _too_large(request)


def detail(request: HttpRequest, submission_id) -> HttpResponse:
    found = selectors.submission_for_viewer(submission_id=submission_id, viewer=request.user)
    if found is None:
        raise Http404("No submission with this id is visible to you.")
    submission, visibility = found
    is_owner = visibility is Visibility.OWNER and submission.uploader_id == request.user.pk
    context = {
        "submission": submission,
        "visibility": visibility.value,
        "is_owner": is_owner,
        "events": submission.events.all() if visibility is Visibility.OWNER else [],
        "can_withdraw": is_owner and submission.status != SubmissionStatus.WITHDRAWN,
        "in_progress": not submission.is_final,
    }
    if visibility is not Visibility.TOMBSTONE:
        is_public = submission.status == SubmissionStatus.PUBLISHED and not submission.hidden
        viewer_id = request.user.pk if request.user.is_authenticated else None
        owner_view = visibility is Visibility.OWNER
        context.update(
            hooks.submission_page.call(
                submission=submission, with_files=is_public, viewer_id=viewer_id, owner_view=owner_view
            )
        )
        context["explanation"] = hooks.explain.call(submission)
    if request.user.is_staff:  # the moderation log, for staff only
        context["decisions"] = submission.moderation_decisions.all()
    return render(request, "submissions/detail.html", context)


@login_required
@require_POST
def withdraw(request: HttpRequest, submission_id) -> HttpResponse:
    submission = get_object_or_404(selectors.submissions_of(request.user), pk=submission_id)
    moderation.submission_withdraw(submission=submission, by=request.user)
    messages.success(request, "Submission withdrawn: it is gone from pages and future dataset releases.")
    return redirect("submissions:detail", submission_id=submission.pk)
