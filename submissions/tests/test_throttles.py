"""Per-address limits key on the real client address (client_ip): a spoofed X-Forwarded-For never escapes them, on
sign-up, sign-in, the admin's sign-in, the HTML upload form, API uploads, and invalid API tokens."""

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, RequestFactory

from submissions import services
from submissions.models import Submission
from submissions.tests.conftest import api_client
from submissions.throttles import address_key, client_ip

CLIENT = "203.0.113.7"  # the real client
PROXY = "10.0.0.2"  # our own reverse proxy, which appends the address it received the request from


def spoofed(i: int, *, behind_proxy: bool) -> dict:
    """Request headers of a client that claims a new address every time."""
    fake = f"198.51.100.{i % 250}, 192.0.2.{i % 250}"
    if behind_proxy:
        return {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": f"{fake}, {CLIENT}"}
    return {"REMOTE_ADDR": CLIENT, "HTTP_X_FORWARDED_FOR": fake}


@pytest.fixture
def rates(settings):
    def set_rates(**scopes):
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **scopes},
        }

    return set_rates


@pytest.fixture(params=[False, True], ids=["direct", "behind-one-proxy"])
def behind_proxy(request, settings):
    settings.NVMEDB_TRUSTED_PROXY_COUNT = 1 if request.param else 0
    return request.param


# --- client_ip -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "proxies, forwarded, expected",
    [
        (0, "198.51.100.1", "192.0.2.99"),  # no trusted proxy: the header is ignored
        (1, "198.51.100.1, 203.0.113.7", "203.0.113.7"),  # what our proxy appended
        (2, "198.51.100.1, 203.0.113.7, 10.0.0.1", "203.0.113.7"),
        (2, "203.0.113.7", "192.0.2.99"),  # fewer entries than proxies: not through our proxies; never the header
        (1, "198.51.100.1, not-an-address", "192.0.2.99"),
        (1, "", "192.0.2.99"),
    ],
)
def test_client_ip_reads_only_what_trusted_proxies_wrote(settings, proxies, forwarded, expected):
    settings.NVMEDB_TRUSTED_PROXY_COUNT = proxies
    request = RequestFactory().get("/", REMOTE_ADDR="192.0.2.99", HTTP_X_FORWARDED_FOR=forwarded)
    assert client_ip(request) == expected


def test_an_ipv6_host_counts_as_its_whole_64():
    assert address_key("2001:db8:1:2::1") == address_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:203.0.113.7") == "203.0.113.7"


# --- the limits ----------------------------------------------------------------------------------------------------


def test_sign_ups_from_one_address_are_limited_whatever_it_claims(db, rates, behind_proxy):
    rates(signup_ip="2/hour")
    answers = []
    for i in range(3):
        form = {
            "username": f"new{i}",
            "password1": "a-long-passphrase-9",
            "password2": "a-long-passphrase-9",
            "accept_data_license": "on",
        }
        answers.append(Client().post("/signup/", form, **spoofed(i, behind_proxy=behind_proxy)).status_code)
    assert answers == [302, 302, 429]
    assert not _user_exists("new2")


def _user_exists(name: str) -> bool:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.filter(username=name).exists()


def test_sign_ups_from_different_real_addresses_each_have_their_own_limit(db, rates, settings):
    rates(signup_ip="1/hour")
    settings.NVMEDB_TRUSTED_PROXY_COUNT = 1
    for i in range(2):
        form = {
            "username": f"other{i}",
            "password1": "a-long-passphrase-9",
            "password2": "a-long-passphrase-9",
            "accept_data_license": "on",
        }
        response = Client().post("/signup/", form, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=f"203.0.113.{i + 1}")
        assert response.status_code == 302


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_sign_in_forms_are_limited_per_real_address(owner, rates, behind_proxy, url):
    rates(auth_ip="2/minute")
    wrong = {"username": "owner", "password": "wrong"}
    assert Client().get(url).status_code == 200
    answers = [Client().post(url, wrong, **spoofed(i, behind_proxy=behind_proxy)).status_code for i in range(3)]
    assert answers == [200, 200, 429]


def test_password_reset_and_its_confirmation_are_limited_like_sign_in(owner, rates, behind_proxy):
    rates(auth_ip="2/minute")
    reset = [
        Client().post(
            "/accounts/password_reset/", {"email": "owner@example.org"}, **spoofed(i, behind_proxy=behind_proxy)
        )
        for i in range(3)
    ]
    assert [r.status_code for r in reset] == [302, 302, 429]

    from django.core.cache import cache

    cache.clear()  # a fresh window
    guesses = [f"/accounts/reset/MQ/c0ffee-{i}/" for i in range(3)]  # guessed reset tokens
    answers = [Client().get(url, **spoofed(10 + i, behind_proxy=behind_proxy)) for i, url in enumerate(guesses)]
    assert [r.status_code for r in answers][-1] == 429
    assert all(r.status_code != 429 for r in answers[:2])


def test_the_upload_form_shares_the_upload_limit_per_real_address(owner, stranger, rates, behind_proxy):
    rates(upload_ip="2/hour", upload_user="100/hour")
    answers = []
    for i, user in enumerate([owner, stranger, stranger]):
        client = Client()
        client.force_login(user)
        body = gzip.compress(f"bundle {i}".encode())
        upload = SimpleUploadedFile("x.nvmedb.tar.gz", body, content_type="application/gzip")
        answers.append(
            client.post("/submissions/upload/", {"bundle": upload}, **spoofed(i, behind_proxy=behind_proxy)).status_code
        )
    assert answers == [302, 302, 429]
    assert Submission.objects.count() == 2


def test_the_upload_form_shares_the_upload_limit_per_account(owner, rates):
    rates(upload_ip="100/hour", upload_user="1/hour")
    client = Client()
    client.force_login(owner)
    api = api_client(services.api_token_create(user=owner)[1])
    assert (
        api.post("/api/v1/submissions/", data=gzip.compress(b"a"), content_type="application/gzip").status_code == 202
    )
    body = SimpleUploadedFile("x.nvmedb.tar.gz", gzip.compress(b"b"), content_type="application/gzip")
    assert client.post("/submissions/upload/", {"bundle": body}).status_code == 429


def test_api_uploads_are_limited_per_real_address(owner_token, stranger_token, rates, behind_proxy):
    rates(upload_ip="2/hour", upload_user="100/hour")
    answers = []
    for i, token in enumerate([owner_token, stranger_token, stranger_token]):
        response = api_client(token).post(
            "/api/v1/submissions/",
            data=gzip.compress(f"bundle {i}".encode()),
            content_type="application/gzip",
            **spoofed(i, behind_proxy=behind_proxy),
        )
        answers.append(response.status_code)
    assert answers == [202, 202, 429]


def test_invalid_api_tokens_lock_the_real_address_out_but_not_a_valid_token(owner, owner_token, rates, behind_proxy):
    """A shared address (NAT) where someone guessed: guesses and any other invalid token get 429 without a reason,
    the owner's valid token still works, and a revoked one is refused like a guess."""
    rates(auth_failed_ip="3/hour")
    for i in range(3):
        response = api_client(f"nvmedb_guess-{i}").get("/api/v1/me/", **spoofed(i, behind_proxy=behind_proxy))
        assert response.status_code == 401
    locked = api_client("nvmedb_guess-4").get("/api/v1/me/", **spoofed(99, behind_proxy=behind_proxy))
    assert locked.status_code == 429
    assert locked.json()["code"] == "throttled"
    assert "invalid API tokens" in locked.json()["detail"]
    assert int(locked["Retry-After"]) > 0

    assert api_client(owner_token).get("/api/v1/me/", **spoofed(99, behind_proxy=behind_proxy)).status_code == 200

    revoked, revoked_raw = services.api_token_create(user=owner, name="old")
    services.api_token_revoke(token=revoked)
    refused = api_client(revoked_raw).get("/api/v1/me/", **spoofed(99, behind_proxy=behind_proxy))
    assert refused.status_code == 429 and "revoked" not in refused.json()["detail"]

    elsewhere = (
        {"REMOTE_ADDR": "192.0.2.50"}
        if not behind_proxy
        else {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": "192.0.2.50"}
    )
    assert api_client("nvmedb_guess-5").get("/api/v1/me/", **elsewhere).status_code == 401, "the lock is per address"


def test_valid_tokens_never_count_as_failures(owner_token, rates):
    rates(auth_failed_ip="1/hour", auth_ip="100/minute", auth_user="100/hour")
    for _ in range(3):
        assert api_client(owner_token).get("/api/v1/me/").status_code == 200


def test_tokens_are_still_judged_when_the_failure_counter_is_unreachable(owner, owner_token):
    import io
    import socket

    from django.test import override_settings

    submission, _ = services.submission_create(uploader=owner, stream=io.BytesIO(gzip.compress(b"s")))
    with socket.socket() as sock:  # a port nothing listens on: the cache's connections are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    unreachable = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": f"redis://127.0.0.1:{port}/0"}
    }
    url = f"/api/v1/submissions/{submission.pk}/"
    with override_settings(CACHES=unreachable):
        assert api_client(owner_token).get(url).json()["status"] == "received"  # the owner's view: token accepted
        assert api_client("nvmedb_wrong").get(url).status_code == 401
