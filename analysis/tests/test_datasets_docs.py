"""The data dictionary in docs/datasets.md matches the tables the site publishes."""

import pytest

from datasets import docs
from datasets.tables import TABLES


def test_the_doc_lists_every_column_with_its_type_and_unit():
    text = docs.doc_path().read_text()
    for table in TABLES.values():
        assert f"### {table.name}" in text
        for column in table.columns:
            assert f"| `{column.name}` | {column.type} |" in text, f"{table.name}.{column.name} is not documented"


def test_the_doc_is_regenerated_from_tables_py():
    text = docs.doc_path().read_text()
    assert docs.data_dictionary() in text, (
        'docs/datasets.md is out of date: python manage.py shell -c "from datasets.docs import update; update()"'
    )


def test_every_column_has_a_description_and_a_known_type_and_unique_name():
    for table in TABLES.values():
        assert len(set(table.column_names)) == len(table.columns), table.name
        for column in table.columns:
            assert column.description.strip(), f"{table.name}.{column.name}"
            assert column.type in {"integer", "number", "boolean", "string", "datetime"}


@pytest.mark.django_db
def test_the_datasets_page_has_contents_and_folds_each_tables_columns(client):
    html = client.get("/datasets/").content.decode()
    start = html.index('<nav class="toc"')
    toc = html[start : html.index("</nav>", start)]
    for anchor in ("license", "cite", "live", "tables"):
        assert f'href="#{anchor}"' in toc and f'id="{anchor}"' in html
    for table in TABLES.values():
        assert f'href="#table-{table.name}"' in toc
        folded = html[html.index(f'<details class="columns" id="columns-{table.name}">') :]
        assert f"{len(table.columns)} columns:" in folded[: folded.index("</summary>")]  # folded, its size named
        assert all(f"<code>{c.name}</code>" in folded[: folded.index("</details>")] for c in table.columns)
