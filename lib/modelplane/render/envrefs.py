"""The kubelet's `$(NAME)` references in a container's args, made safe for the presets' `eval`.

Before the container starts, the kubelet replaces `$(NAME)` in its command and args with the value
of the container's env var NAME when it has one (`$$` is a literal `$`, an unknown or unterminated
reference stays as written: kubernetes third_party/forked/golang/expansion). The presets then
`eval` the args, so a value the kubelet pasted into a single-quoted word is parsed as shell: one
`'` in a Secret-fed API key ends the quoting and splits or runs the rest.

`shell_word` quotes an arg for the `eval` and turns each reference to an env var the container
declares into `"${NAME}"`, which the kubelet leaves alone (it is not `$(`) and the `eval` expands
as one word, never re-parsed: vLLM receives what the kubelet would have pasted, whatever it holds.
References to names the container does not declare (the presets' own env, envFrom, service links)
keep the kubelet's expansion, as before.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Set

_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
            if name in declared and _SHELL_NAME.fullmatch(name):
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
    """`arg` as one word of shell text that the kubelet and then the `eval` turn into what the kubelet alone would."""
    parts = list(_parts(arg, declared))
    if not any(is_ref for _, is_ref in parts):
        return shlex.quote(arg)
    return "".join(f'"${{{text}}}"' if is_ref else shlex.quote(text) for text, is_ref in parts)
