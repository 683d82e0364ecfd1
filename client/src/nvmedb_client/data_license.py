"""The licence of the published data (CC BY 4.0) and the notice contributors accept; the code stays MIT.

One place for the site (sign-up, datapackage.json, CITATION.cff, API) and the client (`login`)."""

from __future__ import annotations

SPDX = "CC-BY-4.0"
TITLE = "Creative Commons Attribution 4.0 International"
URL = "https://creativecommons.org/licenses/by/4.0/"
CODE_SPDX = "MIT"
ATTRIBUTION = "nvmedb contributors"

NOTICE = (
    f"The results you upload are published under the {TITLE} licence ({SPDX}, {URL}): anyone may share and "
    f'adapt them, also commercially, if they credit "{ATTRIBUTION}". Withdrawing a submission removes it from '
    "the site and from future releases, not from copies already made. The nvmedb code is under the MIT licence."
)


def as_datapackage() -> dict:
    """A Frictionless Data `licenses` entry."""
    return {"name": SPDX, "path": URL, "title": TITLE}
