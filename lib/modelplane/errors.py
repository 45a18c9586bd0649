"""Typed errors for user spec problems. Expected scheduling rejections are not errors: they are
Statuses in the Diagnosis. Anything else that raises is a bug."""

from __future__ import annotations


class SpecError(ValueError):
    """A user's spec cannot be acted on; the function reports it as a condition with `reason`."""

    reason = "InvalidSpec"


class InvalidNodeSelectorError(SpecError):
    """A device selector does not compile, exceeds the CEL cost budget, or fails on every device."""

    reason = "InvalidNodeSelector"

    def __init__(
        self, *, engine: str, role: str, request: str, detail: str, selector: int = 0, expression: str = ""
    ) -> None:
        self.engine = engine
        self.role = role
        self.request = request
        self.detail = detail
        self.selector = selector  # 1-based position in the request; 0 when no single selector is at fault
        self.expression = expression
        where = f"engine {engine} member {role} device request {request}"
        if selector:
            where += f" selector {selector} ({short_expression(expression)})"
        super().__init__(f"{where}: {detail}")


_SHORT = 80  # characters of an expression quoted in a message


def short_expression(expression: str) -> str:
    """The expression on one line, cut to a length a condition message can carry."""
    flat = " ".join(expression.split())
    return flat if len(flat) <= _SHORT else flat[: _SHORT - 3] + "..."
