"""The methodology page: docs/methodology.md rendered to HTML, and the numbers it quotes read from the code that
applies them (tests hold the document to these, so the page cannot drift)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.utils.text import slugify

from analysis import aggregates, consistency, crosscheck, pcie, plausibility, unwritten
from analysis.headline import HEADLINES
from nvmedb_client import plan, steady_state, tracking
from reports import units


def methodology_context() -> dict:
    return {
        "window_rounds": steady_state.WINDOW_ROUNDS,
        "max_data_excursion_pct": round(steady_state.MAX_DATA_EXCURSION * 100),
        "max_slope_excursion_pct": round(steady_state.MAX_SLOPE_EXCURSION * 100),
        "max_rounds": steady_state.DEFAULT_MAX_ROUNDS,
        "iops_mixes": [units.mix(m) for m in plan.IOPS_MIXES],
        "iops_block_sizes": [units.block_size(b) for b in plan.IOPS_BLOCK_SIZES],
        "lat_mixes": [units.mix(m) for m in plan.LAT_MIXES],
        "lat_block_sizes": [units.block_size(b) for b in plan.LAT_BLOCK_SIZES],
        "tp_block_sizes": {k: [units.block_size(b) for b in v] for k, v in plan.TP_BLOCK_SIZES.items()},
        "iops_tracked": [f"{units.block_size(bs)} {units.mix(mix)}" for mix, bs in tracking.IOPS_VARIABLES],
        "lat_tracked": [f"{units.block_size(bs)} {units.mix(mix)}" for mix, bs in tracking.LAT_VARIABLES],
        "wsat_block_size": units.block_size(plan.WSAT_BLOCK_SIZE),
        "wsat_capacity_multiple": plan.WSAT_CAPACITY_MULTIPLE,
        "wipc_block_size": units.block_size(plan.WIPC_BLOCK_SIZE),
        "wipc_passes": plan.WIPC_PASSES,
        "editions": list(plan.EDITIONS.values()),
        "pts_profile": plan.pts_profile(),
        "headlines": HEADLINES,
        "bus_bound_pct": round(pcie.BUS_BOUND_UTILIZATION * 100),
        "default_max_payload": pcie.DEFAULT_MAX_PAYLOAD_BYTES,
        "outlier_z": aggregates.OUTLIER_Z,
        "min_peers": aggregates.MIN_PEERS,
        "arithmetic_tolerance_pct": round(crosscheck.ARITHMETIC_TOLERANCE * 100),
        "runtime_tolerance_pct": round(crosscheck.RUNTIME_TOLERANCE * 100),
        "min_coverage_pct": round(unwritten.MIN_COVERAGE * 100),
        "plausibility_rules": list(plausibility.RULES.items()),
        "consistency_rules": list(consistency.RULES.items()),
        "link_margin_pct": round(plausibility.LINK_MARGIN * 100),
    }


def methodology_path() -> Path:
    return Path(settings.BASE_DIR) / "docs" / "methodology.md"


def methodology_html(path: Path | None = None) -> str:
    """docs/methodology.md as HTML: CommonMark with tables, raw HTML in the file escaped (never passed through), and
    an id on every heading so sections can be linked (#steady-state)."""
    document = methodology_document(path)
    return document.intro + "".join(section.heading + section.body for section in document.sections)


@dataclass(frozen=True)
class DocSection:
    """One second-level section of the document: its id (the heading's), title, heading and body as HTML, and the
    ids and titles of its third-level headings."""

    id: str
    title: str
    heading: str
    body: str
    subheadings: tuple[tuple[str, str], ...]
    test: bool  # a section about one test (IOPS, throughput, …): listed apart in the table of contents


@dataclass(frozen=True)
class Document:
    intro: str  # the title and what comes before the first section
    sections: tuple[DocSection, ...]

    @property
    def tests(self) -> list[DocSection]:
        return [section for section in self.sections if section.test]


# The sections about one test, by the start of their heading's id: the table of contents lists them first.
TEST_SECTIONS = ("preconditioning-wipc", "iops-test", "throughput-test", "latency-test", "write-saturation-wsat",
                 "host-idle-recovery", "enterprise-composite-workload", "the-queue-depth")  # fmt: skip


def methodology_document(path: Path | None = None) -> Document:
    """docs/methodology.md split at its second-level headings (rendered as methodology_html renders them), so the
    page can list its sections and fold each one."""
    path = path or methodology_path()
    stat = path.stat()
    return _render(str(path), stat.st_mtime_ns, stat.st_size)


def _plain(markdown: str) -> str:
    """A heading's text without its inline markup (`code`, *emphasis*), for the table of contents."""
    return markdown.replace("`", "").replace("*", "")


@lru_cache(maxsize=4)
def _render(path: str, _mtime_ns: int, _size: int) -> Document:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    tokens = md.parse(Path(path).read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            slug = slugify(tokens[index + 1].content) or "section"
            seen[slug] = seen.get(slug, 0) + 1
            token.attrSet("id", slug if seen[slug] == 1 else f"{slug}-{seen[slug]}")

    def render(part) -> str:
        return md.renderer.render(part, md.options, {})

    starts = [i for i, token in enumerate(tokens) if token.type == "heading_open" and token.tag == "h2"]
    sections = []
    for start, end in zip(starts, [*starts[1:], len(tokens)], strict=True):
        heading, body = tokens[start : start + 3], tokens[start + 3 : end]
        section_id = heading[0].attrGet("id")
        subheadings = tuple(
            (token.attrGet("id"), _plain(body[i + 1].content))
            for i, token in enumerate(body)
            if token.type == "heading_open" and token.tag == "h3"
        )
        sections.append(
            DocSection(id=section_id, title=_plain(heading[1].content), heading=render(heading), body=render(body),
                       subheadings=subheadings, test=section_id.startswith(TEST_SECTIONS))
        )  # fmt: skip
    return Document(intro=render(tokens[: starts[0]] if starts else tokens), sections=tuple(sections))
