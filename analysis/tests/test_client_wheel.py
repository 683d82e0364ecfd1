"""The site serves its own client wheel (/client/), and the home page shows the commands that install and use it.

The build script runs for real once per session (a few seconds: an sdist, then the wheel, with setuptools from the
package index); the view tests use a stand-in file with a wheel's name.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import httpx
import pytest

from browse import client_wheel
from conftest import REPO_ROOT

CLIENT_VERSION = re.search(r'^version = "(.+)"$', (REPO_ROOT / "client" / "pyproject.toml").read_text(), re.M)[1]
WHEEL = f"nvmedb_client-{CLIENT_VERSION}-py3-none-any.whl"
NOT_BUILT = "has not built its client wheel yet"


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory) -> Path:
    """scripts/build-client-wheel.sh, run as `make run` and the Docker image run it."""
    out = tmp_path_factory.mktemp("client-wheel")
    (out / "nvmedb_client-0.0.1-py3-none-any.whl").write_bytes(b"an older build")
    result = subprocess.run(
        ["bash", "scripts/build-client-wheel.sh", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHON": sys.executable},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == str(out / WHEEL)
    assert sorted(p.name for p in out.iterdir()) == [WHEEL]  # the older wheel and the build's leftovers are gone
    return out / WHEEL


@pytest.fixture
def wheel_dir(tmp_path, settings) -> Path:
    settings.NVMEDB_CLIENT_WHEEL_DIR = tmp_path / "client"
    return tmp_path / "client"


@pytest.fixture
def stand_in(wheel_dir) -> bytes:
    """A file with the client wheel's name (the view serves bytes; what they are does not matter to it)."""
    wheel_dir.mkdir()
    body = bytes(range(256)) * 1000
    (wheel_dir / WHEEL).write_bytes(body)
    return body


# --- the build script ------------------------------------------------------------------------------------------------


def test_the_build_script_makes_a_wheel_of_exactly_the_client_sources_that_pip_installs(built_wheel, tmp_path):
    sources = REPO_ROOT / "client" / "src"
    expected = {
        str(p.relative_to(sources))
        for p in sources.joinpath("nvmedb_client").rglob("*")
        if p.suffix in (".py", ".json") and "__pycache__" not in p.parts
    }
    with zipfile.ZipFile(built_wheel) as archive:
        packaged = {name for name in archive.namelist() if not name.startswith("nvmedb_client-")}
    assert packaged == expected  # nothing left over from an earlier build, nothing missing (the JSON schemas)
    target = tmp_path / "installed"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(target), str(built_wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (target / "nvmedb_client" / "cli" / "plan.py").is_file()
    assert (target / "bin" / "nvmedb-client").is_file()
    assert (target / f"nvmedb_client-{CLIENT_VERSION}.dist-info").is_dir()


# --- /client/ and /client/<wheel> -----------------------------------------------------------------------------------


def test_the_wheel_is_served_byte_for_byte_as_a_zip_attachment(client, stand_in):
    response = client.get(f"/client/{WHEEL}")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == stand_in
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Length"] == str(len(stand_in))
    assert response["Content-Disposition"] == f'attachment; filename="{WHEEL}"'


def test_the_index_lists_the_wheel_with_its_hash_for_pip(client, stand_in):
    response = client.get("/client/")
    assert response.status_code == 200
    page = response.content.decode()
    digest = hashlib.sha256(stand_in).hexdigest()
    assert f'href="/client/{WHEEL}#sha256={digest}"' in page  # what pip --find-links reads and checks
    assert f"pip install http://testserver/client/{WHEEL}" in page


@pytest.mark.parametrize(
    "path",
    [
        "/client/../nvmedb/settings/base.py",
        "/client/..%2fnvmedb%2fsettings%2fbase.py",
        "/client/%2e%2e%2f%2e%2e%2fnvmedb%2fsettings%2fbase.py",
        "/client/%2e%2e",
        "/client/..",
        "/client/.",
        "/client/secret.txt",
        "/client/.built",
        f"/client/nvmedb_client-{CLIENT_VERSION}.tar.gz",
        "/client/nvmedb_client-9.9.9-py3-none-any.whl",
        f"/client/{WHEEL.upper()}",
        f"/client/{WHEEL}%00",
        "/client/outside-py3-none-any.whl",
        "/client/nvmedb_client-6.6.6-py3-none-any.whl",  # a symlink out of the directory
    ],
)
def test_no_other_name_is_served(client, stand_in, wheel_dir, tmp_path, path):
    (wheel_dir / "secret.txt").write_text("SECRET")
    (wheel_dir / ".built").write_text("SECRET")
    (wheel_dir / f"nvmedb_client-{CLIENT_VERSION}.tar.gz").write_text("SECRET")
    (tmp_path / "outside.whl").write_text("SECRET")
    (wheel_dir / "nvmedb_client-6.6.6-py3-none-any.whl").symlink_to(tmp_path / "outside.whl")
    response = client.get(path)
    assert response.status_code == 404
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert b"SECRET" not in body and b"SECRET_KEY" not in body and stand_in[:1000] not in body
    if path.startswith("/client/") and "/" not in path.removeprefix("/client/").replace("%2f", "/"):
        assert f"This site serves only its client wheel: /client/{WHEEL}" in body.decode()


@pytest.mark.parametrize("path", ["/client/", f"/client/{WHEEL}"])
@pytest.mark.parametrize("exists", [False, True])
def test_without_a_built_wheel_both_urls_say_so(client, wheel_dir, path, exists):
    if exists:
        wheel_dir.mkdir()
        (wheel_dir / ".built").write_text("")
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert NOT_BUILT in response.content.decode()
    assert "scripts/build-client-wheel.sh" in response.content.decode()


def test_only_a_read_is_allowed(client, stand_in):
    assert client.post(f"/client/{WHEEL}").status_code == 405
    assert client.head(f"/client/{WHEEL}").status_code == 200


def test_the_newest_wheel_comes_first_when_an_older_one_is_left(stand_in, wheel_dir):
    (wheel_dir / "nvmedb_client-0.0.1-py3-none-any.whl").write_bytes(b"old")
    os.utime(wheel_dir / "nvmedb_client-0.0.1-py3-none-any.whl", (1, 1))
    assert [w.name for w in client_wheel.wheels()] == [WHEEL, "nvmedb_client-0.0.1-py3-none-any.whl"]
    assert client_wheel.current().version == CLIENT_VERSION


# --- the home page ---------------------------------------------------------------------------------------------------


def commands(page: str) -> dict[str, str]:
    blocks = re.findall(r'<pre><code id="(client-[a-z-]+)">(.*?)</code></pre>', page, re.S)
    return {name: html.unescape(text) for name, text in blocks}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("host", "secure", "site"),
    [("testserver", False, "http://testserver"), ("nvmedb.example.org", True, "https://nvmedb.example.org")],
)
def test_the_home_page_shows_install_login_and_runs_against_the_site_it_was_reached_at(
    client, stand_in, settings, host, secure, site
):
    settings.ALLOWED_HOSTS = ["testserver", "nvmedb.example.org"]
    page = client.get("/", HTTP_HOST=host, secure=secure).content.decode()
    shown = commands(page)
    assert f"pip install {site}/client/{WHEEL}" in shown["client-pip-install"].splitlines()
    assert shown["client-login"] == f"nvmedb-client login --server {site} --token <your token>"
    trial = shown["client-trial-run"]
    assert trial.startswith("nvmedb-client run --target-file ") and trial.endswith(" --upload --wait")
    device = shown["client-device-run"].splitlines()
    assert device[0].endswith(f"nvmedb-client login --server {site} --token <your token>")
    assert device[1].endswith("nvmedb-client run --device /dev/nvme0n1 --upload --wait")
    assert 'href="/profile/"' in page and "create_contributor" in page  # where the token comes from
    assert "pip install nvmedb-client" not in page  # no package index has it


@pytest.mark.django_db
def test_the_home_page_says_when_the_site_has_no_wheel(client, wheel_dir):
    page = client.get("/").content.decode()
    assert NOT_BUILT in page and "scripts/build-client-wheel.sh" in page
    assert "client-pip-install" not in page
    assert "nvmedb-client login --server http://testserver --token" in html.unescape(page)


# --- the newcomer's path, for real ------------------------------------------------------------------------------------


def test_a_fresh_venv_installs_the_wheel_from_the_command_on_the_live_home_page(
    live_server, transactional_db, built_wheel, settings, tmp_path
):
    settings.NVMEDB_CLIENT_WHEEL_DIR = built_wheel.parent
    page = httpx.get(live_server.url + "/", timeout=30).text
    (pip_line,) = [line for line in commands(page)["client-pip-install"].splitlines() if line.startswith("pip ")]
    assert pip_line == f"pip install {live_server.url}/client/{WHEEL}"
    venv = tmp_path / "venv"
    # a newcomer's shell: none of this checkout's PYTHONPATH (its client/src would count as installed) or settings
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NVMEDB_CONFIG_DIR": str(tmp_path / "config")}
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, env=env, timeout=300)
    # The command as shown, with --no-deps: the wheel comes from the live site; its dependencies would come from a
    # package index, which a test must not need. They are lent from this interpreter's site-packages instead (a .pth
    # line adds the directory at the end of sys.path; the .pth files in it, the editable client among them, are not
    # read, so the client imported is the one pip installed).
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), *pip_line.split()[1:], "--no-deps"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert f"Successfully installed nvmedb-client-{CLIENT_VERSION}" in installed.stdout, installed.stdout[-2000:]
    venv_site = Path(
        subprocess.check_output(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            text=True,
            env=env,
        ).strip()
    )
    (venv_site / "zz_lent_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import nvmedb_client; print(nvmedb_client.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert where.stdout.strip().startswith(str(venv_site)), where.stdout + where.stderr
    helped = subprocess.run(
        [str(venv / "bin" / "nvmedb-client"), "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert helped.returncode == 0, helped.stdout + helped.stderr
    for name in ("login", "plan", "run", "upload"):
        assert name in helped.stdout
    planned = subprocess.run(
        [str(venv / "bin" / "nvmedb-client"), "plan", "--target-file", str(tmp_path / "try.img"), "--size", "256MiB",
         "--profile", "quick"],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "estimated duration" in planned.stdout and not (tmp_path / "try.img").exists()


def test_the_readme_installs_the_wheel_the_build_makes():
    readme = (REPO_ROOT / "README.md").read_text()
    assert f"pip install http://127.0.0.1:8000/client/{WHEEL}\n" in readme  # bump it with client/pyproject.toml
