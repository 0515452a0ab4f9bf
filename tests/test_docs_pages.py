"""The docs page check finds each defect it is for, on pages made here, in headless
Chromium (skipped where Chromium, its driver or selenium is missing; .ci/run installs
them)."""

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    not (shutil.which("chromium") and shutil.which("chromedriver")
         and importlib.util.find_spec("selenium")),
    reason="needs Debian's chromium and chromium-driver and selenium (.ci/run installs them)")

PAGE = """<!DOCTYPE html><html><head><style>
body {{ margin: 0; }} .bd-sidebar-primary {{ width: 200px; float: left; }}
article.bd-article {{ width: 500px; float: left; }}
pre {{ overflow-x: auto; font: 14px monospace; }}
</style></head><body>
<div class="bd-sidebar-primary"><nav class="bd-docs-nav">{nav}</nav></div>
<article class="bd-article"><pre>{code}</pre><p>see <a href="#">{link}</a></p></article>
</body></html>"""


@pytest.fixture(scope="module")
def check():
    sys.path.insert(0, str(ROOT / ".ci"))
    try:
        import check_docs_pages
    finally:
        sys.path.pop(0)
    driver = check_docs_pages.browser(1000)
    yield lambda path, name: check_docs_pages.page_defects(
        (driver.get(path.as_uri()), driver)[1], name)
    driver.quit()


def test_each_defect_is_found_and_a_clean_page_passes(tmp_path, check):
    bad = tmp_path / "bad.html"
    bad.write_text(PAGE.format(nav="", code="x = 1  # " + "long " * 40, link="RESULTS.md"))
    defects = check(bad, "bad.html")
    assert len(defects) == 3, defects
    assert "code block cut" in defects[0] and "x = 1" in defects[0]
    assert "navigation panel is shown empty" in defects[1]
    assert "'RESULTS.md'" in defects[2]
    good = tmp_path / "good.html"
    good.write_text(PAGE.format(nav='<ul><li><a href="#">Guide</a></li></ul>', code="x = 1",
                                link="the results"))
    assert check(good, "good.html") == []


def test_an_api_sidebar_of_every_object_is_found(tmp_path, check):
    items = "".join(f'<li><a href="#">causefs.thing{i}</a></li>' for i in range(30))
    api = tmp_path / "api.html"
    api.write_text(PAGE.format(nav=f"<ul>{items}</ul>", code="x = 1", link="the estimator"))
    assert check(api, "api.html") == [
        "api.html: the sidebar lists 30 entries, not the API's groups (at most 8)"]
