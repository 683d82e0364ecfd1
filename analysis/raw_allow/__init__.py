"""What of each raw file the public may see: every served file is re-emitted from the fields of its kind that are on
an allow-list, and nothing else.

A bundle may be written by any tool and may carry files and fields the nvmedb client never writes (docs/bundle-format.md
allows both), so scrubbing what is known to identify (analysis.privacy) is not enough on its own: a tool that puts the
host's name, a DMI serial or the user's environment into a field nobody thought of would have it published. Here a
file is served only when its role is known from the manifest (`file_kind`), and then only what the allow-list of that
kind names:

- JSON files (fio output, nvme-cli id-ctrl / id-ns / smart-log / list, lshw, facts.json, run.json, commands.json) are
  parsed and written again with the allowed keys at each level; any other key is dropped without a marker (the page
  says the file is served by allow-list). A few allowed keys hold a unit's or a machine's identity (`sn`, `subnqn`,
  an lshw machine node's `id`, ...): they are kept with the value `[scrubbed]`, so the file keeps its shape.
- Text files (fio job files, lspci -vvv, fio's interval logs, get-feature 0x06) keep only the lines of known form: job
  file options from a list of fio option names (`directory=` replaced, `filename=` kept only as a kernel device name
  or a bare file name), lspci lines by their label, log lines that are numbers only.

Every string that is kept is still scrubbed of the bundle's identifiers and of what the patterns match
(analysis.privacy.Scrubber, case-insensitive). A file of an unknown kind (a format-2 `other` file, an undeclared
system file, a file a format-1 bundle names in no way the server knows) is not served at all; its contributor keeps
the original bundle.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator

from analysis import privacy
from analysis.raw_allow.json_filter import reemit_json
from analysis.raw_allow.kinds import FIO_JOB, FIO_LOG, FIO_OUTPUT, KINDS, NOT_SERVED, RUN, SMART_LOG, file_kinds
from analysis.raw_allow.specs import JSON_SPECS, TEXT_KINDS
from analysis.raw_allow.text_filter import Lines, reemit_text

__all__ = [
    "FIO_JOB", "FIO_LOG", "FIO_OUTPUT", "JSON_SPECS", "KINDS", "NOT_SERVED", "RUN", "SMART_LOG", "TEXT_KINDS",
    "Lines", "file_kinds", "reemit", "reemit_json", "reemit_text", "text_pieces",
]  # fmt: skip


def reemit(kind: str, stream, scrubber: privacy.Scrubber) -> Iterator[str]:
    """A file of a known kind, read from a binary `stream`, as it is served: a text kind line by line as it is read,
    a JSON kind at once (it must be parsed whole)."""
    if kind in TEXT_KINDS:
        yield from reemit_text(kind, text_pieces(stream), scrubber)
    else:
        text = reemit_json(kind, stream.read(), scrubber)
        for start in range(0, len(text), privacy.CHUNK_CHARS):  # a streamed download gets it in pieces
            yield text[start : start + privacy.CHUNK_CHARS]


READ_BYTES = 256 * 1024


def text_pieces(stream) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while block := stream.read(READ_BYTES):
        yield decoder.decode(block)
    yield decoder.decode(b"", final=True)
