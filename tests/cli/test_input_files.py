"""Input files as editors and attackers write them: a byte-order mark, UTF-16, an alias bomb, a
number no JSON holds. Each reader path gives the document the file holds, or a clear error fast."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from modelplane_function.cli.main import main
from modelplane_function.cli.render import fanout, load

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
SCALE_UP = REPO / "examples" / "scale-up"  # it has observed resources: replicas that must stay
MODELPLANE = str(Path(sys.executable).parent / "modelplane")
ENCODINGS = {"UTF-8 with a BOM": "utf-8-sig", "UTF-16 LE with a BOM": "utf-16-le", "UTF-16 BE with a BOM": "utf-16-be"}


def _block_style(name: str, example: Path = QUICKSTART) -> str:
    """An example file as a dumper writes it: the fast reader takes it, and the mark sits before `apiVersion:`."""
    return yaml.safe_dump_all(yaml.safe_load_all((example / name).read_text()), sort_keys=False, width=1 << 20)


def _encoded(text: str, encoding: str) -> bytes:
    # utf-16-le/-be write no mark themselves: the mark is what says which one a reader must use.
    return text.encode(encoding) if encoding == "utf-8-sig" else ("\ufeff" + text).encode(encoding)


def _parallel_required(paths: list[Path]) -> Any:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fanout, "PARALLEL_FROM", 0)
        m.setattr(fanout, "_cores", lambda: 3)
        return load.required(paths)


READERS: dict[str, Callable[[list[Path]], Any]] = {
    "documents (XR, observed resources)": load.documents,
    "required resources": load.required,
    "required resources on every core": _parallel_required,
}


@pytest.mark.parametrize("encoding", ENCODINGS.values(), ids=ENCODINGS.keys())
@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_every_reader_reads_a_file_with_a_byte_order_mark_as_without(
    reader: Callable[[list[Path]], Any], encoding: str, tmp_path: Path
) -> None:
    plain, marked = tmp_path / "plain.yaml", tmp_path / "marked.yaml"
    plain.write_text(_block_style("required-resources.yaml"))
    marked.write_bytes(_encoded(_block_style("required-resources.yaml"), encoding))
    assert reader([marked]) == reader([plain])


@pytest.mark.parametrize("encoding", ENCODINGS.values(), ids=ENCODINGS.keys())
def test_render_of_files_with_a_byte_order_mark_is_the_render_without(encoding: str, tmp_path: Path) -> None:
    names = ("xr.yaml", "required-resources.yaml", "observed-resources.yaml")
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    for d in (plain, marked):
        d.mkdir()
    for name in names:
        (plain / name).write_text(_block_style(name, SCALE_UP))
        (marked / name).write_bytes(_encoded(_block_style(name, SCALE_UP), encoding))

    def render(d: Path) -> Any:
        return CliRunner().invoke(main, ["render", str(d / names[0]), "-e", str(d / names[1]), "-o", str(d / names[2])])

    want, got = render(plain), render(marked)
    assert (got.exit_code, got.stdout, got.stderr) == (want.exit_code, want.stdout, want.stderr)


def test_a_file_in_no_encoding_yaml_allows_is_refused_by_name(tmp_path: Path) -> None:
    bad = tmp_path / "required-resources.yaml"
    bad.write_bytes(b"kind: \xff\n")
    got = CliRunner().invoke(main, ["render", str(QUICKSTART / "xr.yaml"), "-e", str(bad)])
    assert (got.exit_code, got.stdout, got.stderr) == (
        1,
        "",
        f"Error: cannot read {bad}: not UTF-8 or UTF-16 text (invalid start byte at byte 6)\n",
    )


# 400 bytes describing 9^9 (387 million) nodes: the "billion laughs".
BOMB = "\n".join(
    [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata: {name: bomb}",
        "data:",
        '  a: &a ["x","x","x","x","x","x","x","x","x"]',
        *(
            f"  {n}: &{n} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]"
            for p, n in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "",
    ]
)
HUGE = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge}\ndata: {n: " + "9" * 400 + "}\n"


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("an alias bomb", BOMB, "document contains excessive aliasing (Kubernetes' YAML reader refuses it too)"),
        ("a 400-digit integer", HUGE, "an integer of 400 digits is too large for a JSON number"),
    ],
    ids=["an alias bomb", "a 400-digit integer"],
)
def test_a_hostile_required_resources_file_fails_fast_with_the_reason(
    name: str, text: str, error: str, tmp_path: Path
) -> None:
    bad = tmp_path / "required-resources.yaml"
    bad.write_text((QUICKSTART / "required-resources.yaml").read_text() + "---\n" + text)
    start = time.monotonic()
    got = subprocess.run(
        [MODELPLANE, "render", str(QUICKSTART / "xr.yaml"), "-e", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    first = got.stderr.splitlines()[0] if got.stderr else ""
    assert (got.returncode, got.stdout, first.startswith(f"Error: cannot read {bad}: {error}")) == (1, "", True), (
        name,
        got.stderr,
    )
    assert time.monotonic() - start < 20, name  # seconds: the bound is checked as it is counted
