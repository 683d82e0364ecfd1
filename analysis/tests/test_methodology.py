"""The methodology page renders docs/methodology.md, and the document quotes the numbers the code applies."""

import re

import pytest

from browse.methodology import methodology_context, methodology_html, methodology_path
from nvmedb_client import plan


@pytest.fixture(scope="module")
def document():
    return methodology_path().read_text(encoding="utf-8")


def test_the_page_renders_the_document_with_its_headings_and_parameters(client, document):
    html = client.get("/methodology/").content.decode()
    assert '<h2 id="throughput-test">Throughput test</h2>' in html
    assert '<h2 id="steady-state">Steady state</h2>' in html
    assert "<strong>One sequential stream: TC 1 / QD 32</strong>" in html
    assert "<table>" in html and "<th>Tracking variables</th>" in html
    assert '<h2 id="validation-and-publication-rules">Validation and publication rules</h2>' in html
    # every second-level heading of the file is on the page
    for heading in re.findall(r"^## (.+)$", document, flags=re.MULTILINE):
        assert f">{heading}</h2>" in html, heading


def test_a_table_of_contents_links_every_section_and_lists_the_tests_first(client, document):
    html = client.get("/methodology/").content.decode()
    start = html.index('<nav class="toc"')
    toc = html[start : html.index("</nav>", start)]
    linked = re.findall(r'<a href="#([^"]+)">', toc)
    headings = re.findall(r'<h2 id="([^"]+)">', html[html.index("</nav>", start) :])
    assert set(headings) <= set(linked), set(headings) - set(linked)  # every section is in the contents
    tests = re.findall(r'<a href="#([^"]+)">', toc[toc.index('id="toc-tests"') : toc.index("</p>")])
    assert tests[:4] == ["preconditioning-wipc", "iops-test", "throughput-test", "latency-test"]
    assert "write-saturation-wsat" in tests
    # each section folds under its heading, the anchor on the heading itself
    assert re.search(r'<details class="doc-section" id="section-iops-test">\s*<summary><h2 id="iops-test">', html)


def test_the_sections_hold_the_whole_document_once(document):
    from browse.methodology import methodology_document

    parsed = methodology_document()
    assert [s.title for s in parsed.sections] == [
        h.replace("`", "").replace("*", "") for h in re.findall(r"^## (.+)$", document, flags=re.MULTILINE)
    ]
    rendered = methodology_html()
    for section in parsed.sections:
        assert rendered.count(section.heading) == 1 and section.body in rendered
    steady = next(s for s in parsed.sections if s.id == "purge-write-cache-multi-namespace-safety-and-resumed-runs")
    assert ("purge-before-every-test", "Purge before every test") in steady.subheadings


def test_the_page_follows_the_file(tmp_path, settings, client):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "methodology.md").write_text("# Methodology\n\n## A new section\n\nTC 9 / QD 99\n")
    settings.BASE_DIR = tmp_path
    html = client.get("/methodology/").content.decode()
    assert '<h2 id="a-new-section">A new section</h2>' in html and "TC 9 / QD 99" in html


def test_raw_html_in_the_document_is_shown_as_text(tmp_path):
    path = tmp_path / "m.md"
    path.write_text("## Hi\n\n<script>alert(1)</script>\n\n<b onclick=x>bold</b>\n")
    html = methodology_html(path)
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b onclick" not in html


def test_the_document_quotes_the_numbers_the_code_applies(document):
    numbers = methodology_context()
    text = " ".join(document.split())
    assert f"last {numbers['window_rounds']} rounds" in text
    assert f"≤ {numbers['max_data_excursion_pct']}% of" in text
    assert f"≤ {numbers['max_slope_excursion_pct']}% of" in text
    assert f"at most {numbers['max_rounds']} rounds" in text
    assert ", ".join(f"{m}/{100 - m}" for m in plan.IOPS_MIXES) in text
    assert ", ".join(f"{bs / 1024:g}" for bs in plan.IOPS_BLOCK_SIZES) + " KiB" in text
    assert ", ".join(f"{bs / 1024:g}" for bs in plan.LAT_BLOCK_SIZES) + " KiB" in text
    assert f"TC {plan.TP_THREADS} / QD {plan.TP_IODEPTH}" in text
    for edition in plan.EDITIONS.values():
        assert f"| {edition.threads} × {edition.iodepth} | {edition.active_range_pct} % |" in text, edition.name
    assert f"{plan.WSAT_CAPACITY_MULTIPLE}× the capacity" in text
    assert f"{plan.WIPC_PASSES}× the user capacity" in text
    assert f"at least {numbers['bus_bound_pct']}% of" in text
    assert f"MaxPayload ({numbers['default_max_payload']} bytes" in text
    assert f"less than {numbers['min_coverage_pct']}% of the active range" in text
    assert "percentile_list=99:99.9:99.99:99.999" in text and "lat_percentiles=1" in text
