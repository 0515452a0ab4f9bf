"""Check the internal links of a built HTML site: every relative ``href`` and ``src``
names a file of the site, and every ``#anchor`` an ``id`` of the page it points to.

    python .ci/check_links.py docs/_build/html

External links (``http:``, ``https:``, ``mailto:``) are counted, not followed: CI has no
network to follow them with. Files under ``_static/`` (the theme's assets and templates)
are link targets, not pages. Exits 1 listing every broken link, 0 otherwise.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

EXTERNAL = ("http:", "https:", "mailto:", "data:", "javascript:")


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("id", "name"):
            if attrs.get(name):
                self.ids.add(attrs[name])
        for name in ("href", "src"):
            if attrs.get(name) is not None:
                self.links.append(attrs[name])


def check(site: Path) -> tuple[list, int, int]:
    """Broken links (page, link, why), the number of internal links checked and of
    external links seen."""
    pages = {}
    for path in site.rglob("*.html"):
        if "_static" in path.relative_to(site).parts:  # the theme's templates, not pages
            continue
        parser = _Page()
        parser.feed(path.read_text(errors="replace"))
        pages[path.resolve()] = parser
    broken, internal, external = [], 0, 0
    for path, parser in pages.items():
        for link in parser.links:
            if not link or link.startswith(EXTERNAL):
                external += bool(link)
                continue
            internal += 1
            parts = urlsplit(link)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append((path, link, "no such file"))
            elif parts.fragment and target in pages and parts.fragment not in pages[target].ids:
                broken.append((path, link, f"no id {parts.fragment!r} in {target.name}"))
    return broken, internal, external


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: check_links.py BUILT_HTML_DIR", file=sys.stderr)
        return 2
    site = Path(argv[0])
    broken, internal, external = check(site)
    by_page = defaultdict(list)
    for page, link, why in broken:
        by_page[page.relative_to(site.resolve())].append(f"{link} ({why})")
    for page, links in sorted(by_page.items()):
        print(f"{page}: " + "; ".join(links))
    print(f"{internal} internal links checked, {len(broken)} broken; {external} external "
          "links not followed")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
