"""Every link between the README and the docs leads somewhere: the file exists, the anchor is a heading."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``page`` (lower case, punctuation but ``-`` and ``_``
    dropped, spaces as ``-``, ``-1``, ``-2`` ... on repeats), code blocks skipped."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            repeat = seen.get(slug, 0)
            seen[slug] = repeat + 1
            found.add(slug if repeat == 0 else f"{slug}-{repeat}")
    return found


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file or heading does not exist."""
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path) if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_of_the_page_resolves(page: Path) -> None:
    """The page's links to files and headings of this repository all lead somewhere."""
    assert broken_links(page) == []


def test_a_link_to_a_missing_heading_is_reported(tmp_path: Path) -> None:
    """The check itself: a link to a heading that is not there (or is inside code) is reported."""
    page = tmp_path / "page.md"
    page.write_text(
        "# A title: with punctuation\n\n## Again\n## Again\n\n```sh\n# not a heading\n```\n"
        "[ok](#a-title-with-punctuation) [ok](#again-1) [bad](#not-a-heading) [bad](other.md)\n"
    )
    assert broken_links(page) == ["#not-a-heading: no such heading", "other.md: no such file"]
