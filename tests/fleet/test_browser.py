"""A real browser opens `modelplane fleet --output html` for every example and shows the fleet.

The page is written by the function behind `modelplane fleet --output html` (tests/fleet/test_cli.py
checks the command writes the same page), and headless Chromium loads it from disk. --dump-dom gives the document as the browser built it:
every cluster and pool of the example's inputs, every replica chip and the diagnosis must be text
in it. --screenshot must give a PNG of the window's size that is not blank and shows each
deployment's colour (the legend is at the top of the page).
"""

from __future__ import annotations

import colorsys
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane.fleet import FleetView, page
from modelplane.fleet.page import chip_caption, colours
from modelplane.fleet.text import placement
from modelplane_function.cli.main import fleet_for

from tests.fleet import png

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "xr.yaml").is_file())
WINDOW = (1280, 900)
_TIMEOUT = 120
_MANY_COLOURS = 100  # a blank or single-colour page has a handful (anti-aliasing adds a few)


def _chromium() -> str | None:
    found = shutil.which("chromium")
    if found is None and Path("/usr/bin/chromium").is_file():
        found = "/usr/bin/chromium"
    return found


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (CI installs it: apt-get install chromium)"
)


def _inputs(name: str, kind: str) -> list[Path]:
    path = EXAMPLES / name / f"{kind}-resources.yaml"
    return [path] if path.is_file() else []


def _args(name: str) -> list[str]:
    out = [str(EXAMPLES / name / "xr.yaml")]
    for path in _inputs(name, "required"):
        out += ["-e", str(path)]
    for path in _inputs(name, "observed"):
        out += ["--observed-resources", str(path)]
    return out


@dataclass(frozen=True)
class Opened:
    """What the browser made of one example's page."""

    view: FleetView
    returncode: int
    stderr: str
    dom: str
    screenshot: png.Image | None


def _open(name: str, workdir: Path) -> Opened:
    view, _ = fleet_for(
        EXAMPLES / name / "xr.yaml", required=_inputs(name, "required"), observed=_inputs(name, "observed")
    )
    html = workdir / f"{name}.html"
    html.write_text(page(view))
    shot = workdir / f"{name}.png"
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--hide-scrollbars",
        f"--user-data-dir={workdir / f'{name}-profile'}",  # fresh: no shared state, no lock held by another run
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        f"--screenshot={shot}",
        "--dump-dom",
        html.as_uri(),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    image = png.read(shot.read_bytes()) if shot.is_file() else None
    return Opened(view=view, returncode=run.returncode, stderr=run.stderr, dom=run.stdout, screenshot=image)


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Opened]:
    """Every example's page, opened by browsers running side by side (each takes seconds to start)."""
    workdir = tmp_path_factory.mktemp("fleet-pages")
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(NAMES, pool.map(lambda n: _open(n, workdir), NAMES), strict=True))


class _Text(HTMLParser):
    """The text nodes of <body>, whitespace collapsed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: set[str] = set()
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: Any) -> None:  # noqa: ARG002 - HTMLParser's signature
        self._in_body = self._in_body or tag == "body"

    def handle_data(self, data: str) -> None:
        text = " ".join(data.split())
        if self._in_body and text:
            self.texts.add(text)


def _shown(dom: str) -> set[str]:
    parser = _Text()
    parser.feed(dom)
    return parser.texts


@cache
def _fleet_inputs(name: str) -> tuple[set[str], set[str]]:
    """Cluster and pool names, read straight from the example's InferenceClusters."""
    clusters: set[str] = set()
    pools: set[str] = set()
    for path in _inputs(name, "required"):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "InferenceCluster":
                clusters.add(doc["metadata"]["name"])
                published = (doc.get("status") or {}).get("gpuPools") or doc["spec"].get("nodePools") or []
                pools.update(p["name"] for p in published)
    return clusters, pools


def _rgb(css: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"hsl\((\d+) (\d+)% (\d+)%\)", css)
    assert match is not None, css
    hue, sat, light = (int(g) for g in match.groups())
    r, g, b = colorsys.hls_to_rgb(hue / 360, light / 100, sat / 100)
    return round(r * 255), round(g * 255), round(b * 255)


def test_there_are_examples_to_open() -> None:
    assert len(NAMES) >= 1


@pytest.mark.parametrize("name", NAMES)
def test_the_browser_shows_every_cluster_pool_replica_and_the_diagnosis(name: str, opened: dict[str, Opened]) -> None:
    got = opened[name]
    assert got.returncode == 0, got.stderr
    view = got.view
    clusters, pools = _fleet_inputs(name)
    chips = {chip_caption(c) for cl in view.clusters for p in cl.pools for c in p.chips}
    diagnosis = " ".join(f"Diagnosis: {view.summary}".split())
    want = {*clusters, *pools, *chips, diagnosis, placement(view), f"Fleet for ModelDeployment {view.subject}"}
    assert want - _shown(got.dom) == set()


@pytest.mark.parametrize("name", NAMES)
def test_the_screenshot_is_a_full_window_with_the_fleet_in_colour(name: str, opened: dict[str, Opened]) -> None:
    got = opened[name]
    assert got.screenshot is not None, got.stderr
    seen = got.screenshot.colours()
    missing = {owner for owner, css in colours(got.view).items() if _rgb(css) not in seen}
    size = (got.screenshot.width, got.screenshot.height)
    assert (size, len(seen) > _MANY_COLOURS, missing) == (WINDOW, True, set())
