"""The vendored schemas are the upstream files sources.yaml names: exact bytes, sha256 and definitions."""

from __future__ import annotations

import hashlib
import json
import re

from tests.kubeschema.catalog import UPSTREAM, load_yaml, sources


def test_every_file_is_indexed_once() -> None:
    on_disk = sorted(str(p.relative_to(UPSTREAM)) for p in UPSTREAM.rglob("*") if p.is_file())
    assert on_disk == sorted([s.file for s in sources()] + ["sources.yaml"])


def test_sizes_and_hashes_match_the_index() -> None:
    got = [(s.file, (UPSTREAM / s.file).stat().st_size, _sha256(s.file)) for s in sources()]
    assert got == [(s.file, s.bytes, s.sha256) for s in sources()]


def _sha256(file: str) -> str:
    return hashlib.sha256((UPSTREAM / file).read_bytes()).hexdigest()


def test_each_file_defines_what_the_index_says() -> None:
    got: list[tuple[str, list[str | None]]] = []
    want: list[tuple[str, list[str | None]]] = []
    for source in sources():
        path = UPSTREAM / source.file
        if path.suffix == ".json":
            document = json.loads(path.read_text())
            kinds = {
                gvk.get("group", "") + "/" + gvk["version"] if gvk.get("group") else gvk["version"]
                for schema in document["components"]["schemas"].values()
                for gvk in schema.get("x-kubernetes-group-version-kind", [])
                if len(schema["x-kubernetes-group-version-kind"]) == 1
            }
            # The core document also carries subresource kinds of other groups (TokenRequest, Scale, ...).
            got.append((source.file, [source.openapi] if source.openapi in kinds else sorted(kinds)))
            want.append((source.file, [source.openapi]))
        else:
            crds = load_yaml(path)
            got.append((source.file, [f"{d['spec']['names']['kind']}.{d['spec']['group']}" for d in crds]))
            want.append((source.file, [source.crd]))
    assert got == want


def test_the_readme_table_lists_the_same_files_and_hashes() -> None:
    readme = (UPSTREAM.parent / "README.md").read_text()
    rows = re.findall(r"^\| (\S+) \|.*\| (\d+) \| ([0-9a-f]{16}) \|$", readme, re.MULTILINE)
    assert rows == [(s.file, str(s.bytes), s.sha256[:16]) for s in sources()]
