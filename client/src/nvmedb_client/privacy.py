"""What the client records about the machine and the target, so a bundle names no serial, user, host or address.

fio and nvme-cli still get a path that works; what goes into the bundle is the same thing named without what
identifies a person or a unit:
- a device by its kernel name (`/dev/nvme0n1`), resolved from whatever the user gave (a `/dev/disk/by-id/` link
  carries the model and serial number in its name), again at each session because kernel names change on reboot;
- a file target by its bare file name (its directory, e.g. `/home/<user>/`, is where fio runs, never recorded);
- lshw's output without IP addresses, MAC addresses and the host name (`lshw -sanitize`, then the same keys removed
  here in case the installed lshw leaves any).
The server serves a bundle's files only by allow-list (the known fields of files of a known kind) and scrubs what it
serves again (serials in id-ctrl and smart-log are needed there, hashed, for unit ids).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

LSHW_ARGS = ("lshw", "-json", "-sanitize")
REMOVED = "[REMOVED]"
NETWORK_CONFIGURATION_KEYS = frozenset({"ip", "ipv6", "ipaddress", "ipv4", "mac", "macaddress", "gateway", "netmask"})


def kernel_device(path: str) -> str:
    """`/dev/nvme0n1` for any link to it (`/dev/disk/by-id/nvme-Model_SERIAL`); the path itself when it links
    nowhere."""
    return os.path.realpath(path) if os.path.islink(path) else path


def recorded_target(kind: str, path: str) -> str:
    """How the target is named in everything the bundle holds."""
    return kernel_device(path) if kind == "device" else Path(path).name


def sanitize_lshw(text: str) -> str:
    """lshw JSON (one object or an array of them) without host name, IP and MAC addresses; other text unchanged."""
    try:
        document = json.loads(text)
    except ValueError:
        return text
    changed = False
    roots = document if isinstance(document, list) else [document]
    stack: list[Any] = [(node, True) for node in roots]
    while stack:
        node, is_root = stack.pop()
        if not isinstance(node, dict):
            continue
        if is_root and node.get("class") == "system" and node.get("id") not in (None, "computer"):
            node["id"] = "computer"  # lshw names the machine node after the host; -sanitize says "computer"
            changed = True
        if node.get("class") == "network" and node.get("serial") not in (None, REMOVED):
            node["serial"] = REMOVED  # a network node's serial is its MAC address
            changed = True
        configuration = node.get("configuration")
        if isinstance(configuration, dict):
            for key in [k for k in configuration if str(k).lower() in NETWORK_CONFIGURATION_KEYS]:
                del configuration[key]
                changed = True
        stack.extend((child, False) for child in node.get("children") or [] if isinstance(child, dict))
    return json.dumps(document, indent=2) + "\n" if changed else text
