"""Deriving the served model from an engine container's command line, as Modelplane manifests name it.

Modelplane has no `model` field: the model is whatever the engine is started with. We look for
`--model X` / `--model=X` (and `vllm serve X`) and `--served-model-name`, in the Decode engine
first under PrefillDecode, else the engines in order, Standalone/Leader members before Workers.
A Hugging Face id becomes `hf://<id>`; a value with a scheme (s3://, pvc://, hf://, ...) is kept.
Values that are only resolved at run time (`$(VAR)`) or local paths name nothing we can render.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from modelplane import model as m
from modelplane.api.common import MAX_MODEL_NAME, MAX_MODEL_URI

_MODEL_FLAG = "--model"
_NAME_FLAG = "--served-model-name"


def derive_model(engines: Sequence[m.Engine], mode: m.ServingMode) -> m.ModelRef | None:
    """The ModelRef the engines' command lines name, or None when none names one."""
    uri: str | None = None
    name: str | None = None
    for tokens in _command_lines(engines, mode):
        uri = uri or _model_uri(tokens)
        name = name or _flag_value(tokens, _NAME_FLAG)
    # A value the ModelReplica's schema could not hold names nothing, like an unexpanded $(VAR).
    if uri is not None and len(uri) > MAX_MODEL_URI:
        uri = None
    if name is not None and len(name) > MAX_MODEL_NAME:
        name = None
    return m.ModelRef(uri=uri, name=name) if uri else None


def served_name(engines: Sequence[m.Engine], mode: m.ServingMode) -> str | None:
    """The `--served-model-name` the engines' command lines give, in the order `derive_model` reads them."""
    for tokens in _command_lines(engines, mode):
        name = _flag_value(tokens, _NAME_FLAG)
        if name is not None and len(name) <= MAX_MODEL_NAME:
            return name
    return None


def _command_lines(engines: Sequence[m.Engine], mode: m.ServingMode) -> Iterator[list[str]]:
    ordered = list(engines)
    if mode is m.ServingMode.PREFILL_DECODE:
        ordered.sort(key=lambda e: e.phase is not m.Phase.DECODE)  # stable: Decode first, rest in order
    for engine in ordered:
        for member in sorted(engine.members, key=lambda x: x.role is m.Role.WORKER):
            yield _tokens(_engine_container(member.template))


def _engine_container(template: Mapping[str, Any]) -> Mapping[str, Any]:
    spec: Mapping[str, Any] = template.get("spec") or {}
    containers: Sequence[Mapping[str, Any]] = spec.get("containers") or ()
    empty: Mapping[str, Any] = {}
    return next((c for c in containers if c.get("name") == "engine"), empty)


def _tokens(container: Mapping[str, Any]) -> list[str]:
    """command + args as shell words; a `bash -c '<script>'` argument is split into its words too."""
    out: list[str] = []
    words: Iterable[str] = [*(container.get("command") or ()), *(container.get("args") or ())]
    for word in words:
        if any(c.isspace() for c in word):
            try:
                out.extend(shlex.split(word))
            except ValueError:
                out.extend(word.split())
        else:
            out.append(word)
    return out


def _flag_value(tokens: Sequence[str], flag: str) -> str | None:
    for i, token in enumerate(tokens):
        if token.startswith(flag + "="):
            return _usable(token[len(flag) + 1 :])
        if token == flag and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            return _usable(tokens[i + 1])
    return None


def _serve_positional(tokens: Sequence[str]) -> str | None:
    for i, token in enumerate(tokens[:-1]):
        if token == "serve" and i > 0 and tokens[i - 1].endswith("vllm") and not tokens[i + 1].startswith("-"):
            return _usable(tokens[i + 1])
    return None


def _usable(value: str) -> str | None:
    return None if not value or "$(" in value or value.startswith("$") else value


def _model_uri(tokens: Sequence[str]) -> str | None:
    value = _flag_value(tokens, _MODEL_FLAG) or _serve_positional(tokens)
    if value is None or value.startswith(("/", ".")):
        return None
    return value if "://" in value else f"hf://{value}"
