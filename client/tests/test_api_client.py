"""The client's HTTP boundary, `login` and `upload`, against a real site (pytest-django's live_server).

Network faults are injected by wrapping httpx's real transport: the one place the client talks to the network.
"""

import gzip
import json
import socket
import stat

import httpx
import pytest
from click.testing import CliRunner

from nvmedb_client.api import TRIAL_OUTCOME, ApiError, NvmedbApi, describe_outcome, upload_bundle
from nvmedb_client.cli import main
from nvmedb_client.config import ClientConfig, ConfigError, config_path, load_config, save_config
from nvmedb_client.signing import fingerprint, load_or_create_signing_key, public_key_bytes


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    directory = tmp_path / "config"
    monkeypatch.setenv("NVMEDB_CONFIG_DIR", str(directory))
    return directory


@pytest.fixture
def site(live_server, settings, tmp_path):
    """A running site with its own bundle storage, a contributor and their API token."""
    from django.core.cache import cache

    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp_path / "storage")}},
    }
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "client"}}
    cache.clear()
    from submissions import services

    user = services.user_create(username="alice", password="alice-password-1")
    _, token = services.api_token_create(user=user, name="client tests")
    return live_server.url, token, user


class FlakyTransport(httpx.BaseTransport):
    """The real transport; the first `failures` uploads (POSTs of a bundle) meet a faked fault instead: a connection
    error or the given status. `calls` counts uploads, `requests` every request."""

    def __init__(self, failures: int, *, status: int | None = None) -> None:
        self.failures = failures
        self.status = status
        self.calls = 0
        self.requests = 0
        self._real = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if request.method != "POST" or request.url.path != "/api/v1/submissions/":
            return self._real.handle_request(request)
        self.calls += 1
        if self.calls <= self.failures:
            if self.status is None:
                raise httpx.ConnectError("connection refused (injected)", request=request)
            request.read()
            return httpx.Response(self.status, json={"detail": "try again (injected)"}, request=request)
        return self._real.handle_request(request)

    def close(self) -> None:
        self._real.close()


def gz_file(tmp_path, text="not a bundle") -> "object":
    path = tmp_path / "thing.nvmedb.tar.gz"
    path.write_bytes(gzip.compress(text.encode(), mtime=0))
    return path


def test_config_is_saved_readable_only_by_its_owner(config_dir):
    path = save_config(ClientConfig(server="https://example.org", token="nvmedb_secret"))
    assert path == config_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_config() == ClientConfig(server="https://example.org", token="nvmedb_secret")


def test_a_broken_config_file_is_reported_with_what_to_do(config_dir):
    config_dir.mkdir()
    config_path().write_text("{not json")
    with pytest.raises(ConfigError, match="run `nvmedb-client login`"):
        load_config()


def test_login_checks_the_token_saves_it_and_registers_the_signing_key(site, config_dir):
    from submissions.models import SigningKey

    server, token, user = site
    result = CliRunner().invoke(main, ["login", "--server", server, "--token", token, "--accept-license"])
    assert result.exit_code == 0, result.output
    assert "as alice" in result.output
    saved = json.loads(config_path().read_text())
    assert saved == {"server": server, "token": token}
    assert stat.S_IMODE(config_path().stat().st_mode) == 0o600
    public = public_key_bytes(load_or_create_signing_key())
    key = SigningKey.objects.get()
    assert key.user == user
    assert key.fingerprint == fingerprint(public)
    assert fingerprint(public) in result.output
    again = CliRunner().invoke(main, ["login", "--server", server, "--token", token], input="y\n")
    assert again.exit_code == 0, again.output
    assert SigningKey.objects.count() == 1


def test_login_with_a_wrong_token_saves_nothing(site, config_dir):
    server, _, _ = site
    result = CliRunner().invoke(main, ["login", "--server", server, "--token", "nvmedb_wrong", "--accept-license"])
    assert result.exit_code == 1
    assert "refused the token" in result.output
    assert not config_path().exists()


def test_upload_without_login_says_what_to_do(tmp_path, config_dir):
    result = CliRunner().invoke(main, ["upload", str(gz_file(tmp_path))])
    assert result.exit_code == 1
    assert "nvmedb-client login --server URL" in result.output


def test_upload_prints_the_submission_url(site, tmp_path, config_dir):
    from submissions.models import Submission

    server, token, user = site
    save_config(ClientConfig(server=server, token=token))
    bundle = gz_file(tmp_path)
    result = CliRunner().invoke(main, ["upload", str(bundle)])
    assert result.exit_code == 0, result.output
    submission = Submission.objects.get()
    assert submission.uploader == user
    assert f"{server}/submissions/{submission.pk}/" in result.output
    assert submission.size == bundle.stat().st_size


def test_upload_retries_network_errors_with_growing_backoff(site, tmp_path):
    from submissions.models import Submission

    server, token, _ = site
    sleeps: list[float] = []
    transport = FlakyTransport(2)
    api = NvmedbApi(server, token, transport=transport, sleep=sleeps.append, backoff_s=1.0)
    submission, created = api.upload(gz_file(tmp_path))
    assert created
    assert transport.calls == 3
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0
    assert Submission.objects.get().pk.hex == submission["id"].replace("-", "")


def test_upload_retries_server_errors_and_the_site_keeps_one_submission(site, tmp_path):
    from submissions.models import Submission

    server, token, _ = site
    transport = FlakyTransport(1, status=503)
    bundle = gz_file(tmp_path)
    with NvmedbApi(server, token, transport=transport, sleep=lambda s: None) as api:
        _, created = api.upload(bundle)
        assert created
        # The answer to a retried upload may be lost too: sending again returns the same submission.
        again, created_again = api.upload(bundle)
    assert not created_again
    assert transport.calls == 3
    assert Submission.objects.count() == 1
    assert again["id"] == str(Submission.objects.get().pk)


def test_upload_gives_up_after_its_retries(site, tmp_path):
    server, token, _ = site
    transport = FlakyTransport(100)
    api = NvmedbApi(server, token, transport=transport, retries=2, sleep=lambda s: None)
    with pytest.raises(ApiError, match="after 3 attempts"):
        api.upload(gz_file(tmp_path))
    assert transport.calls == 3


def test_an_unreachable_site_is_reported_after_the_retries(tmp_path):
    sleeps: list[float] = []
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again when the block ends: nobody listens there
    api = NvmedbApi(f"http://127.0.0.1:{port}", "t", retries=2, sleep=sleeps.append)
    with pytest.raises(ApiError, match=f"Could not reach http://127.0.0.1:{port} after 3 attempts"):
        api.upload(gz_file(tmp_path))
    assert len(sleeps) == 2


def test_a_client_error_is_not_retried(site, tmp_path):
    server, _, _ = site
    transport = FlakyTransport(0)
    api = NvmedbApi(server, "nvmedb_wrong", transport=transport, sleep=lambda s: None)
    with pytest.raises(ApiError) as caught:
        api.upload(gz_file(tmp_path))
    assert caught.value.status_code == 401
    assert transport.requests == 1, "a 401 is an answer, not a fault to retry"


def test_upload_bundle_reports_a_refused_body_and_fails(site, tmp_path):
    server, token, _ = site
    path = tmp_path / "plain.nvmedb.tar.gz"
    path.write_bytes(b"plain text, not gzip")
    lines: list[str] = []
    code = upload_bundle(path, server=None, wait=True, echo=lines.append, api=NvmedbApi(server, token))
    assert code == 1
    assert "not_an_archive" not in lines[-1] and "not a gzip-compressed tar archive" in lines[-1]


def test_describe_outcome_names_the_rule():
    rejected = {
        "status": "rejected",
        "report": {"rule": "hash_mismatch", "summary": "A file's SHA-256 does not match the manifest.", "detail": "x"},
    }
    assert describe_outcome(rejected) == "rejected: A file's SHA-256 does not match the manifest. (hash_mismatch) x"
    assert describe_outcome({"status": "published", "report": {}}) == "published"
    held = {"status": "held", "report": {"reasons": ["needs a look"]}}
    assert describe_outcome(held) == "held: needs a look"


def test_describe_outcome_says_a_published_trial_is_private():
    trial = {"status": "published", "trial": True, "report": {}}
    assert describe_outcome(trial) == "private trial run: yours alone, never public"
    assert describe_outcome({**trial, "trial": False}) == "published"


def login(server: str, token: str) -> None:
    result = CliRunner().invoke(main, ["login", "--server", server, "--token", token, "--accept-license"])
    assert result.exit_code == 0, result.output


def test_upload_wait_names_the_rule_a_tampered_bundle_broke(site, tmp_path, shared_samples):
    import bundle_factory

    server, token, _ = site
    login(server, token)
    bundle = bundle_factory.make_bundle(
        tmp_path,
        fio_samples=bundle_factory.default_fio_samples(shared_samples),
        signing_key=load_or_create_signing_key(),
        tamper="changed_byte",
    )
    result = CliRunner().invoke(main, ["upload", str(bundle), "--wait"])
    assert result.exit_code == 1, result.output
    *_, outcome, url = result.output.strip().splitlines()
    assert outcome.startswith("rejected: A file's SHA-256 does not match the manifest")
    assert "(hash_mismatch)" in outcome
    assert url.startswith(server) and url.endswith("/")


def test_upload_wait_ends_with_the_final_status_of_a_good_bundle(site, tmp_path, shared_samples):
    import bundle_factory
    from submissions.models import Submission

    server, token, _ = site
    login(server, token)
    bundle = bundle_factory.make_bundle(
        tmp_path,
        fio_samples=bundle_factory.default_fio_samples(shared_samples),
        signing_key=load_or_create_signing_key(),
    )
    result = CliRunner().invoke(main, ["upload", str(bundle), "--wait"])
    submission = Submission.objects.get()
    assert submission.signing_key is not None, "the key login registered is the one that signed"
    lines = result.output.strip().splitlines()
    assert lines[-1] == f"{server}/submissions/{submission.pk}/", "the submission's page comes last"
    # the factory's bundle is a quick run on a file: a trial, published to its contributor alone
    assert submission.status == "published", result.output
    assert TRIAL_OUTCOME in lines, result.output
    assert result.exit_code == 0, result.output
    # a file is no unit of any drive model: nothing places it among units or claims its conditions
    assert not any(line.startswith("Among the units of ") for line in lines), result.output
    assert "compare its conditions" not in result.output


def test_wait_follows_the_status_until_it_is_final(site):
    import io

    from submissions import services

    server, token, user = site
    submission, _ = services.submission_create(uploader=user, stream=io.BytesIO(gzip.compress(b"x", mtime=0)))
    # Eager validation already finished it; put it back in a worker's hands to watch it change.
    from submissions.models import Submission

    Submission.objects.filter(pk=submission.pk).update(status="validating", report={})
    changes: list[str] = []

    def staff_steps_in(seconds: float) -> None:
        services.submission_reject(submission=submission, reason="duplicate drive", by=user)

    with NvmedbApi(server, token, sleep=staff_steps_in) as api:
        start = api.submission(f"/api/v1/submissions/{submission.pk}/")
        assert start["status"] == "validating"
        final = api.wait(start, on_status=lambda s: changes.append(s["status"]))
    assert changes == ["rejected"]
    assert final["report"]["rule"] == "moderation"
    assert describe_outcome(final) == "rejected: Staff rejected this submission. (moderation) duplicate drive"


def test_upload_refuses_a_bundle_larger_than_the_site_accepts_without_sending_it(site, tmp_path, settings):
    from submissions.models import Submission

    server, token, _ = site
    settings.NVMEDB_MAX_BUNDLE_BYTES = 10
    transport = FlakyTransport(0)
    api = NvmedbApi(server, token, transport=transport, sleep=lambda s: None)
    with api, pytest.raises(ApiError, match="accepts bundles of at most 10 bytes") as caught:
        api.upload(gz_file(tmp_path))
    assert caught.value.code == "too_large"
    assert transport.calls == 0, "the bundle was never sent"
    assert Submission.objects.count() == 0


def test_login_shows_the_data_licence_and_records_the_acceptance(site, config_dir):
    from submissions.models import DataLicenseAcceptance

    server, token, user = site
    declined = CliRunner().invoke(main, ["login", "--server", server, "--token", token], input="n\n")
    assert declined.exit_code == 1
    assert "CC-BY-4.0" in declined.output and "MIT" in declined.output and "Nothing was saved" in declined.output
    assert not config_path().exists() and not DataLicenseAcceptance.objects.exists()
    accepted = CliRunner().invoke(main, ["login", "--server", server, "--token", token], input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert "Accepted CC-BY-4.0" in accepted.output
    row = DataLicenseAcceptance.objects.get()
    assert (row.user, row.license, row.via) == (user, "CC-BY-4.0", "client") and row.accepted_at is not None


def test_the_site_accepts_only_its_own_data_licence(site):
    server, token, _ = site
    with NvmedbApi(server, token) as api, pytest.raises(ApiError, match="published under CC-BY-4.0, not CC0-1.0"):
        api.accept_data_license("CC0-1.0")


def test_the_client_prints_the_explanation_the_api_answers():
    """The frozen API answer for a downtrained unit among normal ones, as `--wait` prints it: its figure at the
    factor model's reference conditions with its interval, and the model's line for its link."""
    from pathlib import Path

    from nvmedb_client.api import describe_explanation

    frozen = Path(__file__).parents[2] / "submissions" / "tests" / "responses" / "submission_explained.json"
    lines = describe_explanation(json.loads(frozen.read_text()))
    assert lines == [
        "Among the units of Acme Rocket 1TB:",
        "  4 KiB random read: 850k IOPS, better than 0% of the 5 other units; at reference conditions 1.00M IOPS "
        "[976k IOPS, 1.02M IOPS] (gap −15%)",
        "What explains a gap:",
        "  - Link below capability: Its link trained at 8 GT/s x4 though the drive and its slot can do 16 GT/s x4.",
        "      4 KiB random read −15%; link Gen3 x4, below capability accounts for −15% [−17, −13] (1 unit — indicative)",
        "Not recorded for this unit: temperature, wear, over-provisioning.",
    ]
    assert describe_explanation({"status": "rejected", "explanation": None}) == []
    # a condition that differs with no effect beyond the noise is said to differ, never to match
    differs = {"drive_model": "Acme Rocket 1TB", "population_units": 6, "conditions_compared": ["PCIe link", "firmware"],
               "conditions_matching": ["PCIe link"], "conditions_without_effect": ["firmware"]}  # fmt: skip
    assert describe_explanation({"explanation": differs})[1:] == [
        "Its PCIe link matches the other units'.",
        "Its firmware differs from the other units', with no effect on its figures the factor model separates from "
        "the noise.",
    ]


@pytest.mark.fio
def test_run_upload_wait_ends_with_the_private_trial_and_the_submission_page(site, tmp_path, settings):
    """A real quick IOPS run on a file (real fio), uploaded by a new contributor to a live site that reviews their
    first submissions (its default), and followed to the end: a trial is published to them alone, never held."""
    import os
    import subprocess
    import sys

    from submissions.models import Submission

    settings.NVMEDB_REVIEW_FIRST_N = 3
    server, token, _ = site
    login(server, token)
    command = [sys.executable, "-c", "from nvmedb_client.cli import main; main()", "run", "--target-file",
               str(tmp_path / "target.img"), "--size", "64MiB", "--profile", "quick", "--tests", "iops",
               "--out", str(tmp_path / "out"), "--upload", "--wait"]  # fmt: skip
    result = subprocess.run(
        command, env={**os.environ, "NVMEDB_QUICK_CELL_S": "1"}, capture_output=True, text=True, timeout=900
    )
    submission = Submission.objects.get()
    lines = result.stdout.strip().splitlines()
    assert submission.status == "published", result.stdout + result.stderr[-2000:]
    assert result.returncode == 0
    assert lines[-2:] == ["private trial run: yours alone, never public", f"{server}/submissions/{submission.pk}/"]
    # a file is no unit of any drive: nothing places it among units or calls it a drive
    assert "held" not in result.stdout and "review" not in result.stdout
    assert "Unknown drive" not in result.stdout and "nothing amiss" not in result.stdout
