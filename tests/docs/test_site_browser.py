"""The built documentation site as a browser shows it, at 1280 and 1920 px: no table is wider than
the page's content column (a cut-off description), and no list has collapsed into one long
paragraph (a block indented too little, see test_list_blocks.py).

The site is built with `mkdocs build --strict` (the `docs` extra: `make docs` installs it), then
every page is opened in headless Chromium, each in an iframe of the width under test, and measured
in the page itself. Without mkdocs or Chromium the test is skipped, saying which is missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet.test_browser import CHROMIUM

REPO = Path(__file__).resolve().parents[2]
WIDTHS = (1280, 1920)
LONGEST_PARAGRAPH = 2000  # characters; the collapsed performance list made one of ~3,000
_TIMEOUT = 180

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (CI installs it: apt-get install chromium)"),
    pytest.mark.skipif(
        importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (make docs installs it)"
    ),
]

_MEASURE = """<!doctype html><html><body><pre id="result">pending</pre><script>
const pages = %(pages)s, width = %(width)d, found = [];
let left = pages.length;
for (const page of pages) {
  const frame = document.createElement('iframe');
  frame.style.width = width + 'px';
  frame.style.height = '900px';
  frame.src = page;
  frame.onload = () => {
    const doc = frame.contentDocument;
    doc.querySelectorAll('.md-typeset__scrollwrap').forEach((wrap, i) => {
      const table = wrap.querySelector('table');
      if (table && table.getBoundingClientRect().width > wrap.clientWidth + 1) {
        found.push(`${page}: table ${i + 1} is ${Math.round(table.getBoundingClientRect().width)} px in ${wrap.clientWidth} px`);
      }
    });
    doc.querySelectorAll('.md-content p').forEach((p) => {
      if (p.textContent.length > %(longest)d) {
        found.push(`${page}: a paragraph of ${p.textContent.length} characters: ${p.textContent.slice(0, 60)}`);
      }
    });
    if (--left === 0) document.getElementById('result').textContent = JSON.stringify(found);
  };
  document.body.appendChild(frame);
}
</script></body></html>
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run(
        ["mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=REPO,
        env={**env, "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}"},
        check=True,
        timeout=_TIMEOUT,
    )
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_its_tables_and_keeps_its_lists(site: Path, width: int) -> None:
    pages = sorted(str(p.relative_to(site)) for p in site.rglob("index.html") if "assets" not in p.parts)
    probe = site / f"_measure-{width}.html"
    probe.write_text(_MEASURE % {"pages": json.dumps(pages), "width": width, "longest": LONGEST_PARAGRAPH})
    assert CHROMIUM is not None
    run = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--allow-file-access-from-files",  # the probe reads each page's DOM through its iframe
            f"--user-data-dir={site.parent / f'profile-{width}'}",
            "--virtual-time-budget=60000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=_TIMEOUT,
        check=False,
    )
    result = re.search(r'<pre id="result">(.*?)</pre>', run.stdout, re.DOTALL)
    assert result is not None, run.stderr
    assert json.loads(result.group(1).replace("&quot;", '"').replace("&amp;", "&")) == []
