"""Typed errors for user spec problems. Expected scheduling rejections are not errors: they are
Statuses in the Diagnosis. Anything else that raises is a bug."""

from __future__ import annotations


class SpecError(ValueError):
    """A user's spec cannot be acted on; the function reports it as a condition with `reason`."""

    reason = "InvalidSpec"


class InvalidNodeSelectorError(SpecError):
    """A device selector does not compile or exceeds the CEL cost budget."""

    reason = "InvalidNodeSelector"

    def __init__(self, *, engine: str, role: str, request: str, detail: str) -> None:
        self.engine = engine
        self.role = role
        self.request = request
        self.detail = detail
        super().__init__(f"engine {engine} member {role} device request {request}: {detail}")
