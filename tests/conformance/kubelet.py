"""The kubelet's `$(VAR)` expansion of a container's command, args and env values, as a model.

Written from kubernetes third_party/forked/golang/expansion/expand.go (Expand, tryReadVariableName):
`$$` is a literal `$`; `$(NAME)` is the value of NAME when the mapping has it, else stays
`$(NAME)`; an unterminated `$(` stays; `$` before any other character stays with it. Env values
are expanded in order, each against the variables declared before it (kubelet
makeEnvironmentVariables).
"""

from collections.abc import Mapping, Sequence
from typing import Any


def expand(text: str, variables: Mapping[str, str]) -> str:
    out: list[str] = []
    cursor = 0
    checkpoint = 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            read, is_var, advance = _read_variable_name(text[cursor + 1 :])
            if is_var:
                out.append(variables.get(read, f"$({read})"))
            else:
                out.append(read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    out.append(text[checkpoint:])
    return "".join(out)


def _read_variable_name(rest: str) -> tuple[str, bool, int]:
    if rest[0] == "$":
        return "$", False, 1
    if rest[0] == "(":
        for i in range(1, len(rest)):
            if rest[i] == ")":
                return rest[1:i], True, i + 1
        return "$(", False, 1
    return "$" + rest[0], False, 1


def container_env(env: Sequence[Mapping[str, Any]], given: Mapping[str, str]) -> dict[str, str]:
    """The container's env as the process sees it: literal values expanded in order, then `given`.

    `given` stands for what the kubelet resolves itself (valueFrom) and what LWS injects. LWS puts
    its vars ahead of the container's own (lws pkg/utils/pod `addEnvVarsIfNotExists`), so the
    container's values can refer to them.
    """
    declared = {entry["name"] for entry in env}
    resolved: dict[str, str] = {k: v for k, v in given.items() if k not in declared}
    for entry in env:
        name = entry["name"]
        if "value" in entry:
            resolved[name] = expand(str(entry["value"]), resolved)
        elif name in given:
            resolved[name] = given[name]
    return {**resolved, **given}
