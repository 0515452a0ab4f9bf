"""Open the built documentation site in headless Chromium and check what a reader sees.

    python .ci/check_docs_pages.py docs/_build/html [--screenshots DIR] [--width 1280]

Needs Chromium and its driver (Debian: ``apt-get install chromium chromium-driver``) and
``selenium`` (in the ``docs`` extra); ``.ci/run`` installs both. The pages are opened as
``file://`` URLs, so no server runs. Every page of the site except the generated API
pages (one per object, checked through their sidebar on ``api``) is checked for:

* **cut code blocks**: a code block's text must fit its box (a scroll bar still hides the
  end of every long line until the reader scrolls; output blocks wrap instead, see
  ``docs/_static/causefs.css``) and its box must end inside the article;
* **an empty navigation panel**: a visible primary sidebar (pydata's "Section
  Navigation") must hold at least one link;
* **file names as link text**: no link reads ``something.md`` (a reader sees titles);
* **a grouped API sidebar**: on ``api.html`` the sidebar lists the groups of the API
  reference (at most :data:`MAX_API_GROUPS` entries), not every object.

Screenshots of the checked pages go to ``--screenshots`` (default: ``screenshots/``
beside the site) for a person to look at; they are not committed. Exits 1 listing every
defect, 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

MAX_API_GROUPS = 8
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# flags that let Chromium run headless here: no sandbox as root, and no background
# connections to hosts a closed network refuses (.library/env/machines/python.md)
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage")

# code blocks whose text is wider than their box, or whose box sticks out of the article
CUT_CODE_JS = """
if (!document.body) return [];
const article = document.querySelector('article.bd-article') || document.body;
const right = article.getBoundingClientRect().right;
const cut = [];
for (const pre of document.querySelectorAll('article pre')) {
  const box = pre.getBoundingClientRect();
  if (pre.scrollWidth > pre.clientWidth + 1 || box.right > right + 1) {
    const first = pre.textContent.trim().split('\\n')[0].slice(0, 60);
    cut.push(`${first} (${pre.scrollWidth} px of text in ${pre.clientWidth} px)`);
  }
}
return cut;
"""

# the primary sidebar: visible, and its links (the "Section Navigation" panel)
SIDEBAR_JS = """
const bar = document.querySelector('.bd-sidebar-primary');
if (!bar) return {visible: false, links: [], top: []};
const box = bar.getBoundingClientRect();
const visible = getComputedStyle(bar).display !== 'none' && box.width > 0;
const nav = bar.querySelector('nav.bd-docs-nav');
const links = nav ? [...nav.querySelectorAll('a')].map(a => a.textContent.trim()) : [];
const top = nav ? [...nav.querySelectorAll(':scope > div > ul > li > a, :scope > ul > li > a')]
                  .map(a => a.textContent.trim()) : [];
return {visible: visible, links: links, top: top};
"""

MD_LINKS_JS = """
return [...document.querySelectorAll('a')]
  .map(a => a.textContent.trim())
  .filter(text => /\\.md$/i.test(text));
"""


def pages(site: Path) -> list:
    """The site's pages a reader navigates to: every HTML file but the generated API
    pages, the theme's files and the search and index pages."""
    skip = ("_static", "_sources", "_modules", "generated", "_images", "_downloads")
    return sorted(page for page in site.rglob("*.html")
                  if not set(page.relative_to(site).parts) & set(skip)
                  and page.name not in ("search.html", "genindex.html", "py-modindex.html"))


def browser(width: int):
    """A headless Chromium driven by selenium, ``width`` CSS pixels wide."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + (f"--user-data-dir={tempfile.mkdtemp()}",
                         f"--window-size={width},1000"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def page_defects(driver, name: str) -> list:
    """The defects of the page the driver shows, one line each."""
    defects = [f"{name}: code block cut at the right edge: {first!r}"
               for first in driver.execute_script(CUT_CODE_JS)]
    bar = driver.execute_script(SIDEBAR_JS)
    if bar["visible"] and not bar["links"]:
        defects.append(f"{name}: the navigation panel is shown empty")
    defects += [f"{name}: a link reads as a file name: {text!r}"
                for text in driver.execute_script(MD_LINKS_JS)]
    if name == "api.html" and not 0 < len(bar["top"]) <= MAX_API_GROUPS:
        defects.append(f"{name}: the sidebar lists {len(bar['top'])} entries, not the "
                       f"API's groups (at most {MAX_API_GROUPS})")
    return defects


def check(site: Path, shots: Path, width: int) -> tuple[list, int]:
    """Every defect of the site's pages and the number of pages checked."""
    shots.mkdir(parents=True, exist_ok=True)
    driver = browser(width)
    defects, checked = [], pages(site)
    try:
        for page in checked:
            name = page.relative_to(site).as_posix()
            driver.get(page.resolve().as_uri())
            defects += page_defects(driver, name)
            driver.save_screenshot(str(shots / (name.replace("/", "__")[:-5] + ".png")))
    finally:
        driver.quit()
    return defects, len(checked)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the built HTML site")
    parser.add_argument("--screenshots", type=Path, default=None,
                        help="where the screenshots go (default: <site>/../screenshots)")
    parser.add_argument("--width", type=int, default=1280, help="window width, CSS px")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site} holds no index.html: build the site first")
    shots = args.screenshots or args.site.parent / "screenshots"
    defects, checked = check(args.site, shots, args.width)
    print("\n".join(defects))
    print(f"{checked} pages checked at {args.width} px, {len(defects)} defects; "
          f"screenshots in {shots}")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
