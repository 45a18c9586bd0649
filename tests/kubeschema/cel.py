"""x-kubernetes-validations rules evaluated as the API server does on create, on cel-cpp.

The environment follows k8s.io/apiserver pkg/cel/environment/base.go as far as cel-expr-python
offers it: the standard library (RE2 `matches`, `duration`, `timestamp`), the strings extension
(`lowerAscii`, `split`, ...), optional types (`self.?field`) and the Kubernetes `isQuantity`
function. Kubernetes libraries no rule we validate calls (lists, regex `find`, url, ip, cidr,
format, semver, sets, `quantity()` arithmetic) are not declared, so a rule calling one fails to
compile and is reported as an error, never counted as passing.

`self` is built from the value the way apiextensions-apiserver does (pkg/apiserver/schema/cel):
declared properties only, with property names escaped (`x-y` -> `x__dash__y`, `namespace` ->
`__namespace__`), map keys unescaped, `format: byte` strings as bytes, and at the root only
`apiVersion`, `kind` and `metadata.name`/`generateName`. Rules that read `oldSelf` are
transition rules: on create the API server skips them, and so do we (counted, not passed);
`evaluate_update` evaluates one on an update.

Known differences: `self` is dynamically typed (the API server type-checks rules against the
schema when the CRD is created) and `date-time`/`duration` strings stay strings (cel-cpp cannot
nest timestamps in a value); a rule hitting either fails to evaluate, which is an error, never
a pass. Rule cost is not estimated or limited.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any, cast

from cel_expr_python import cel  # pyright: ignore[reportMissingTypeStubs]
from cel_expr_python.ext.ext_optional import ExtOptional  # pyright: ignore[reportMissingTypeStubs]
from cel_expr_python.ext.ext_strings import ExtStrings  # pyright: ignore[reportMissingTypeStubs]
from modelplane.devices.quantity import is_quantity

Schema = Mapping[str, Any]

# k8s.io/apiserver pkg/cel/escaping.go: CEL reserved words, and the characters a property name
# may contain beyond an identifier's.
_RESERVED = frozenset(
    {
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function"),
        *("if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"),
    }
)
_ESCAPABLE = re.compile(r"^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$")
_ESCAPES = re.compile(r"__|[./-]")
_ESCAPED = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def escape(name: str) -> str | None:
    """The CEL field name of an object property, or None when CEL cannot address it."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.match(name):
        return None
    return _ESCAPES.sub(lambda m: _ESCAPED[m.group()], name)


def to_cel(value: Any, node: Schema) -> Any:
    """`value` as the API server exposes it to a rule on the schema `node`."""
    if isinstance(value, dict):
        obj = cast("dict[str, Any]", value)
        props = cast("dict[str, Schema]", node.get("properties") or {})
        extra = node.get("additionalProperties")
        if not props and isinstance(extra, Mapping):
            return {k: to_cel(v, cast("Schema", extra)) for k, v in obj.items()}
        fields = {escape(k): to_cel(v, props[k]) for k, v in obj.items() if k in props}
        out = {k: v for k, v in fields.items() if k is not None}
        if node.get("x-kubernetes-embedded-resource"):
            out.update(_type_and_name(obj))
        return out
    if isinstance(value, list):
        items = cast("Schema", node.get("items") or {})
        return [to_cel(v, items) for v in cast("list[Any]", value)]
    if isinstance(value, str) and node.get("format") == "byte":
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error:
            return value  # the schema check reports it
    return value


def _type_and_name(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a rule sees of an object's TypeMeta and ObjectMeta: kind, apiVersion, name, generateName."""
    out: dict[str, Any] = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta = cast("dict[str, Any]", meta)
        out["metadata"] = {k: meta[k] for k in ("name", "generateName") if k in meta}
    return out


def root_to_cel(obj: Mapping[str, Any], root: Schema) -> Any:
    """The whole object as `self` of a root-level rule (the root is an embedded resource)."""
    return to_cel(obj, {**root, "x-kubernetes-embedded-resource": True})


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # the rule returned false
    ERROR = "error"  # it could not be compiled or evaluated: an error, as on the API server
    TRANSITION = "transition"  # reads oldSelf: not evaluated on create


@dataclass(frozen=True, slots=True)
class Verdict:
    outcome: Outcome
    detail: str = ""  # the message for FAILED and ERROR


@cache
def _env() -> Any:
    functions = [
        cel.FunctionDecl(
            "isQuantity",
            [cel.Overload("is_quantity_string", cel.Type.BOOL, [cel.Type.STRING], impl=is_quantity)],
        )
    ]
    return cel.NewEnv(variables={"self": cel.Type.DYN}, functions=functions, extensions=[ExtStrings(), ExtOptional()])


_programs: dict[str, Any] = {}


class _CompileError(Exception):
    pass


def _program(expression: str) -> Any:
    program = _programs.get(expression)
    if program is None:
        try:
            program = _env().compile(expression)
        except RuntimeError as error:
            raise _CompileError(_one_line(str(error))) from None
        _programs[expression] = program
    return program


def _one_line(message: str) -> str:
    # cel-cpp wraps errors in a status code and follows each with the source line and a caret.
    text = message.removeprefix("INVALID_ARGUMENT: ").removesuffix(" [INVALID_ARGUMENT]")
    lines = [line.removeprefix("ERROR: ").strip() for line in text.splitlines() if not line.startswith(" |")]
    return "; ".join(line for line in lines if line)


def compile_problem(expression: str) -> str | None:
    """Why `expression` does not compile here (None when it does); transition rules compile."""
    try:
        _program(expression)
    except _CompileError as error:
        if not _reads_old_self(str(error)):
            return str(error)
    return None


def _reads_old_self(compile_error: str) -> bool:
    # `oldSelf` is not declared on create, so a rule that reads it fails to compile naming it.
    return "undeclared reference to 'oldSelf'" in compile_error


def _evaluate(expression: str, self_value: Any) -> Any:
    """The value of `expression`, or raise _CompileError / RuntimeError."""
    try:
        result = _program(expression).eval(data={"self": self_value})
    except (ValueError, TypeError) as error:
        raise RuntimeError(str(error)) from None
    if result.type() == cel.Type.ERROR:
        raise RuntimeError(_one_line(str(result.value())))
    return result


def evaluate(rule: Mapping[str, Any], self_value: Any) -> Verdict:
    """Evaluate one x-kubernetes-validations entry against `self` on create."""
    expression = str(rule.get("rule", ""))
    try:
        result = _evaluate(expression, self_value)
    except _CompileError as error:
        if not _reads_old_self(str(error)):
            return Verdict(Outcome.ERROR, f"rule {expression!r} does not compile here: {error}")
        if rule.get("optionalOldSelf"):
            # The API server evaluates it with oldSelf = optional.none(); cel-cpp cannot bind that.
            return Verdict(Outcome.ERROR, f"rule {expression!r} sets optionalOldSelf, which is not evaluated here")
        return Verdict(Outcome.TRANSITION)
    except RuntimeError as error:
        return Verdict(Outcome.ERROR, f"{error} evaluating rule: {_rule_string(rule)}")
    if result.type() != cel.Type.BOOL:
        return Verdict(Outcome.ERROR, f"rule {expression!r} returned {result.type().name()}, not a bool")
    if result.value() is True:
        return Verdict(Outcome.PASSED)
    return Verdict(Outcome.FAILED, _failure_message(rule, self_value))


@cache
def _update_env() -> Any:
    return cel.NewEnv(variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN}, extensions=[ExtOptional()])


def evaluate_update(rule: Mapping[str, Any], self_value: Any, old_value: Any) -> Verdict:
    """Evaluate a transition rule on an update from `old_value` to `self_value` (scalars as CEL reads them).

    The API server evaluates a transition rule only when the field has an old value, as here.
    """
    expression = str(rule.get("rule", ""))
    try:
        result = _update_env().compile(expression).eval(data={"self": self_value, "oldSelf": old_value})
    except (RuntimeError, ValueError, TypeError) as error:
        return Verdict(Outcome.ERROR, f"rule {expression!r}: {_one_line(str(error))}")
    if result.type() != cel.Type.BOOL:
        return Verdict(Outcome.ERROR, f"rule {expression!r} returned {result.type().name()}, not a bool")
    if result.value() is True:
        return Verdict(Outcome.PASSED)
    return Verdict(Outcome.FAILED, _rule_string(rule))


def _rule_string(rule: Mapping[str, Any]) -> str:
    return str(rule.get("message") or rule.get("rule", "")).strip()


def _failure_message(rule: Mapping[str, Any], self_value: Any) -> str:
    """messageExpression when it yields a one-line string, else message, else the rule."""
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and expression:
        try:
            result = _evaluate(expression, self_value)
        except (_CompileError, RuntimeError):
            result = None
        if result is not None and result.type() == cel.Type.STRING:
            text = str(result.value()).strip()
            if text and "\n" not in text:
                return text
    message = str(rule.get("message") or "").strip()
    return message or f"failed rule: {_rule_string(rule)}"


def re2_search(pattern: str, text: str) -> bool:
    """Whether RE2 (the engine of Go's regexp, which the API server uses) finds `pattern` in `text`."""
    literal = pattern.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    try:
        result = _evaluate(f'self.matches("{literal}")', text)
    except (_CompileError, RuntimeError):
        return False
    return result.value() is True
