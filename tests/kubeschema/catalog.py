"""Which schema validates an apiVersion/kind: the vendored upstream files, and CRDs rendered from XRDs.

`schemas/upstream/sources.yaml` says which file defines what, so a file is read only when an
object needs it (the LLMInferenceService CRD alone is 2.7 MB). XRDs registered with `add_xrd`
are defaulted by the stored CompositeResourceDefinition CRD, rendered the way Crossplane does
(`xcrd`) and then used like any stored CRD; they win over stored CRDs of the same kind.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, cast

import yaml

from tests.kubeschema import openapi, structural, xcrd

UPSTREAM = Path(__file__).resolve().parents[2] / "schemas" / "upstream"
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CORE = "v1"
# Built-in kinds without a namespace; the OpenAPI documents do not say which kinds those are.
_CLUSTER_SCOPED = frozenset(
    {
        *(("", "Namespace"), ("", "Node"), ("", "PersistentVolume"), ("", "ComponentStatus")),
        *(("resource.k8s.io", "DeviceClass"), ("resource.k8s.io", "ResourceSlice")),
    }
)

Schema = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Source:
    """One vendored file and its provenance (an entry of sources.yaml)."""

    file: str
    repo: str
    path: str
    snapshot: str
    commit: str
    date: str
    bytes: int
    sha256: str
    crd: str | None = None  # <Kind>.<group>
    openapi: str | None = None  # <group/version>


def sources(root: Path = UPSTREAM) -> list[Source]:
    index = yaml.safe_load((root / "sources.yaml").read_text())
    return [Source(**entry) for entry in index["files"]]


@dataclass
class KindSchema:
    """The schema of one apiVersion/kind and how the API server treats it."""

    group: str
    version: str
    kind: str
    origin: str  # what defines it, for reports
    root: Schema  # the raw OpenAPI node of the whole object
    cluster_scoped: bool
    structural: bool  # a CRD: pruning, defaulting and CEL rules apply
    components: Mapping[str, Schema] = field(default_factory=dict[str, Schema])
    served: bool = True
    deprecation: str | None = None
    scale: Schema | None = None

    def resolve(self, node: Schema) -> Schema:
        """`node` with $ref (and OpenAPI's single-entry allOf wrapping a $ref) followed."""
        for _ in range(64):
            ref = node.get("$ref")
            all_of = node.get("allOf")
            if isinstance(ref, str):
                target = self.components.get(ref.rsplit("/", 1)[-1], {})
                node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            elif isinstance(all_of, list) and len(cast("list[Any]", all_of)) == 1 and "$ref" in all_of[0]:
                node = {**cast("Schema", all_of[0]), **{k: v for k, v in node.items() if k != "allOf"}}
            else:
                break
        return node

    @property
    def resolver(self) -> Callable[[Schema], Schema]:
        return self.resolve if self.components else structural.no_refs


class Catalog:
    def __init__(self, root: Path = UPSTREAM) -> None:
        self.root = root
        self._files = {s.crd: s.file for s in sources(root) if s.crd}
        self._documents = {s.openapi: s.file for s in sources(root) if s.openapi}
        self._crds: dict[str, dict[str, KindSchema]] = {}  # <Kind>.<group> -> version -> schema
        self._builtins: dict[str, dict[str, KindSchema]] = {}  # group/version -> kind -> schema
        self._validators: dict[int, tuple[KindSchema, Any]] = {}  # id(schema) -> (schema, validator)

    def lookup(self, api_version: str, kind: str) -> KindSchema | str | None:
        """The schema, an error when the kind exists but not in that version, or None when unknown."""
        group, _, version = api_version.rpartition("/")
        if api_version in self._documents:
            return self._builtin_kinds(api_version).get(kind)
        versions = self._crd_versions(f"{kind}.{group}")
        if versions is None:
            return None
        if version not in versions:
            origin = next(iter(versions.values())).origin
            return (
                f"apiVersion {api_version!r}: {kind} has no version {version!r} in {origin} (has {', '.join(versions)})"
            )
        return versions[version]

    def add_xrd(self, xrd: Mapping[str, Any], origin: str) -> None:
        """Register the composite resource an XRD defines (raises xcrd.XrdError)."""
        defaulted = copy.deepcopy(dict(xrd))
        _, _, version = str(xrd.get("apiVersion", "")).rpartition("/")
        xrd_schema = self.lookup(str(xrd.get("apiVersion", "")), "CompositeResourceDefinition")
        if isinstance(xrd_schema, KindSchema):
            structural.apply_defaults(defaulted, xrd_schema.root)
        if version not in ("v1", "v2"):
            msg = f"apiVersion {xrd.get('apiVersion')!r} is not apiextensions.crossplane.io/v1 or v2"
            raise xcrd.XrdError(msg)
        crd = xcrd.render_crd(defaulted)
        names = crd["spec"]["names"]
        self._crds[f"{names['kind']}.{crd['spec']['group']}"] = _crd_kinds(crd, f"XRD {origin}")

    def object_meta_defs(self) -> dict[str, Any]:
        return _object_meta_defs(self.root / self._documents[_CORE])

    def validator(self, schema: KindSchema) -> Any:
        """The jsonschema validator of a kind (built on first use)."""
        if id(schema) not in self._validators:
            self._validators[id(schema)] = (schema, openapi.new_validator(self._json_schema(schema)))
        return self._validators[id(schema)][1]

    def _json_schema(self, schema: KindSchema) -> dict[str, Any]:
        if not schema.structural:
            root_name = str(schema.root["$ref"]).rsplit("/", 1)[-1]
            return {"$ref": f"#/$defs/{root_name}", "$defs": openapi.builtin_defs(schema.components, [root_name])}
        out = openapi.to_json_schema(schema.root, structural=True)
        props = out.setdefault("properties", {})
        meta: dict[str, Any] = {"$ref": "#/$defs/" + openapi.OBJECT_META}
        # A CRD may constrain only metadata.name (and generateName); ObjectMeta is the API server's.
        own = cast("Schema", cast("Schema", schema.root.get("properties") or {}).get("metadata") or {})
        narrowed = {
            k: v for k, v in cast("Schema", own.get("properties") or {}).items() if k in ("name", "generateName")
        }
        if narrowed:
            meta["properties"] = {
                k: openapi.to_json_schema(v, structural=True, closed=False) for k, v in narrowed.items()
            }
        props["metadata"] = meta
        out["$defs"] = self.object_meta_defs()
        return out

    def _crd_versions(self, name: str) -> dict[str, KindSchema] | None:
        if name not in self._crds and name in self._files:
            path = self.root / self._files[name]
            for crd in load_yaml(path):
                if crd.get("kind") == "CustomResourceDefinition":
                    self._crds[name] = _crd_kinds(crd, f"CRD {self._files[name]}")
        return self._crds.get(name)

    def _builtin_kinds(self, group_version: str) -> dict[str, KindSchema]:
        if group_version not in self._builtins:
            path = self.root / self._documents[group_version]
            self._builtins[group_version] = _openapi_kinds(path, group_version, self._documents[group_version])
        return self._builtins[group_version]


@cache
def load_yaml(path: Path) -> list[dict[str, Any]]:
    """The mappings of a schema file, read once per process."""
    with path.open() as f:
        return [cast("dict[str, Any]", d) for d in yaml.load_all(f, Loader=_LOADER) if isinstance(d, dict)]


@cache
def _load_json(path: Path) -> dict[str, Any]:
    return cast("dict[str, Any]", json.loads(path.read_text()))


@cache
def _object_meta_defs(core: Path) -> dict[str, Any]:
    components = _load_json(core)["components"]["schemas"]
    return openapi.builtin_defs(components, [openapi.OBJECT_META])


def _crd_kinds(crd: Mapping[str, Any], origin: str) -> dict[str, KindSchema]:
    spec = cast("Mapping[str, Any]", crd["spec"])
    group, kind = str(spec["group"]), str(spec["names"]["kind"])
    out: dict[str, KindSchema] = {}
    for version in cast("list[Mapping[str, Any]]", spec["versions"]):
        out[str(version["name"])] = KindSchema(
            group=group,
            version=str(version["name"]),
            kind=kind,
            origin=origin,
            root=cast("Schema", version["schema"]["openAPIV3Schema"]),
            cluster_scoped=spec.get("scope") == "Cluster",
            structural=True,
            served=bool(version.get("served", True)),
            deprecation=str(version.get("deprecationWarning") or "deprecated") if version.get("deprecated") else None,
            scale=cast("Schema | None", cast("Schema", version.get("subresources") or {}).get("scale")),
        )
    return out


def _openapi_kinds(path: Path, group_version: str, shown: str) -> dict[str, KindSchema]:
    components = cast("Mapping[str, Schema]", _load_json(path)["components"]["schemas"])
    group, _, version = group_version.rpartition("/")
    out: dict[str, KindSchema] = {}
    for name, node in components.items():
        gvks = cast("list[Mapping[str, str]]", node.get("x-kubernetes-group-version-kind") or [])
        if len(gvks) != 1:
            continue  # shared types such as DeleteOptions and WatchEvent
        gvk = gvks[0]
        if (gvk.get("group", ""), gvk.get("version")) != (group, version) or not name.endswith("." + gvk["kind"]):
            continue
        out[gvk["kind"]] = KindSchema(
            group=group,
            version=version,
            kind=gvk["kind"],
            origin=f"OpenAPI {shown}",
            root={"$ref": f"#/components/schemas/{name}"},
            cluster_scoped=(group, gvk["kind"]) in _CLUSTER_SCOPED,
            structural=False,
            components=components,
        )
    return out
