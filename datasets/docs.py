"""The data dictionary in docs/datasets.md, generated from the table definitions so the two cannot drift apart.

Regenerate after changing a table: `python manage.py shell -c "from datasets.docs import update; update()"`.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from datasets.tables import TABLES

BEGIN = "<!-- data dictionary: generated from datasets/tables.py -->"
END = "<!-- end of data dictionary -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def data_dictionary() -> str:
    parts = [BEGIN, ""]
    for table in TABLES.values():
        parts += [
            f"### {table.name}",
            "",
            table.description,
            "",
            "| Column | Type | Unit | Meaning |",
            "|---|---|---|---|",
        ]
        parts += [f"| `{c.name}` | {c.type} | {_cell(c.unit) or '—'} | {_cell(c.description)} |" for c in table.columns]
        parts.append("")
    parts.append(END)
    return "\n".join(parts)


def doc_path() -> Path:
    return Path(settings.BASE_DIR) / "docs" / "datasets.md"


def update(path: Path | None = None) -> None:
    path = path or doc_path()
    text = path.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    path.write_text(text[:start] + data_dictionary() + text[end:])
