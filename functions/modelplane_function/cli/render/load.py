"""Reading render inputs: YAML files or directories of documents, and the Composition for an XR."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml

from modelplane_function.cli.render import fanout, yamlio
from modelplane_function.cli.render.errors import RenderFailure
from modelplane_function.cli.render.wire import Doc

DEFAULT_FUNCTION = "function-modelplane"
T = TypeVar("T")


def _files(path: Path) -> list[Path]:
    if path.is_dir():  # like crossplane render: *.yaml and *.yml, not recursive, sorted by name
        return sorted(p for p in path.iterdir() if p.suffix in {".yaml", ".yml"} and p.is_file())
    return [path]


def _read(file: Path, parse: Callable[[str], list[T]]) -> list[T]:
    try:
        return parse(yamlio.decode(file.read_bytes()))
    except (OSError, yaml.YAMLError) as e:
        msg = f"cannot read {file}: {e}"
        raise RenderFailure(msg) from e
    except UnicodeDecodeError as e:
        msg = f"cannot read {file}: not UTF-8 or UTF-16 text ({e.reason} at byte {e.start})"
        raise RenderFailure(msg) from e
    except RecursionError as e:
        msg = f"cannot read {file}: nested too deeply (or an alias refers to itself)"
        raise RenderFailure(msg) from e
    except yamlio.NotAnObjectError as e:
        msg = f"{file}: a document is not an object"
        raise RenderFailure(msg) from e


def documents(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Every non-empty document of the files (directories: their YAML files), in order."""
    out: list[dict[str, Any]] = []
    for path in paths:
        for file in _files(path):
            for doc in _read(file, yamlio.load_all):
                if doc is None:
                    continue
                if not isinstance(doc, Mapping):
                    msg = f"{file}: a document is not an object"
                    raise RenderFailure(msg)
                out.append(dict(doc))  # pyright: ignore[reportUnknownArgumentType]
    return out


def required(paths: Iterable[Path]) -> list[Doc]:
    """`documents`, encoded for the function: what a fleet's required resources are read as."""
    return [doc for _, doc in required_by_file(paths)]


def required_by_file(paths: Iterable[Path]) -> list[tuple[Path, Doc]]:
    """`required`, each document with the file it came from."""
    return [(file, doc) for path in paths for file in _files(path) for doc in _read(file, fanout.encode_all)]


def single(path: Path) -> dict[str, Any]:
    docs = documents([path])
    if len(docs) != 1:
        msg = f"{path}: expected exactly one document, found {len(docs)}"
        raise RenderFailure(msg)
    return docs[0]


def default_apis() -> Path:
    """This repository's apis/ (next to lib/ and functions/), else ./apis."""
    repo = Path(__file__).resolve().parents[4] / "apis"  # functions/modelplane_function/cli/render/load.py
    return repo if repo.is_dir() else Path("apis")


def compositions(apis: Path) -> list[dict[str, Any]]:
    files = sorted(p for p in apis.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file())
    docs = documents(files)
    group = "apiextensions.crossplane.io/"
    return [d for d in docs if d.get("kind") == "Composition" and str(d.get("apiVersion", "")).startswith(group)]


def composition_for(xr: Mapping[str, Any], candidates: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The Composition for the XR: its compositionRef if set, else the one whose compositeTypeRef matches."""
    ref = ((xr.get("spec") or {}).get("crossplane") or {}).get("compositionRef") or {}

    def fits(c: Mapping[str, Any]) -> bool:
        ref_type = (c.get("spec") or {}).get("compositeTypeRef") or {}
        if (ref_type.get("apiVersion"), ref_type.get("kind")) != (xr.get("apiVersion"), xr.get("kind")):
            return False
        return not ref.get("name") or (c.get("metadata") or {}).get("name") == ref.get("name")

    matching = [c for c in candidates if fits(c)]
    if len(matching) != 1:
        what = f"{xr.get('apiVersion')} {xr.get('kind')}"
        msg = f"expected one Composition for {what}, found {len(matching)}" + _known(xr, candidates)
        raise RenderFailure(msg)
    composition = dict(matching[0])
    if (composition.get("spec") or {}).get("mode") != "Pipeline":
        msg = f"Composition {composition.get('metadata', {}).get('name')}: spec.mode must be Pipeline"
        raise RenderFailure(msg)
    return composition


def _known(xr: Mapping[str, Any], candidates: Sequence[Mapping[str, Any]]) -> str:
    """What there are Compositions for, when the XR's apiVersion or kind matches none (a typo, often)."""
    types = sorted(
        {
            (str(t.get("apiVersion", "")), str(t.get("kind", "")))
            for c in candidates
            for t in [(c.get("spec") or {}).get("compositeTypeRef") or {}]
        }
    )
    if any(t == (xr.get("apiVersion"), xr.get("kind")) for t in types):
        return ""  # the type exists: the compositionRef or a duplicate is the problem, not a typo
    versions = [v for v, k in types if k == xr.get("kind")]
    if versions:
        return f": {xr.get('kind')} exists as apiVersion {' or '.join(versions)}"
    if not types:
        return ": no Composition was found at all (--apis names the directory to search)"
    return f": Compositions here are for {', '.join(f'{v} {k}' for v, k in types)}"
