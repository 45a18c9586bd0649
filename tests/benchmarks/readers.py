"""The YAML readers `render` could use on a fleet's required resources, timed and checked for meaning.

The input is what `tests.benchmarks.cli` writes for its largest fleet (1,000 clusters x 8 pools,
10,000 replicas: ~18 MiB of YAML, as PyYAML's C dumper writes it). Each reader turns the text into
what render needs: JSON-shaped documents (then Struct bytes for the function, through the same
wire encoder for every reader, where the reader does not encode itself). Timed in this process, one
core, median of the runs: wall and CPU seconds (the CPU of the fan-out's workers included). The
fan-out rows use every core (at most 8). On a busy machine the wall time grows and the CPU time
does not: compare readers by CPU.

Beside speed, each reader is checked against PyYAML's safe loader, the semantics render keeps
(YAML 1.1, which Kubernetes' go-yaml v2 fork shares: `yes` is true, `010` is 8): on the fleet
itself, and on a probe of YAML 1.1 scalars. A reader that is not installed is listed as such.

The optional readers are not dependencies of the project: `pip install ruamel.yaml rapidyaml ryaml
yaml-rs` into the venv to measure them (imported by name, so the type checker does not need them).

Usage: python -m tests.benchmarks.readers [--quick] [--runs N]
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.util
import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from modelplane_function.cli.render import fanout, yamlio
from modelplane_function.cli.render.wire import ObjectEncoder

from tests.benchmarks.cli import SIZES, write_inputs

PROBE = "a: yes\nb: off\nc: 010\nd: 0x1f\ne: 1_000\nf: ~\ng: 1:20\nh: .inf\ni: '010'\nj: 2024-01-01\n"


def _jsonable(value: Any) -> Any:
    """A safe loader's result as render sees it: timestamps as their RFC 3339 text, keys as strings."""
    if isinstance(value, datetime.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _encoded(docs: list[Any]) -> list[bytes]:
    encoder = ObjectEncoder()
    return [encoder.struct(d) for d in docs if d is not None]


def _pyyaml(text: str) -> list[Any]:
    return [_jsonable(d) for d in yaml.load_all(text, Loader=yaml.CSafeLoader)]


def _pyyaml_parts(text: str) -> list[bytes]:
    return _encoded(_pyyaml(text))


def _pyyaml_fanout(text: str) -> list[bytes]:
    """The same fan-out as render's (fanout.parts, forked workers), with PyYAML in each part."""
    cut = fanout.parts(text, min(fanout._cores(), fanout.MAX_PARTS))
    if cut is None:
        return _pyyaml_parts(text)
    with ProcessPoolExecutor(len(cut) - 1, mp_context=multiprocessing.get_context("fork")) as pool:
        rest = pool.map(_pyyaml_parts, cut[1:])
        parts = [_pyyaml_parts(cut[0]), *rest]
    return [doc for part in parts for doc in part]


def _ruamel(text: str) -> list[Any]:
    reader = importlib.import_module("ruamel.yaml").YAML(typ="safe", pure=False)  # the C parser (ruamel.yaml.clib)
    reader.version = (1, 1)  # its default is YAML 1.2, which Kubernetes does not read
    return [_jsonable(d) for d in reader.load_all(text)]


def _ryml(text: str) -> list[Any]:
    """rapidyaml parses into a C++ tree of strings: scalars are typed here by PyYAML's resolver."""
    ryml = importlib.import_module("ryml")
    tree = ryml.parse_in_arena(text.encode())
    plain = yamlio._plain_reader()

    def scalar(data: memoryview, quoted: bool) -> Any:
        text = bytes(data).decode()
        return text if quoted else plain(text)

    def node(n: int) -> Any:
        if tree.is_map(n):
            out: dict[str, Any] = {}
            child = tree.first_child(n)
            while child != ryml.NONE:
                key = scalar(tree.key(child), tree.is_key_quoted(child))
                out[key if isinstance(key, str) else str(key)] = node(child)
                child = tree.next_sibling(child)
            return out
        if tree.is_seq(n):
            items = []
            child = tree.first_child(n)
            while child != ryml.NONE:
                items.append(node(child))
                child = tree.next_sibling(child)
            return items
        return None if tree.val_is_null(n) else scalar(tree.val(n), tree.is_val_quoted(n))

    tree.resolve()  # aliases: copies of what they refer to
    root = tree.root_id()
    docs = [root] if not tree.is_stream(root) else list(ryml.children(tree, root))
    return [node(d) for d in docs]


def _ryaml(text: str) -> list[Any]:
    return list(importlib.import_module("ryaml").loads_all(text))


def _yaml_rs(text: str) -> list[Any]:
    docs = importlib.import_module("yaml_rs").loads(text, parse_datetime=False)
    return docs if "\n---" in text else [docs]


@dataclass(frozen=True, slots=True, kw_only=True)
class Reader:
    name: str
    module: str | None  # what must be installed (None: always there)
    read: Callable[[str], list[Any]]  # text -> documents (for the meaning checks)
    encode: Callable[[str], Sequence[Any]]  # text -> what render passes the function


READERS = (
    Reader(name="modelplane block reader + fan-out", module=None, read=yamlio.load_all, encode=fanout.encode_all),
    Reader(name="modelplane block reader, one core", module=None, read=yamlio.load_all, encode=yamlio.encode_all),
    Reader(name="PyYAML CSafeLoader + fan-out", module=None, read=_pyyaml, encode=_pyyaml_fanout),
    Reader(name="PyYAML CSafeLoader, one core", module=None, read=_pyyaml, encode=_pyyaml_parts),
    Reader(
        name="ruamel.yaml safe C, YAML 1.1",
        module="ruamel.yaml",
        read=_ruamel,
        encode=lambda t: _encoded(_ruamel(t)),
    ),
    Reader(
        name="rapidyaml + PyYAML resolver",
        module="ryml",
        read=_ryml,
        encode=lambda t: _encoded(_ryml(t)),
    ),
    Reader(name="ryaml (serde_yaml)", module="ryaml", read=_ryaml, encode=lambda t: _encoded(_ryaml(t))),
    Reader(name="yaml-rs (saphyr)", module="yaml_rs", read=_yaml_rs, encode=lambda t: _encoded(_yaml_rs(t))),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    name: str
    wall: float | None  # median seconds; None: not installed
    cpu: float | None
    same_fleet: bool | None  # reads the fleet as the safe loader does
    same_probe: bool | None  # reads YAML 1.1 scalars as the safe loader does


def _same(read: Callable[[str], list[Any]], text: str, want: list[Any]) -> bool:
    try:
        return read(text) == want
    except Exception:  # noqa: BLE001 - a reader that fails to read it does not read it the same
        return False


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the fan-out's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def missing(module: str | None) -> bool:
    """Whether a reader's module is not installed (find_spec raises for a submodule of a missing package)."""
    if module is None:
        return False
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:
        return True


def measure(reader: Reader, text: str, want: list[Any], runs: int) -> Result:
    if missing(reader.module):
        return Result(name=reader.name, wall=None, cpu=None, same_fleet=None, same_probe=None)
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        with yamlio.collector_paused():  # as render reads: see yamlio
            cpu, wall = _cpu(), time.perf_counter()
            reader.encode(text)
            walls.append(time.perf_counter() - wall)
            cpus.append(_cpu() - cpu)
    return Result(
        name=reader.name,
        wall=statistics.median(walls),
        cpu=statistics.median(cpus),
        same_fleet=_same(reader.read, text, want),
        same_probe=_same(reader.read, PROBE, _pyyaml(PROBE)),
    )


def _yes(flag: bool | None) -> str:
    return "-" if flag is None else "yes" if flag else "NO"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="the 100-cluster fleet instead of the 1,000-cluster one")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    size = SIZES[0] if args.quick else SIZES[-1]
    with tempfile.TemporaryDirectory() as tmp:
        _, required = write_inputs(size, Path(tmp))
        text = required.read_text()
    want = _pyyaml(text)
    print(
        f"Reading {size.label()}: {len(text.encode()) / 2**20:.1f} MiB, {len(want)} documents, {fanout._cores()} cores"
    )
    print(f"  {'READER':<36} {'WALL s':>7} {'CPU s':>7}  {'SAME AS SAFE LOADER: FLEET':>27}  YAML 1.1 SCALARS")
    for reader in READERS:
        r = measure(reader, text, want, args.runs)
        if r.wall is None or r.cpu is None:
            print(f"  {r.name:<36} not installed")
            continue
        print(f"  {r.name:<36} {r.wall:7.2f} {r.cpu:7.2f}  {_yes(r.same_fleet):>27}  {_yes(r.same_probe)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
