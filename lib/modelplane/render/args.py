"""Engine container arguments as KServe's preset launcher sees them.

The presets run `/bin/bash -c '<script>' -- <args>`, and the script ends in
`eval "exec vllm serve /mnt/models --served-model-name <model.name> --port 8000
[--tensor-parallel-size <tensor>] ... ${VLLM_ADDITIONAL_ARGS} $@"` (KS config/llmisvcconfig/, every
preset since v0.18). So the container's args are extra flags, and:

- the ones the preset (or `spec.model`) already sets must go, or vLLM sees them twice. Both
  `--flag value` and `--flag=value` are recognised, and vLLM's spellings: `_` for `-` in long
  flags, `-tp` for the tensor-parallel size;
- each arg is parsed by the shell once more (`eval`): quotes would be stripped, `{a,b}` brace
  expanded, `$x` expanded, whitespace split, globs matched. `shell_words` quotes every arg that
  holds such a character, so vLLM receives exactly what the user wrote (a JSON `--kv-transfer-config`
  included). Plain flags stay as they are. A kubelet reference `$(NAME)` to one of the
  container's env vars becomes `"${NAME}"`, so a value holding quotes is not re-parsed either
  (envrefs.py).

A user `command` replaces the launcher (no eval), so its args pass through unchanged. Before 0.18
the single-node presets ran vLLM without a shell, where a quoted arg would arrive with its quotes:
`launch` decides per KServe version whether args are quoted.
"""

from __future__ import annotations

from collections.abc import Sequence, Set

from modelplane.render.envrefs import shell_word

# Flags the preset or spec.model already set; each takes one value.
OWNED_FLAGS = frozenset({"--model", "--served-model-name", "--port", "--tensor-parallel-size"})
_TENSOR_FLAG = "--tensor-parallel-size"
_ALIASES = {"-tp": _TENSOR_FLAG}


def _flag(token: str) -> tuple[str | None, str | None]:
    """(canonical flag, inline value) of a token, or (None, None) when it is not an owned flag."""
    name, eq, value = token.partition("=")
    if name.startswith("--"):
        name = "--" + name[2:].replace("_", "-")
    name = _ALIASES.get(name, name)
    if name not in OWNED_FLAGS:
        return None, None
    return name, value if eq else None


def _scan(args: Sequence[str]) -> tuple[tuple[str, ...], dict[str, str]]:
    """Split args into the ones kept and the owned flags' values (last one wins, as argparse does)."""
    kept: list[str] = []
    owned: dict[str, str] = {}
    i = 0
    while i < len(args):
        flag, value = _flag(args[i])
        if flag is None:
            kept.append(args[i])
            i += 1
            continue
        if value is None and i + 1 < len(args) and not args[i + 1].startswith("--"):
            value = args[i + 1]
            i += 1
        if value is not None:
            owned[flag] = value
        i += 1
    return tuple(kept), owned


def extra_args(args: Sequence[str]) -> tuple[str, ...]:
    """The user's args minus the flags the preset launcher and spec.model already set."""
    return _scan(args)[0]


def tensor_parallel_size(args: Sequence[str]) -> int | None:
    """The `--tensor-parallel-size` the user wrote, when it is a positive integer."""
    value = _scan(args)[1].get(_TENSOR_FLAG)
    if value is None or not value.isdigit() or int(value) < 1:
        return None
    return int(value)


def shell_words(args: Sequence[str], env_names: Set[str] = frozenset()) -> tuple[str, ...]:
    """Args that survive one more round of shell parsing unchanged (quoted only when they need it).

    `env_names`: the container's env vars, whose kubelet references `$(NAME)` the eval expands
    instead (envrefs.py).
    """
    return tuple(shell_word(a, env_names) for a in args)
