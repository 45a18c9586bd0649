"""Counters over the CEL pipeline, so bounds are proven by counting work, not by timing it."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from modelplane.devices import cel, cost
from modelplane.devices.ast import Node, decode
from modelplane.devices.memo import ByteBoundedCache


@dataclass
class Counts:
    estimator_visits: int = 0  # AST nodes the cost estimator walked
    evaluations: int = 0  # CEL programs actually run against a device


@contextmanager
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    """Count estimator node visits and CEL evaluations; the compile cache starts empty."""
    counts = Counts()
    size, evaluate = cost._Estimator.size, cel.CompiledSelector.evaluate_activation

    def counted_size(self: Any, node: Node, scope: Any, repeat: int = 1) -> Any:
        counts.estimator_visits += 1
        return size(self, node, scope, repeat)

    def counted_evaluate(self: Any, activation: Any) -> cel.Outcome:
        counts.evaluations += 1
        return evaluate(self, activation)

    monkeypatch.setattr(cel, "_cache", ByteBoundedCache(max_bytes=cel.COMPILED_BYTES))
    monkeypatch.setattr(cost._Estimator, "size", counted_size)
    monkeypatch.setattr(cel.CompiledSelector, "evaluate_activation", counted_evaluate)
    yield counts


def ast_nodes(expression: str) -> int | None:
    """Nodes of the checked AST cel-cpp builds, or None when it does not compile at all."""
    try:
        program = cel._env().compile(expression)
    except RuntimeError:
        return None
    stack: list[Node | None] = [decode(program.serialize()).root]
    count = 0
    while stack:
        node = stack.pop()
        if node is None:
            continue
        count += 1
        stack.extend((node.target, *node.args, node.iter_range, node.accu_init, node.loop_condition, node.loop_step))
        stack.append(node.result)
    return count
