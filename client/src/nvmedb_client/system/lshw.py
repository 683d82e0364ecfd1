"""Parser for `lshw -json`: the machine's product, board, processors and memory.

lshw prints a single root object, or (some versions) an array holding it; both are accepted. Descriptions may be
translated ("Systemspeicher"), so nodes are recognised by their `id` and `class`, never by their description.
A value lshw does not report is None, with the reason under `missing`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from nvmedb_client import jsonload

# a large server's lshw -json is ~1 MiB; its device tree nests ~10 nodes (each node adds two levels: object and
# its children array)
MAX_OUTPUT_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64


class LshwParseError(ValueError):
    """The text is not lshw JSON."""


def parse_lshw(text: str | bytes | Mapping[str, Any] | list) -> dict[str, Any]:
    root = _root(text)
    missing: dict[str, str] = {}
    core = next((child for child in _children(root) if child.get("id") == "core"), None)

    cpus = [node for node in _walk(root) if node.get("class") == "processor" and _is_id(node, "cpu")]
    present = [cpu for cpu in cpus if not cpu.get("disabled")]
    models = sorted({str(cpu["product"]).strip() for cpu in present if cpu.get("product")})
    core_counts = [_int(_configuration(cpu).get("cores")) for cpu in present]
    thread_counts = [_int(_configuration(cpu).get("threads")) for cpu in present]

    result: dict[str, Any] = {
        "system_vendor": _text(root.get("vendor")),
        "system_product": _text(root.get("product")),
        "system_description": _text(root.get("description")),
        "board_vendor": _text(core.get("vendor")) if core else None,
        "board_product": _text(core.get("product")) if core else None,
        "board_version": _text(core.get("version")) if core else None,
        "cpu_model": "; ".join(models) if models else None,
        "cpu_count": len(present) if present else None,
        "cpu_cores": sum(core_counts) if present and None not in core_counts else None,
        "cpu_threads": sum(thread_counts) if present and None not in thread_counts else None,
        "memory_bytes": _memory_bytes(root),
    }
    reasons = {
        "system_vendor": "lshw reports no system vendor",
        "system_product": "lshw reports no system product",
        "system_description": "lshw reports no system description",
        "board_vendor": "lshw reports no board vendor",
        "board_product": "lshw reports no board product",
        "board_version": "lshw reports no board version",
        "cpu_model": "lshw reports no processor product name",
        "cpu_count": "lshw lists no processor",
        "cpu_cores": "lshw reports no core count for every processor",
        "cpu_threads": "lshw reports no thread count for every processor",
        "memory_bytes": "lshw reports no size for the system memory or its banks",
    }
    for key, value in result.items():
        if value is None:
            missing[key] = reasons[key]
    result["missing"] = missing
    return result


def _root(text: str | bytes | Mapping[str, Any] | list) -> Mapping[str, Any]:
    doc: Any = text
    if isinstance(text, (str, bytes)):
        if not text.strip():
            raise LshwParseError("lshw printed nothing")
        try:
            doc = jsonload.loads(
                text, what="lshw output", max_bytes=MAX_OUTPUT_BYTES, max_depth=MAX_DEPTH, replace_invalid_utf8=True
            )
        except jsonload.JsonError as exc:
            raise LshwParseError(str(exc)) from exc
    if isinstance(doc, list):
        doc = doc[0] if len(doc) == 1 else next((n for n in doc if isinstance(n, Mapping) and "children" in n), None)
    if not isinstance(doc, Mapping) or "class" not in doc:
        raise LshwParseError("lshw JSON has no root node (an object with a 'class')")
    return doc


def _children(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    children = node.get("children")
    return [child for child in children if isinstance(child, Mapping)] if isinstance(children, list) else []


def _configuration(node: Mapping[str, Any]) -> Mapping[str, Any]:
    configuration = node.get("configuration")
    return configuration if isinstance(configuration, Mapping) else {}


def _walk(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield node
    for child in _children(node):
        yield from _walk(child)


def _is_id(node: Mapping[str, Any], name: str) -> bool:
    return bool(re.fullmatch(rf"{name}(?::\d+)?", str(node.get("id", ""))))


def _memory_bytes(root: Mapping[str, Any]) -> int | None:
    """The sum of the "System Memory" nodes: their own size, else the sum of their banks."""
    total = 0
    found = False
    for node in _walk(root):
        if node.get("class") != "memory" or not _is_id(node, "memory"):
            continue
        size = _int(node.get("size"))
        if size is None:
            banks = [_int(bank.get("size")) for bank in _children(node) if _is_id(bank, "bank")]
            sizes = [bank for bank in banks if bank is not None]
            size = sum(sizes) if sizes else None
        if size is not None:
            total += size
            found = True
    return total if found else None


def _int(value: Any) -> int | None:
    """A whole number below 2**63 (what lshw can report), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 19:
        value = int(value.strip())
    if isinstance(value, int) and 0 <= value < 2**63:
        return value
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None
