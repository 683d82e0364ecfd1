"""Canonical drive identity: one vendor and model name per product and capacity, whatever the submission said.

id-ctrl pads `mn` with spaces to 40 characters and some tools prefix it or upper-case it; vendors name the same brand
several ways. Everything that decides "is this the same drive model" lives here so every submission of a
"Samsung SSD 970 EVO Plus 500GB" lands on one page, and a 1 TB variant on another.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from django.utils.text import slugify

from analysis.values import optional_int

# PCI-SIG vendor ids of NVMe controller and drive makers (id-ctrl vid / ssvid), as listed in the PCI ID Repository
# (https://pci-ids.ucw.cz/read/PC/).
PCI_VENDORS: dict[int, str] = {
    0x106B: "Apple",
    0x10EC: "Realtek",
    0x1179: "Toshiba",
    0x126F: "Silicon Motion",
    0x1344: "Micron",
    0x144D: "Samsung",
    0x15B7: "Western Digital",
    0x1987: "Phison",
    0x19E5: "Huawei",
    0x1AE0: "Google",
    0x1B36: "QEMU",
    0x1B4B: "Marvell",
    0x1BB1: "Seagate",
    0x1C58: "Western Digital",
    0x1C5C: "SK hynix",
    0x1C5F: "Memblaze",
    0x1CC1: "ADATA",
    0x1CC4: "Union Memory",
    0x1D0F: "Amazon",
    0x1D97: "Longsys",
    0x1DBE: "InnoGrit",
    0x1E0F: "Kioxia",
    0x1E49: "YMTC",
    0x1E4B: "MAXIO",
    0x1E95: "SSSTC",
    0x2646: "Kingston",
    0x8086: "Intel",
}

# Brand as written at the start of the model number (a regular expression) -> canonical vendor name. Checked before the PCI ids, because the
# controller's maker (vid) is often not the brand on the label (a Seagate FireCuda carries a Phison controller).
MODEL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("samsung", "Samsung"),
    (r"mz[0-9a-z]", "Samsung"),
    ("intel", "Intel"),
    (r"ssdpe", "Intel"),
    ("seagate", "Seagate"),
    ("wdc", "Western Digital"),
    ("wd_", "Western Digital"),
    ("wd ", "Western Digital"),
    ("western digital", "Western Digital"),
    ("sandisk", "SanDisk"),
    ("kingston", "Kingston"),
    ("micron", "Micron"),
    ("mtfd", "Micron"),
    ("crucial", "Crucial"),
    (r"ct\d", "Crucial"),
    ("kioxia", "Kioxia"),
    ("toshiba", "Toshiba"),
    ("thnsn", "Toshiba"),
    (r"kxg\d", "Kioxia"),
    (r"kbg\d", "Kioxia"),
    ("sk hynix", "SK hynix"),
    ("skhynix", "SK hynix"),
    (r"hfs\d", "SK hynix"),
    ("adata", "ADATA"),
    ("sabrent", "Sabrent"),
    ("corsair", "Corsair"),
    ("lexar", "Lexar"),
    ("solidigm", "Solidigm"),
    ("hgst", "Western Digital"),
    ("hp ssd", "HP"),
    ("teamgroup", "TeamGroup"),
    ("patriot", "Patriot"),
    ("pny", "PNY"),
    ("gigabyte", "Gigabyte"),
)


@dataclass(frozen=True)
class DriveIdentity:
    vendor: str
    pci_vendor_id: int | None
    name: str
    model_number: str
    capacity_bytes: int | None
    firmware: str
    serial: str


def clean(value: object) -> str:
    """Trim id-ctrl padding (spaces, NULs) and collapse inner whitespace."""
    if value is None:
        return ""
    return re.sub(r"\s+", " ", str(value).replace("\x00", " ")).strip()


def vendor_name(*, model_number: str, vid: int | None = None, ssvid: int | None = None) -> str:
    lowered = model_number.lower()
    for pattern, name in MODEL_PREFIXES:
        if re.match(pattern, lowered):
            return name
    for pci_id in (ssvid, vid):
        if pci_id and pci_id in PCI_VENDORS:
            return PCI_VENDORS[pci_id]
    pci_id = ssvid or vid
    return f"Unknown vendor (PCI {pci_id:#06x})" if pci_id else "Unknown vendor"


def canonical_name(vendor: str, model_number: str) -> str:
    """'Samsung SSD 970 EVO Plus 500GB'; a bare part number gets its vendor in front ('Samsung MZ1LB960HAJQ-00007')."""
    name = model_number
    for prefix in ("SAMSUNG ", "INTEL ", "KINGSTON ", "TOSHIBA ", "KIOXIA ", "SEAGATE ", "MICRON "):
        if name.upper().startswith(prefix) and name[: len(prefix)].isupper():
            name = name[len(prefix) :]
            break
    if name.replace("_", " ").lower().startswith(vendor.lower()):
        return name.replace("_", " ", 1) if name.lower().startswith("micron_") else name
    return f"{vendor} {name}".strip()


def identity_from_id_ctrl(id_ctrl: dict, *, capacity_fallback_bytes: int | None = None) -> DriveIdentity:
    """From id-ctrl as parsed by nvmedb_client.system.nvme.parse_id_ctrl."""
    model_number = clean(id_ctrl.get("model"))
    vid = optional_int(id_ctrl.get("vid"))
    ssvid = optional_int(id_ctrl.get("ssvid"))
    vendor = vendor_name(model_number=model_number, vid=vid, ssvid=ssvid)
    capacity = optional_int(id_ctrl.get("tnvmcap_bytes")) or capacity_fallback_bytes
    return DriveIdentity(
        vendor=vendor,
        pci_vendor_id=vid,
        name=canonical_name(vendor, model_number) if model_number else f"{vendor} unknown model",
        model_number=model_number,
        capacity_bytes=capacity or None,
        firmware=clean(id_ctrl.get("firmware")),
        serial=clean(id_ctrl.get("serial")),
    )


def drive_slug(name: str, capacity_bytes: int | None) -> str:
    """A readable slug; the capacity is appended only when the name does not already say it."""
    slug = slugify(name)[:180]
    if capacity_bytes and not re.search(r"\d+(gb|tb|g|t)\b", name.lower().replace(" ", "")):
        slug = f"{slug}-{round(capacity_bytes / 1e9)}gb"
    return slug


def serial_hash(serial: str, *, key: str, model_number: str = "") -> str:
    """HMAC-SHA256 of model number and serial with the server's secret: repeat runs match, the serial stays private."""
    message = f"{clean(model_number)}\0{clean(serial)}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()
