"""The client's saved server URL and API token: `config.json` in the config directory, readable only by its owner."""

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from nvmedb_client.signing import config_dir

CONFIG_FILE = "config.json"


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class ClientConfig:
    server: str | None = None
    token: str | None = None


def _directory(directory: Path | None) -> Path:
    if directory is not None:
        return directory
    return config_dir()


def config_path(directory: Path | None = None) -> Path:
    return _directory(directory) / CONFIG_FILE


def normalize_server(url: str) -> str:
    url = url.strip()
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"The server URL must start with http:// or https://; got {url!r}.")
    return url.rstrip("/")


def load_config(directory: Path | None = None) -> ClientConfig:
    path = config_path(directory)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return ClientConfig()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"Cannot read {path}: {exc}. Fix or delete it, then run `nvmedb-client login`.") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object. Delete it and run `nvmedb-client login` again.")
    return ClientConfig(server=data.get("server") or None, token=data.get("token") or None)


def save_config(config: ClientConfig, directory: Path | None = None) -> Path:
    """Writes atomically with mode 0600: the token is a secret."""
    path = config_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=".config-", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(asdict(config), out, indent=2)
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
