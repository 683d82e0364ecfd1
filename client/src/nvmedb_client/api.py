"""The one HTTP boundary of the client: every call to an nvmedb site goes through `NvmedbApi`.

Uploads are safe to retry: the site answers a bundle it already has with the existing submission.
"""

import base64
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nvmedb_client import __version__, units
from nvmedb_client.cli import exit_codes
from nvmedb_client.config import ClientConfig, ConfigError, load_config, normalize_server
from nvmedb_client.signing import public_key_bytes, registration_proof

FINAL_STATUSES = frozenset({"published", "held", "rejected", "withdrawn"})
# A trial (a file target or the quick profile) is published to its contributor alone: the site's answer says `trial`.
TRIAL_OUTCOME = "private trial run: yours alone, never public"
CHUNK_BYTES = 1024 * 1024
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class ApiError(Exception):
    """The site answered with an error (or could not be reached); `message` is a sentence for the user."""

    def __init__(self, message: str, *, status_code: int | None = None, code: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.code = code


def _error_from(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    detail = body.get("detail") if isinstance(body, dict) else None
    code = body.get("code", "") if isinstance(body, dict) else ""
    text = detail or response.text[:300] or response.reason_phrase
    return ApiError(f"The site answered {response.status_code}: {text}", status_code=response.status_code, code=code)


class NvmedbApi:
    def __init__(
        self,
        server: str,
        token: str | None = None,
        *,
        retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.server = normalize_server(server)
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._sleep = sleep
        headers = {"User-Agent": f"nvmedb-client/{__version__}", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Token {token}"
        self._http = httpx.Client(
            base_url=self.server, headers=headers, timeout=httpx.Timeout(timeout_s, connect=10.0), transport=transport
        )

    def __enter__(self) -> "NvmedbApi":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        retry_after = response.headers.get("Retry-After") if response is not None else None
        if retry_after and retry_after.isdigit():
            return min(float(retry_after), self.max_backoff_s)
        return min(self.backoff_s * 2**attempt, self.max_backoff_s) * random.uniform(0.5, 1.0)

    def _request(
        self, method: str, url: str, *, make_body: Callable[[], dict] | None = None, **kwargs
    ) -> httpx.Response:
        """Sends with retries on network errors and 5xx/429; returns the first other answer."""
        last_error: Exception | None = None
        for attempt in range(self.retries + 1):
            response = None
            try:
                extra = make_body() if make_body else {}
                response = self._http.request(method, url, **kwargs, **extra)
            except httpx.TransportError as exc:
                last_error = exc
            else:
                if response.status_code not in RETRY_STATUSES:
                    return response
                last_error = _error_from(response)
            if attempt < self.retries:
                self._sleep(self._delay(attempt, response))
        if isinstance(last_error, ApiError):
            raise last_error
        raise ApiError(f"Could not reach {self.server} after {self.retries + 1} attempts: {last_error}")

    def _json(self, response: httpx.Response, *, ok: tuple[int, ...] = (200,)) -> dict:
        if response.status_code not in ok:
            raise _error_from(response)
        try:
            return response.json()
        except ValueError:
            raise ApiError(f"The site answered {response.status_code} with something that is not JSON.") from None

    def me(self) -> dict:
        return self._json(self._request("GET", "/api/v1/me/"))

    def accept_data_license(self, license: str) -> dict:
        return self._json(self._request("POST", "/api/v1/me/data-license/", json={"license": license}), ok=(201,))

    def register_key(self, key: Ed25519PrivateKey, *, account: str, name: str = "") -> dict:
        """Registers the public half of `key`, with the proof that this client holds the private half: the site's
        challenge and the account, signed by `key` (nvmedb_client.signing.registration_statement)."""
        challenge = self._json(self._request("GET", "/api/v1/keys/challenge/"))["challenge"]
        body = {
            "public_key": base64.b64encode(public_key_bytes(key)).decode(),
            "name": name,
            "challenge": challenge,
            "signature": registration_proof(key, account=account, challenge=challenge),
        }
        return self._json(self._request("POST", "/api/v1/keys/", json=body), ok=(200, 201))

    def upload(self, bundle_path: Path) -> tuple[dict, bool]:
        """Streams the bundle; returns (submission, created). created is False when the site already had it."""
        size = bundle_path.stat().st_size
        # A site refuses an oversized body before reading it, which the sender only sees as a broken connection:
        # ask for the limit first, so the answer is a sentence instead of retries.
        limit = self.me().get("max_bundle_bytes")
        if isinstance(limit, int) and size > limit:
            raise ApiError(
                f"{bundle_path.name} is {size} bytes; {self.server} accepts bundles of at most {limit} bytes.",
                code="too_large",
            )

        def body() -> dict:
            def chunks() -> Iterator[bytes]:
                with bundle_path.open("rb") as handle:
                    while chunk := handle.read(CHUNK_BYTES):
                        yield chunk

            # An explicit Content-Length keeps the body streamed but not chunked, so the site can refuse it early.
            return {
                "content": chunks(),
                "headers": {
                    "Content-Type": "application/octet-stream",
                    "Content-Length": str(size),
                    "X-Bundle-Filename": bundle_path.name,
                },
            }

        response = self._request("POST", "/api/v1/submissions/", make_body=body)
        data = self._json(response, ok=(200, 202))
        return data, response.status_code == 202

    def submission(self, url: str) -> dict:
        return self._json(self._request("GET", url))

    def wait(
        self,
        submission: dict,
        *,
        poll_s: float = 2.0,
        timeout_s: float = 3600.0,
        on_status: Callable[[dict], None] | None = None,
    ) -> dict:
        """Follows a submission until it reaches a final status; calls on_status at every change."""
        deadline = time.monotonic() + timeout_s
        seen = submission.get("status")
        while submission.get("status") not in FINAL_STATUSES:
            if time.monotonic() > deadline:
                raise ApiError(
                    f"Gave up waiting after {timeout_s:.0f} s; the submission is {seen}: {submission['url']}"
                )
            self._sleep(poll_s)
            submission = self.submission(submission["url"])
            if submission.get("status") != seen:
                seen = submission.get("status")
                if on_status:
                    on_status(submission)
        return submission


def describe_outcome(submission: dict) -> str:
    """`published` (TRIAL_OUTCOME for a trial), or `rejected: <rule in plain words> (<rule>) <detail>`."""
    status = submission.get("status", "unknown")
    report = submission.get("report") or {}
    if status == "published":
        return TRIAL_OUTCOME if submission.get("trial") else "published"
    parts = [status]
    reason = report.get("summary") or ""
    if report.get("rule"):
        reason = f"{reason} ({report['rule']})".strip()
    if report.get("detail"):
        reason = f"{reason} {report['detail']}".strip()
    if not reason and report.get("reasons"):
        reason = "; ".join(report["reasons"])
    if reason:
        parts.append(reason)
    return ": ".join(parts)


def describe_explanation(submission: dict) -> list[str]:
    """Where the unit sits among its model's units, what it would do at the factor model's reference conditions
    (with its interval) and the factors that account for a gap, as lines for the terminal."""
    explanation = submission.get("explanation")
    if not explanation:
        return []
    lines = [f"Among the units of {explanation.get('drive_model', 'this drive model')}:"]
    for metric in explanation.get("metrics") or []:
        value = units.by_unit(metric.get("unit", ""), metric.get("value"))
        line = f"  {metric.get('label', metric.get('key'))}: {value}, {metric.get('position', '')}"
        normalized = metric.get("normalized")
        if normalized:
            gap = metric.get("gap_display")
            line += f"; at reference conditions {normalized.get('display')}" + (f" (gap {gap})" if gap else "")
        lines.append(line)
    if explanation.get("model_note"):
        lines.append(explanation["model_note"])
    factors = explanation.get("factors") or []
    if factors:
        lines.append("What explains a gap:")
        for factor in factors:
            lines.append(f"  - {factor.get('label')}: {factor.get('reason')}")
            lines.extend(f"      {line}" for line in factor.get("lines") or [])
    elif (explanation.get("population_units") or 0) <= 1:
        lines.append("No other unit of this model to compare its conditions with.")
    elif explanation.get("conditions_compared"):
        # an older server answers no conditions_matching: every compared condition matched then
        matching = explanation.get("conditions_matching", explanation["conditions_compared"])
        without = explanation.get("conditions_without_effect")
        if matching:
            lead = "Its" if without else "Nothing on record sets this unit apart: its"
            verb = "matches" if len(matching) == 1 else "match"
            lines.append(f"{lead} {', '.join(matching)} {verb} the other units'.")
        if without:
            verb = "differs" if len(without) == 1 else "differ"
            lines.append(
                f"Its {', '.join(without)} {verb} from the other units', with no effect on its figures the factor "
                "model separates from the noise."
            )
    else:
        lines.append("No condition that could explain a gap is recorded for both this unit and another unit.")
    if explanation.get("conditions_unrecorded"):
        lines.append(f"Not recorded for this unit: {', '.join(explanation['conditions_unrecorded'])}.")
    return lines


def resolve_server_and_token(server: str | None, config: ClientConfig) -> tuple[str, str]:
    """The server to talk to and the token saved for it; raises ConfigError with what to do otherwise."""
    chosen = normalize_server(server) if server else config.server
    if not chosen:
        raise ConfigError("No server known: run `nvmedb-client login --server URL` first, or pass --server.")
    if not config.token or (config.server and normalize_server(config.server) != chosen):
        raise ConfigError(f"No API token saved for {chosen}: run `nvmedb-client login --server {chosen}` first.")
    return chosen, config.token


def upload_bundle(
    bundle_path: Path,
    *,
    server: str | None,
    wait: bool,
    echo: Callable[[str], None],
    api: NvmedbApi | None = None,
    poll_s: float = 2.0,
) -> int:
    """Uploads a bundle and prints where it went; with `wait`, follows it to the end. Returns the exit code:
    OK when accepted (or, with `wait`, published, a trial to its contributor alone), FAILURE otherwise. Used by
    `upload` and `run --upload`."""
    try:
        if api is None:
            chosen, token = resolve_server_and_token(server, load_config())
            api = NvmedbApi(chosen, token)
        with api:
            submission, created = api.upload(bundle_path)
            what = "Uploaded" if created else "The site already had this bundle:"
            echo(f"{what} {bundle_path.name} -> submission {submission['id']} ({submission['status']})")
            echo(submission.get("page_url") or submission["url"])
            if not wait:
                return exit_codes.OK
            final = api.wait(submission, poll_s=poll_s, on_status=lambda s: echo(f"status: {s['status']}"))
    except (ApiError, ConfigError) as exc:
        echo(f"Error: {exc}")
        return exit_codes.FAILURE
    except OSError as exc:
        echo(f"Error: cannot read {bundle_path}: {exc.strerror or exc}")
        return exit_codes.FAILURE
    echo(describe_outcome(final))
    for line in describe_explanation(final):
        echo(line)
    echo(final.get("page_url") or final["url"])
    return exit_codes.OK if final.get("status") == "published" else exit_codes.FAILURE
