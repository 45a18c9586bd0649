"""Semantic versions (semver.org 2.0.0) for DRA version attributes and the CEL `semver` library.

Parsing is strict, as Kubernetes' `semver(<string>)`: MAJOR.MINOR.PATCH with no leading zeros,
optional pre-release and build metadata. `semver(<string>, true)` normalizes first (drops a
leading "v", fills a missing minor/patch with 0, strips leading zeros). Build metadata is
ignored by comparison and equality. Text longer than MAX_TEXT characters is refused (Kubernetes
sets no bound; a version attribute is at most 64).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMERIC = r"0|[1-9][0-9]*"
_IDENT = r"[0-9A-Za-z-]+"
_PATTERN = re.compile(
    rf"({_NUMERIC})\.({_NUMERIC})\.({_NUMERIC})(?:-({_IDENT}(?:\.{_IDENT})*))?(?:\+({_IDENT}(?:\.{_IDENT})*))?"
)
_LEADING_ZERO_NUMBER = re.compile(r"0[0-9]+")
MAX_TEXT = 1024


class SemverError(ValueError):
    """The text is not a semantic version."""


@dataclass(frozen=True, slots=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return f"{core}-{'.'.join(self.pre)}" if self.pre else core

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 by semver precedence."""
        left, right = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if left != right:
            return -1 if left < right else 1
        return _compare_pre(self.pre, other.pre)


def parse_semver(text: str, *, normalize: bool = False) -> Semver:
    if len(text) > MAX_TEXT:
        msg = f"a version longer than {MAX_TEXT} characters is not supported"
        raise SemverError(msg)
    if normalize:
        text = _normalize(text)
    match = _PATTERN.fullmatch(text)
    if match is None:
        msg = f"not a semantic version: {text!r}"
        raise SemverError(msg)
    major, minor, patch, pre, _build = match.groups()
    identifiers = tuple(pre.split(".")) if pre else ()
    if any(_LEADING_ZERO_NUMBER.fullmatch(part) for part in identifiers):
        msg = f"numeric pre-release identifiers must not have leading zeros: {text!r}"
        raise SemverError(msg)
    return Semver(int(major), int(minor), int(patch), identifiers)


def is_semver(text: str, *, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize=normalize)
    except SemverError:
        return False
    return True


def _normalize(text: str) -> str:
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            parts[index] = stripped if stripped[:1].isdigit() else "0" + stripped
    if len(parts) < 3:  # noqa: PLR2004 - major.minor.patch
        if any(sign in parts[-1] for sign in "+-"):
            msg = f"short version cannot contain pre-release or build metadata: {text!r}"
            raise SemverError(msg)
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _compare_pre(left: tuple[str, ...], right: tuple[str, ...]) -> int:
    # A version without pre-release identifiers ranks above any with them.
    if not left or not right:
        return (not left) - (not right)
    for a, b in zip(left, right, strict=False):
        if a == b:
            continue
        a_num, b_num = a.isdigit(), b.isdigit()
        if a_num and b_num:
            return -1 if int(a) < int(b) else 1
        if a_num != b_num:
            return -1 if a_num else 1  # numeric identifiers rank below alphanumeric ones
        return -1 if a < b else 1
    return (len(left) > len(right)) - (len(left) < len(right))
