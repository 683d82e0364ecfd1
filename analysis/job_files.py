"""The options a fio job file sets, as the cross-checks compare them with what fio's output says it ran
(analysis.crosscheck)."""

from __future__ import annotations

import configparser
import threading


def job_file_options(job_file_text: str | None) -> dict[str, str]:
    """The options a job file sets (later sections over earlier ones); empty when it does not parse."""
    options: dict[str, str] = {}
    if job_file_text:
        parser = _empty_parser()
        try:
            parser.read_string(job_file_text)
        except configparser.Error:
            return options
        for section in parser.sections():
            options.update({k: (v if v is not None else "1") for k, v in parser.items(section)})
    return options


_PARSERS = threading.local()


def _empty_parser() -> configparser.ConfigParser:
    """This thread's job-file parser, emptied: made once, since making one costs as much as reading a job file
    (a bundle holds hundreds)."""
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None)
    for section in parser.sections():
        parser.remove_section(section)
    parser[parser.default_section].clear()
    return parser
