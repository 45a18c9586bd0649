"""What the offline commands say on stderr by default: the main cause of unplaced replicas with its
numbers, the apiVersions that exist, both files of a duplicate, an assumed namespace, and a --debug
log without colour where colour cannot be shown."""

from __future__ import annotations

import copy
import io
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from modelplane_function.cli.main import main
from modelplane_function.server.logged import colours

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
MODELPLANE = str(Path(sys.executable).parent / "modelplane")

SIXTEEN = (
    "ModelDeployment team-chat/qwen3-8b: ReplicasScheduled=False NoSuitableCluster: Scheduled 0 of 2 replicas; "
    "0/2 clusters are available for the rest: 2 had no pool matching an engine's devices. Main cause: eu-west-1 "
    "had no pool matching an engine's devices (engine main: member Standalone device request gpu: asks for 16 "
    "devices per node; the matching devices (gpu) have at most 8 per node); "
)


def _inputs(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    (tmp_path / "xr.yaml").write_text(edit((QUICKSTART / "xr.yaml").read_text()))
    (tmp_path / "required-resources.yaml").write_text((QUICKSTART / "required-resources.yaml").read_text())
    return tmp_path


def _sixteen(xr: str) -> str:
    return xr.replace("count: 1\n", "count: 16\n", 1)


def _eight_gpus_eight_replicas(xr: str) -> str:
    return xr.replace("count: 1\n", "count: 8\n", 1).replace("replicas: 2\n", "replicas: 8\n", 1)


def _with_small_clusters(d: Path) -> list[str]:
    """Two more clusters of 4-GPU nodes, which an 8-GPU engine can never use: the commonest reason, not the cause."""
    docs = list(yaml.safe_load_all((d / "required-resources.yaml").read_text()))
    for name in ("ada-1", "ada-2"):
        small = copy.deepcopy(docs[1])
        small["metadata"]["name"] = name
        small["spec"]["nodePools"][0]["devices"][0]["count"] = 4
        small["status"]["gpuPools"] = small["spec"]["nodePools"]
        docs.append(small)
    (d / "required-resources.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return _render(d)


def _misspelt_selector(xr: str) -> str:
    return xr.replace("fleet: production", "fleet: prodution", 1)


def _without_clusters(d: Path) -> list[str]:
    (d / "required-resources.yaml").write_text("")
    return _render(d)


NO_CLUSTERS = (
    "modelplane: ModelDeployment team-chat/qwen3-8b: ReplicasScheduled=False NoClusters: no InferenceCluster "
    "matches the deployment's clusterSelector. Main cause: "
)
NEAREST = (
    "the clusterSelector wants fleet=prodution; the nearest of 2 clusters is eu-west-1 (labels "
    "fleet=production,topology.kubernetes.io/region=eu-west-1; wants fleet=prodution); "
)


def _no_namespace(xr: str) -> str:
    return xr.replace("  namespace: team-chat\n", "", 1)


def _render(d: Path) -> list[str]:
    return ["render", str(d / "xr.yaml"), "-e", str(d / "required-resources.yaml")]


def _fleet(d: Path) -> list[str]:
    return ["fleet", str(d / "xr.yaml"), "-e", str(d / "required-resources.yaml")]


def _plan(d: Path) -> list[str]:
    return ["plan", str(d)]


@dataclass(frozen=True)
class Said:
    name: str
    edit: Callable[[str], str]
    command: Callable[[Path], list[str]]
    want_code: int
    want_stderr: str


NOTE = (
    "modelplane: note: ModelDeployment qwen3-8b has no metadata.namespace: rendered in namespace default, as "
    "kubectl apply without -n would in a default context; set metadata.namespace to choose\n"
)

SAID = [
    Said(
        name="render names the main cause with its numbers and points to --explain",
        edit=_sixteen,
        command=_render,
        want_code=4,
        want_stderr=f"modelplane: {SIXTEEN}--explain has the rest.\n",
    ),
    Said(
        name="fleet names the main cause and points to its own view",
        edit=_sixteen,
        command=_fleet,
        want_code=4,
        want_stderr=f"modelplane: {SIXTEEN}the fleet view has the rest.\n",
    ),
    Said(
        name="plan names the main cause and points to the plan",
        edit=_sixteen,
        command=_plan,
        want_code=4,
        want_stderr=f"modelplane: {SIXTEEN}the plan has the rest.\n",
    ),
    Said(
        name="the main cause is the nearest miss, the full cluster, not the commonest reason",
        edit=_eight_gpus_eight_replicas,
        command=_with_small_clusters,
        want_code=4,
        want_stderr="modelplane: ModelDeployment team-chat/qwen3-8b: ReplicasScheduled=False InsufficientCapacity: "
        "Scheduled 7 of 8 replicas; 0/4 clusters are available for the rest: 2 had no pool matching an engine's "
        "devices, 2 had no pool with enough free nodes. Main cause: eu-west-1 had no pool with enough free nodes "
        "(pool a100: 0 free nodes, engine main needs 1); --explain has the rest.\n",
    ),
    Said(
        name="a clusterSelector matching nothing names what it wants and the nearest cluster's labels",
        edit=_misspelt_selector,
        command=_render,
        want_code=3,
        want_stderr=f"{NO_CLUSTERS}{NEAREST}--explain has the rest.\n",
    ),
    Said(
        name="plan names what the clusterSelector wants and the nearest cluster's labels",
        edit=_misspelt_selector,
        command=_plan,
        want_code=3,
        want_stderr=f"{NO_CLUSTERS}{NEAREST}the plan has the rest.\n",
    ),
    Said(
        name="fleet, with no view to draw, shows what the clusterSelector wants of which clusters",
        edit=_misspelt_selector,
        command=_fleet,
        want_code=1,
        want_stderr="Error: team-chat/qwen3-8b: not scheduled (NoClusters): no InferenceCluster matches the "
        "deployment's clusterSelector\nCluster selector: wants fleet=prodution; no InferenceCluster matches it.\n"
        "  CLUSTER    LABELS                                                    FAILS\n"
        "  eu-west-1  fleet=production,topology.kubernetes.io/region=eu-west-1  fleet=prodution\n"
        "  us-east-1  fleet=production,topology.kubernetes.io/region=us-east-1  fleet=prodution\n"
        "Nearest miss: eu-west-1.\n",
    ),
    Said(
        name="a fleet without clusters is said to have none",
        edit=str,
        command=_without_clusters,
        want_code=3,
        want_stderr=f"{NO_CLUSTERS}no InferenceCluster was given at all: none of the input files holds one; "
        "--explain has the rest.\n",
    ),
    Said(
        name="render says a missing namespace becomes default",
        edit=_no_namespace,
        command=_render,
        want_code=0,
        want_stderr=NOTE,
    ),
    Said(
        name="fleet says a missing namespace becomes default",
        edit=_no_namespace,
        command=_fleet,
        want_code=0,
        want_stderr=NOTE,
    ),
    Said(
        name="plan says a missing namespace becomes default",
        edit=_no_namespace,
        command=_plan,
        want_code=0,
        want_stderr=NOTE,
    ),
    Said(
        name="a wrong apiVersion is told the one that exists",
        edit=lambda xr: xr.replace("modelplane.ai/v1alpha1", "modelplane.ai/v1", 1),
        command=_render,
        want_code=1,
        want_stderr="Error: expected one Composition for modelplane.ai/v1 ModelDeployment, found 0: "
        "ModelDeployment exists as apiVersion modelplane.ai/v1alpha1\n",
    ),
    Said(
        name="a kind nothing composes is told every type there is",
        edit=lambda xr: xr.replace("kind: ModelDeployment", "kind: ModelDeploymnt", 1),
        command=_render,
        want_code=1,
        want_stderr="Error: expected one Composition for modelplane.ai/v1alpha1 ModelDeploymnt, found 0: "
        "Compositions here are for modelplane.ai/v1alpha1 FleetQuota, modelplane.ai/v1alpha1 InferenceCluster, modelplane.ai/v1alpha1 "
        "ModelDemand, modelplane.ai/v1alpha1 ModelDeployment, modelplane.ai/v1alpha1 ModelReplica\n",
    ),
    Said(
        name="no Composition at all points to --apis",
        edit=str,
        command=lambda d: [*_render(d), "--apis", str(d)],
        want_code=1,
        want_stderr="Error: expected one Composition for modelplane.ai/v1alpha1 ModelDeployment, found 0: no "
        "Composition was found at all (--apis names the directory to search)\n",
    ),
]


@pytest.mark.parametrize("case", SAID, ids=lambda c: c.name)
def test_stderr_says_what_to_fix(case: Said, tmp_path: Path) -> None:
    got = CliRunner().invoke(main, case.command(_inputs(tmp_path, case.edit)))
    assert (got.exit_code, got.stderr) == (case.want_code, case.want_stderr)


@dataclass(frozen=True)
class Duplicate:
    name: str
    files: dict[str, int]  # file name -> how many copies of the deployment it holds
    want: str
    edit: Callable[[str], str] = str
    subject: str = "team-chat/qwen3-8b"


DUPLICATES = [
    Duplicate(
        name="in two files, both are named", files={"a.yaml": 1, "b.yaml": 1}, want="in {d}/a.yaml and in {d}/b.yaml"
    ),
    Duplicate(name="twice in one file, it is named once", files={"a.yaml": 2}, want="twice in {d}/a.yaml"),
    Duplicate(
        name="without a namespace, by its name alone",
        files={"a.yaml": 2},
        want="twice in {d}/a.yaml",
        edit=_no_namespace,
        subject="qwen3-8b",
    ),
]


@pytest.mark.parametrize("case", DUPLICATES, ids=lambda c: c.name)
def test_plan_names_the_files_of_a_duplicate_deployment(case: Duplicate, tmp_path: Path) -> None:
    xr = case.edit((QUICKSTART / "xr.yaml").read_text())
    for name, copies in case.files.items():
        (tmp_path / name).write_text("\n---\n".join([xr] * copies))
    got = CliRunner().invoke(main, ["plan", str(tmp_path)])
    want = f"Error: ModelDeployment {case.subject} appears {case.want.format(d=tmp_path)}\n"
    assert (got.exit_code, got.stderr) == (1, want)


@dataclass(frozen=True)
class Colour:
    name: str
    tty: bool
    no_color: str | None
    want: bool


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


COLOURS = [
    Colour(name="a terminal is coloured", tty=True, no_color=None, want=True),
    Colour(name="NO_COLOR turns it off", tty=True, no_color="1", want=False),
    Colour(name="an empty NO_COLOR does not (no-color.org)", tty=True, no_color="", want=True),
    Colour(name="a pipe or file is never coloured", tty=False, no_color=None, want=False),
]


@pytest.mark.parametrize("case", COLOURS, ids=lambda c: c.name)
def test_the_debug_log_is_coloured_only_on_a_terminal_without_no_color(case: Colour) -> None:
    environ = {} if case.no_color is None else {"NO_COLOR": case.no_color}
    assert colours(_Stream(case.tty), environ) == case.want


@pytest.mark.parametrize("command", ["render", "fleet", "plan"])
def test_debug_into_a_pipe_has_no_escape_codes(command: str, tmp_path: Path) -> None:
    args = {"render": _render, "fleet": _fleet, "plan": _plan}[command](_inputs(tmp_path, str))
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    got = subprocess.run(
        [MODELPLANE, *args, "--debug"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    ran = [line for line in got.stderr.splitlines() if "Ran function" in line]
    assert (got.returncode, len(ran) > 0, "\x1b[" in got.stderr) == (0, True, False)


def test_render_finds_this_repositorys_compositions_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no apis/ here: the default is the repository's own
    got = CliRunner().invoke(main, _render(QUICKSTART))
    assert (got.exit_code, got.stderr) == (0, "")


@dataclass(frozen=True)
class Explained:
    name: str
    edit: Callable[[str], str]
    command: Callable[[Path], list[str]]
    want: list[str]  # the lines --explain prints before the one-line summary


EXPLAINED = [
    Explained(
        name="--explain shows the selector, every cluster's labels and failing terms, and the nearest miss",
        edit=lambda xr: xr.replace(
            "matchLabels:\n          fleet: production",
            "matchLabels:\n          fleet: prodution\n        matchExpressions:\n        - {key: topology.kubernetes.io/region, operator: In, values: [us-east-1]}",
            1,
        ),
        command=_render,
        want=[
            "ModelDeployment team-chat/qwen3-8b: not scheduled (NoClusters): no InferenceCluster matches the "
            "deployment's clusterSelector",
            "Cluster selector: wants fleet=prodution,topology.kubernetes.io/region in (us-east-1); no InferenceCluster "
            "matches it.",
            "  CLUSTER    LABELS                                                    FAILS",
            "  us-east-1  fleet=production,topology.kubernetes.io/region=us-east-1  fleet=prodution",
            "  eu-west-1  fleet=production,topology.kubernetes.io/region=eu-west-1  fleet=prodution,"
            "topology.kubernetes.io/region in (us-east-1)",
            "Nearest miss: us-east-1.",
        ],
    ),
    Explained(
        name="--explain says when no cluster was given at all",
        edit=str,
        command=_without_clusters,
        want=[
            "ModelDeployment team-chat/qwen3-8b: not scheduled (NoClusters): no InferenceCluster matches the "
            "deployment's clusterSelector",
            "No InferenceCluster was given at all: none of the input files holds one.",
        ],
    ),
]


@pytest.mark.parametrize("case", EXPLAINED, ids=lambda c: c.name)
def test_explain_shows_why_no_cluster_matches(case: Explained, tmp_path: Path) -> None:
    got = CliRunner().invoke(main, [*case.command(_inputs(tmp_path, case.edit)), "--explain"])
    assert got.stderr.splitlines()[:-1] == case.want
