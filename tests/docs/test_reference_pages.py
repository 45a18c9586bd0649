"""The hand-written reference pages name everything the code can say, and the generated ones are current."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from modelplane import names
from modelplane.render import llmis
from modelplane.scheduler import filters, retain, unreadable

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
SCRIPT = REPO / "scripts" / "gen_cli_reference.py"
SOURCES = [p for root in ("lib", "functions") for p in (REPO / root).rglob("*.py") if p.name != "names.py"]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_cli_reference", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


gen = _load()


def _constants(module: ModuleType, prefix: str) -> dict[str, str]:
    return {k: v for k, v in vars(module).items() if k.startswith(prefix) and isinstance(v, str)}


def _used(constants: dict[str, str]) -> set[str]:
    """The values of the constants some module other than names.py refers to."""
    code = "\n".join(p.read_text() for p in SOURCES)
    return {v for k, v in constants.items() if re.search(rf"\b{k}\b", code)}


@dataclass(frozen=True)
class Case:
    name: str
    page: str
    want: set[str]


CASES = [
    Case(
        "the conditions page names every condition and reason the function sets",
        "reference/conditions.md",
        _used(_constants(names, "CONDITION_")) | _used(_constants(names, "REASON_")) | {"InferenceClassNotFound"},
    ),
    Case(
        "the scheduling page names every reason a cluster is turned down or a replica removed",
        "explanation/scheduling.md",
        {
            *_constants(filters, "REASON_").values(),
            *_constants(retain, "REASON_").values(),
            *_constants(unreadable, "REASON_").values(),
        },
    ),
    Case(
        "the labels page names every label and annotation the function writes",
        "reference/labels-and-annotations.md",
        {v for k, v in _constants(names, "LABEL_").items()}
        | {llmis.KAI_QUEUE_LABEL, llmis.KAI_SUBGROUP_LABEL, llmis.KAI_SKIP_PODGROUPER_ANNOTATION}
        | {llmis.KAI_POD_GROUP_ANNOTATION},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_page_names_everything_the_code_says(case: Case) -> None:
    text = (DOCS / case.page).read_text()
    assert sorted(w for w in case.want if f"`{w}`" not in text) == []


def test_the_code_map_lists_every_module_of_every_package() -> None:
    rows = re.findall(r"^\| `([a-z_/]+/)` \| [^|]+ \| ((?:`\w+` ?)+) \|$", (DOCS / "development.md").read_text(), re.M)
    shown = {package: sorted(re.findall(r"`(\w+)`", modules)) for package, modules in rows}
    packages = [p.parent for root in ("lib", "functions") for p in (REPO / root).rglob("__init__.py")]
    on_disk = {
        f"{p.relative_to(REPO)}/": sorted(m.stem for m in p.glob("*.py") if m.name != "__init__.py") for p in packages
    }
    on_disk = {package: modules for package, modules in on_disk.items() if modules}
    assert shown == on_disk


def test_the_committed_cli_reference_is_current() -> None:
    committed = (DOCS / "reference" / "cli.md").read_text()
    assert committed == gen.generate(), "stale: run .venv/bin/python scripts/gen_cli_reference.py"


def test_check_mode_fails_on_a_stale_cli_reference_and_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text("# CLI reference\n\nout of date\n")
    monkeypatch.setattr(gen, "OUTPUT", stale)
    monkeypatch.setattr(gen, "REPO", tmp_path)
    assert (gen.main(["--check"]), stale.read_text()) == (1, "# CLI reference\n\nout of date\n")
    assert (gen.main([]), gen.main(["--check"])) == (0, 0)


def test_cli_check_mode_passes_on_the_committed_file_from_the_command_line() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stderr) == (0, "")
