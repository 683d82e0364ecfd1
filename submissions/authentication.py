"""`Authorization: Token <token>` checked against the stored SHA-256 of each token."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from submissions import accounts, selectors
from submissions.throttles import FailedAuthThrottle


class HashedTokenAuthentication(BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        failures = FailedAuthThrottle()
        # An address over the limit (a guesser, or a shared NAT address where someone else guessed) still gets in
        # with a valid token; anything else from it is refused without saying why the token was wrong.
        blocked = failures.blocked(request)
        token, problem = self._token(parts)
        if token is None:
            failures.record_failure(request)
            if blocked:
                raise self._throttled(failures, request)
            raise exceptions.AuthenticationFailed(problem)
        if token.revoked_at is not None or not token.user.is_active:
            if blocked:
                raise self._throttled(failures, request)
            if token.revoked_at is not None:
                raise exceptions.AuthenticationFailed(
                    "This API token was revoked; create a new one on your profile page and run nvmedb-client login."
                )
            raise exceptions.AuthenticationFailed("The account of this API token is disabled.")
        accounts.api_token_touch(token=token)
        return token.user, token

    @staticmethod
    def _token(parts: list[bytes]):
        """(the stored token `parts` name, None) or (None, why there is none)."""
        if len(parts) != 2:
            return None, "Invalid Authorization header: use 'Authorization: Token <token>'."
        try:
            raw = parts[1].decode("ascii")
        except UnicodeDecodeError:
            return None, "Invalid API token: it must be plain ASCII."
        token = selectors.api_token_by_raw(raw)
        return (token, None) if token is not None else (None, "Invalid API token: no account has this token.")

    @staticmethod
    def _throttled(failures: FailedAuthThrottle, request) -> exceptions.Throttled:
        return exceptions.Throttled(
            wait=failures.retry_after(request),
            detail="Too many invalid API tokens were sent from your address; wait before trying again.",
        )

    def authenticate_header(self, request) -> str:
        # Makes DRF answer 401 (not 403) when credentials are missing or wrong.
        return self.keyword


class HashedTokenScheme(OpenApiAuthenticationExtension):
    target_class = "submissions.authentication.HashedTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema) -> dict:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <your API token>`; create one on your profile page.",
        }
