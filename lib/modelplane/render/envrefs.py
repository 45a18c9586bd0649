"""The kubelet's `$(NAME)` references in a container's args, made safe for the presets' `eval`.

Before the container starts, the kubelet replaces `$(NAME)` in its command and args with the value
of the container's env var NAME when it has one (`$$` is a literal `$`, an unknown or unterminated
reference stays as written: kubernetes third_party/forked/golang/expansion). The presets then
`eval` the args, so a value the kubelet pasted into a single-quoted word is parsed as shell: one
`'` in a Secret-fed API key ends the quoting and splits or runs the rest.

So the value must reach the `eval` through a shell variable instead, expanded inside double quotes
(`"${VAR}"`): one word, never re-parsed. NAME itself cannot be that variable: Kubernetes accepts any
printable ASCII but `=` in an env var name (apimachinery `IsRelaxedEnvVarName`), bash imports only
the names that are shell identifiers (`API-KEY`, `a.b` are not), and bash sets some identifiers
itself whatever the environment says (`UID`, `PWD`, `SHLVL`, `_`, `BASH_*`, ...). Each referenced
name therefore gets an alias env var of our own, `MODELPLANE_ENV_<hash of NAME>`, appended after the
container's env with the value `$(NAME)`: the kubelet expands env values too, against the vars
declared before them, so the alias holds exactly what the kubelet would have pasted into the arg.
The arg refers to `"${alias}"`, which the kubelet leaves alone (it is not `$(`).

References to names the container does not declare (the presets' own env, service links) keep
the kubelet's expansion, as before: their values are not the tenant's.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Iterator, Mapping, Sequence, Set

ALIAS_PREFIX = "MODELPLANE_ENV_"


def alias(name: str) -> str:
    """The env var that carries `$(name)`'s value to the `eval` (a shell identifier bash leaves alone)."""
    return ALIAS_PREFIX + hashlib.sha256(name.encode()).hexdigest()[:16].upper()


def _parts(arg: str, declared: Set[str]) -> Iterator[tuple[str, bool]]:
    """(text, is a reference to a declared env var), scanning as the kubelet's expansion does."""
    literal_from = i = 0
    while i < len(arg) - 1:
        if arg[i] != "$":
            i += 1
            continue
        if arg[i + 1] == "(":
            close = arg.find(")", i + 2)
            if close == -1:  # unterminated: the kubelet keeps `$(` and reads on after it
                i += 2
                continue
            name = arg[i + 2 : close]
            if name in declared:
                if i > literal_from:
                    yield arg[literal_from:i], False
                yield name, True
                literal_from = close + 1
            i = close + 1
        else:  # `$$` (an escaped `$`) or `$` before anything else: two characters, kept as written
            i += 2
    if literal_from < len(arg):
        yield arg[literal_from:], False


def shell_word(arg: str, declared: Set[str] = frozenset()) -> str:
    """`arg` as one word of shell text that the kubelet and then the `eval` turn into what the kubelet alone would.

    Each reference to a declared env var becomes its alias (`aliases` gives the env vars to add).
    """
    parts = list(_parts(arg, declared))
    if not any(is_ref for _, is_ref in parts):
        return shlex.quote(arg)
    return "".join(f'"${{{alias(text)}}}"' if is_ref else shlex.quote(text) for text, is_ref in parts)


def referenced(args: Sequence[str], declared: Set[str]) -> list[str]:
    """The declared env var names the args refer to, sorted (each once)."""
    return sorted({text for a in args for text, is_ref in _parts(a, declared) if is_ref})


def aliases(args: Sequence[str], declared: Set[str]) -> list[Mapping[str, str]]:
    """The alias env vars `shell_word`'s words need, in a stable order: append them after the container's env.

    A declared name that is itself one of these aliases would be shadowed: that is a ValueError.
    """
    out = [{"name": alias(name), "value": f"$({name})"} for name in referenced(args, declared)]
    clash = sorted(e["name"] for e in out if e["name"] in declared)
    if clash:
        msg = f"env var {clash[0]} has a name the function reserves for env references ({ALIAS_PREFIX}*)"
        raise ValueError(msg)
    return sorted(out, key=lambda e: e["name"])
