"""`modelplane render` for scripts: exit codes that classify failures, stderr naming them, --explain
reporting render failures, the function's debug log, and --version."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import yaml
from click.testing import CliRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelplane_function.cli.main import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
MODELPLANE = str(Path(sys.executable).parent / "modelplane")


def _example(name: str) -> list[str]:
    d = EXAMPLES / name
    args = [str(d / "xr.yaml"), "-e", str(d / "required-resources.yaml")]
    if (d / "observed-resources.yaml").is_file():
        args += ["-o", str(d / "observed-resources.yaml")]
    return args


def _without_model(tmp_path: Path) -> list[str]:
    """quickstart with no model anywhere: it schedules, but no ModelReplica can render."""
    xr = yaml.safe_load((EXAMPLES / "quickstart" / "xr.yaml").read_text())
    del xr["spec"]["template"]["spec"]["model"]
    path = tmp_path / "xr.yaml"
    path.write_text(yaml.safe_dump(xr))
    return [str(path), "-e", str(EXAMPLES / "quickstart" / "required-resources.yaml")]


@dataclass(frozen=True)
class Case:
    name: str
    args: str  # an example's name, "no-model" or "missing"
    flags: tuple[str, ...]
    want_code: int
    want_failures: list[str]  # "<kind> <ns/name>: <condition>=False <reason>" per stderr line


CASES = [
    Case(name="a clean render exits 0 and says nothing", args="quickstart", flags=(), want_code=0, want_failures=[]),
    Case(
        name="replicas left unplaced exit 4 and are named",
        args="insufficient-capacity",
        flags=(),
        want_code=4,
        want_failures=["ModelDeployment team-chat/llama-70b: ReplicasScheduled=False InsufficientCapacity"],
    ),
    Case(
        name="--allow-partial accepts unplaced replicas",
        args="insufficient-capacity",
        flags=("--allow-partial",),
        want_code=0,
        want_failures=[],
    ),
    Case(
        name="a selector that does not compile exits 3",
        args="bad-selector",
        flags=("--allow-partial",),
        want_code=3,
        want_failures=["ModelDeployment team-chat/qwen3-8b: ReplicasScheduled=False InvalidNodeSelector"],
    ),
    Case(
        name="ModelReplicas that cannot render exit 3, each named",
        args="no-model",
        flags=(),
        want_code=3,
        want_failures=[
            "ModelReplica team-chat/qwen3-8b-eu-west-1-0-557e88be: ReplicaRendered=False CannotRender",
            "ModelReplica team-chat/qwen3-8b-us-east-1-0-697fc206: ReplicaRendered=False CannotRender",
        ],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_exit_code_and_stderr(case: Case, tmp_path: Path) -> None:
    args = _without_model(tmp_path) if case.args == "no-model" else _example(case.args)
    got = CliRunner().invoke(main, ["render", *args, *case.flags])
    # Each line: "modelplane: <kind> <ns/name>: <condition>=False <reason>: <message>"; messages are the function's.
    failures = [re.sub(r"^modelplane: (\S+ \S+: \S+=False \S+): .*$", r"\1", line) for line in got.stderr.splitlines()]
    assert (got.exit_code, failures, bool(list(yaml.safe_load_all(got.stdout)))) == (
        case.want_code,
        case.want_failures,
        True,
    )


def test_input_that_cannot_be_read_exits_1_with_nothing_on_stdout(tmp_path: Path) -> None:
    bad = tmp_path / "xr.yaml"
    bad.write_text("a: [\n")
    got = CliRunner().invoke(main, ["render", str(bad)])
    assert (got.exit_code, got.stdout, got.stderr.splitlines()[0]) == (
        1,
        "",
        f"Error: cannot read {bad}: while parsing a flow node",
    )


def test_explain_reports_replicas_that_failed_to_render(tmp_path: Path) -> None:
    got = CliRunner().invoke(main, ["render", *_without_model(tmp_path), "--explain"])
    lines = got.stderr.splitlines()
    start = lines.index("Rendering: 0 of 2 ModelReplicas rendered.")
    assert lines[start + 1].split() == ["REPLICA", "REASON", "MESSAGE"]
    assert [line.split()[:2] for line in lines[start + 2 : start + 4]] == [
        ["qwen3-8b-eu-west-1-0-557e88be", "CannotRender"],
        ["qwen3-8b-us-east-1-0-697fc206", "CannotRender"],
    ]


def test_debug_logs_every_call_and_decision_to_stderr_and_keeps_stdout_yaml() -> None:
    got = CliRunner().invoke(main, ["render", *_example("quickstart"), "--debug"])
    ran = [line for line in got.stderr.splitlines() if "Ran function" in line]
    decided = [line for line in got.stderr.splitlines() if "Condition" in line and "ReplicasScheduled" in line]
    kinds = sorted({word for line in ran for word in ("ModelDeployment", "ModelReplica") if word in line})
    docs = list(yaml.safe_load_all(got.stdout))
    assert (got.exit_code, kinds, len(decided) > 0, docs[0]["kind"]) == (
        0,
        ["ModelDeployment", "ModelReplica"],
        True,
        "ModelDeployment",
    )


def test_version() -> None:
    got = CliRunner().invoke(main, ["--version"])
    assert (got.exit_code, got.stdout) == (0, "modelplane, version 0.1.0\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_logs_its_start_and_each_request_as_json_lines() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [MODELPLANE, "serve", "--insecure", "--address", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        start = json.loads(proc.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t-1"))
            req.observed.composite.resource.update({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}})
            deadline = time.monotonic() + 20
            grpc.channel_ready_future(channel).result(timeout=max(deadline - time.monotonic(), 1))
            grpcv1.FunctionRunnerServiceStub(channel).RunFunction(req, timeout=20)
        request = json.loads(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    got = (
        {k: start[k] for k in ("msg", "address", "transport", "max_recv_message_size_mib", "level")},
        {k: request[k] for k in ("msg", "tag", "kind", "name", "outcome", "level")},
        isinstance(request["duration_ms"], float),
    )
    assert got == (
        {
            "msg": "Serving function",
            "address": f"127.0.0.1:{port}",
            "transport": "insecure",
            "max_recv_message_size_mib": 4,
            "level": "info",
        },
        {"msg": "Ran function", "tag": "t-1", "kind": "Secret", "name": "x", "outcome": "fatal", "level": "info"},
        True,
    )


def test_the_installed_command_writes_everything_and_exits_with_the_code() -> None:
    args = _example("insufficient-capacity")
    want = CliRunner().invoke(main, ["render", *args])
    got = subprocess.run([MODELPLANE, "render", *args], capture_output=True, text=True, timeout=120, check=False)
    assert (got.returncode, got.stdout, got.stderr) == (4, want.stdout, want.stderr)


@dataclass(frozen=True)
class Usage:
    name: str
    args: tuple[str, ...]
    want_code: int
    want_last_line: str  # of stderr


USAGE = [
    Usage(
        name="an output format given to -o is said to be one, with what to type",
        args=("-o", "yaml"),
        want_code=2,
        want_last_line="Error: Invalid value for '--observed-resources' / '-o': 'yaml' is an output format, not a "
        "file: render's -o is --observed-resources, as in crossplane render, and render always writes YAML to "
        "stdout. Drop '-o yaml' (fleet and plan take -o text|html).",
    ),
    Usage(
        name="any case of a format name",
        args=("-o", "JSON"),
        want_code=2,
        want_last_line="Error: Invalid value for '--observed-resources' / '-o': 'JSON' is an output format, not a "
        "file: render's -o is --observed-resources, as in crossplane render, and render always writes YAML to "
        "stdout. Drop '-o JSON' (fleet and plan take -o text|html).",
    ),
    Usage(
        name="a path that does not exist is still reported as one",
        args=("-o", "nowhere.yaml"),
        want_code=2,
        want_last_line="Error: Invalid value for '--observed-resources' / '-o': Path 'nowhere.yaml' does not exist.",
    ),
]


@pytest.mark.parametrize("case", USAGE, ids=lambda c: c.name)
def test_a_format_given_to_render_o_is_explained(case: Usage) -> None:
    xr = str(EXAMPLES / "quickstart" / "xr.yaml")
    got = CliRunner().invoke(main, ["render", xr, *case.args])
    assert (got.exit_code, got.stdout, got.stderr.splitlines()[-1]) == (case.want_code, "", case.want_last_line)


def test_render_help_lists_o_with_its_long_flag() -> None:
    got = CliRunner().invoke(main, ["render", "--help"])
    listed = [line.split()[:2] for line in got.stdout.splitlines() if line.strip().startswith("-o")]
    assert (got.exit_code, listed) == (0, [["-o,", "--observed-resources"]])


@dataclass(frozen=True)
class StackCase:
    name: str
    gang: bool  # the quickstart's engine as a Leader and one Worker
    want_clusters: list[str]  # the clusters the two replicas render on


STACK_CASES = [
    StackCase(
        "a single-node deployment renders on a Dynamo cluster as on a Standard one",
        gang=False,
        want_clusters=["eu", "us"],
    ),
    StackCase("a multi-node deployment renders only on the Standard cluster", gang=True, want_clusters=["us", "us"]),
]


@pytest.mark.parametrize("case", STACK_CASES, ids=lambda c: c.name)
def test_a_fleet_with_a_dynamo_cluster_is_read_and_used(case: StackCase, tmp_path: Path) -> None:
    d = EXAMPLES / "quickstart"
    clusters = list(yaml.safe_load_all((d / "required-resources.yaml").read_text()))
    for c in clusters:
        c["spec"]["stack"] = "Dynamo" if c["metadata"]["name"] == "eu-west-1" else "Standard"
    xr = yaml.safe_load((d / "xr.yaml").read_text())
    if case.gang:
        member = xr["spec"]["template"]["spec"]["engines"][0]["members"][0]
        xr["spec"]["template"]["spec"]["engines"][0]["members"] = [
            {**member, "role": "Leader"},
            {**member, "role": "Worker", "worker": {"nodes": 1}},
        ]
    (tmp_path / "clusters.yaml").write_text(yaml.safe_dump_all(clusters))
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    got = CliRunner().invoke(main, ["render", str(tmp_path / "xr.yaml"), "-e", str(tmp_path / "clusters.yaml")])
    rendered = [o for o in yaml.safe_load_all(got.stdout) if o and o.get("kind") == "ModelReplica"]
    assert (got.exit_code, got.stderr, sorted(o["spec"]["clusterName"][:2] for o in rendered)) == (
        0,
        "",
        case.want_clusters,
    )
