"""The engine args the preset launcher already sets are dropped, in every spelling vLLM accepts."""

from dataclasses import dataclass

import pytest
from modelplane.render.args import extra_args, tensor_parallel_size


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    want_extra: tuple[str, ...]
    want_tensor: int | None


CASES = [
    Case("no args stay no args", (), (), None),
    Case(
        "unrelated flags are kept in order",
        ("--max-model-len", "4096", "--enforce-eager"),
        ("--max-model-len", "4096", "--enforce-eager"),
        None,
    ),
    Case(
        "space-separated owned flags and their values are dropped",
        ("--model", "Qwen/Qwen3-8B", "--served-model-name", "qwen", "--port", "8080", "--dtype", "auto"),
        ("--dtype", "auto"),
        None,
    ),
    Case(
        "equals-form owned flags are dropped",
        ("--model=Qwen/Qwen3-8B", "--port=9000", "--served-model-name=q", "--seed=1"),
        ("--seed=1",),
        None,
    ),
    Case(
        "the tensor-parallel size is read and dropped",
        ("--tensor-parallel-size", "4", "--enforce-eager"),
        ("--enforce-eager",),
        4,
    ),
    Case("the -tp alias counts as the tensor-parallel flag", ("-tp", "2"), (), 2),
    Case("underscore spelling counts as the flag", ("--tensor_parallel_size=8",), (), 8),
    Case("the last tensor-parallel size wins as in argparse", ("-tp", "2", "--tensor-parallel-size=4"), (), 4),
    Case("a non-numeric tensor size is dropped but not used", ("--tensor-parallel-size", "auto"), (), None),
    Case(
        "an owned flag followed by another flag does not swallow it",
        ("--model", "--enforce-eager"),
        ("--enforce-eager",),
        None,
    ),
    Case("an owned flag at the end has no value to drop", ("--seed", "1", "--port"), ("--seed", "1"), None),
    Case(
        "flags that merely share a prefix are kept",
        ("--model-loader-extra-config", "{}", "--portal"),
        ("--model-loader-extra-config", "{}", "--portal"),
        None,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_args(case: Case) -> None:
    assert (extra_args(case.args), tensor_parallel_size(case.args)) == (case.want_extra, case.want_tensor)
