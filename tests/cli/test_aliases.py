"""Alias expansion is bounded as go-yaml bounds it: shared values pass, a bomb fails, on both readers."""

from __future__ import annotations

import pytest
import yaml
from modelplane_function.cli.render import yamlio

RATIOS = [(1, 0.99), (400_000, 0.99), (2_200_000, 0.545), (4_000_000, 0.10), (9_000_000, 0.10)]


@pytest.mark.parametrize(("decoded", "want"), RATIOS)
def test_allowed_ratio_is_go_yamls(decoded: int, want: float) -> None:
    assert yamlio.allowed_ratio(decoded) == pytest.approx(want)


def _nested(levels: int, width: int, *, flow: bool) -> str:
    """An alias bomb of `width`^`levels` leaves, in flow style (libyaml's path) or block style (the fast reader's)."""
    lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"] if flow else ["l0: &l0", *(["- x"] * width)]
    for n in range(1, levels):
        items = [f"*l{n - 1}"] * width
        lines += [f"l{n}: &l{n} [{', '.join(items)}]"] if flow else [f"l{n}: &l{n}", *(f"- {i}" for i in items)]
    return "\n".join(lines) + "\n"


CASES = [
    ("a dumper's shared value", "a: &x {b: [1, 2]}\nc: *x\nd: *x\n", None),
    ("101 aliases of a 101-item list: 98% of the nodes are aliased", _nested(2, 101, flow=True), None),
    ("the same, block style", _nested(2, 101, flow=False), None),
    ("200 aliases of a 200-item list: 99.5% are", _nested(2, 200, flow=True), yamlio.ExcessiveAliasingError),
    ("the same, block style", _nested(2, 200, flow=False), yamlio.ExcessiveAliasingError),
    ("a flow-style bomb", _nested(9, 9, flow=True), yamlio.ExcessiveAliasingError),
    ("a block-style bomb", _nested(9, 9, flow=False), yamlio.ExcessiveAliasingError),
    ("an alias inside its own anchor", "a: &a [1, *a]\n", yamlio.ExcessiveAliasingError),
]


@pytest.mark.parametrize(("name", "text", "error"), CASES, ids=[f"{i}: {c[0]}" for i, c in enumerate(CASES)])
def test_expansion_is_bounded_on_every_path(name: str, text: str, error: type[Exception] | None) -> None:
    results = []
    for read in (yamlio.load_all, yamlio.encode_all):
        try:
            read(text)
            results.append(None)
        except yaml.YAMLError as e:
            results.append(type(e))
    assert results == [error, error], name
