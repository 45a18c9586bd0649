"""An arg referring to the container's env (`$(NAME)`) reaches vLLM as the kubelet alone would expand it.

The oracle is the kubelet's expansion (kubelet.py) of the arg as the user wrote it. What runs is
what a cluster runs: the rendered word, expanded by the kubelet, then `eval`ed by bash the way the
presets end (`eval "exec vllm serve ... $@"`), into a stub vllm that records its argv.
"""

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplane.render.envrefs import shell_word

from tests.conformance import kserve, kubelet

DECLARED = ("A", "B_1")
PRESET = 'eval "exec vllm serve $@"'


def _vllm_gets(words: list[str], env: list[dict[str, Any]], workdir: Path) -> list[str]:
    container = {"command": ["/bin/bash", "-c", PRESET, "--"], "args": words, "env": env}
    return kserve.launch(container, workdir)[1:]  # after `serve`


CASES = [
    ("a plain reference", "--api-key=$(A)", '--api-key="${A}"'),
    ("two references and text", "x$(A)-$(B_1)y", 'x"${A}"-"${B_1}"y'),
    ("an escaped reference stays for the kubelet", "--x=$$(A)", "'--x=$$(A)'"),
    ("an undeclared name stays for the kubelet", "--x=$(C)", "'--x=$(C)'"),
    ("a name the shell cannot expand stays for the kubelet", "--x=$(A.b)", "'--x=$(A.b)'"),
    ("unterminated", "--x=$(A", "'--x=$(A'"),
    ("a dollar before the reference", "$x$(A)", "'$x'\"${A}\""),
    ("no reference", "--x={a,b}", "'--x={a,b}'"),
]


@pytest.mark.parametrize(("name", "arg", "want"), CASES, ids=[c[0] for c in CASES])
def test_shell_word(name: str, arg: str, want: str) -> None:
    assert shell_word(arg, frozenset(DECLARED)) == want, name


_TEXT = st.text(alphabet=list("$()AB_1C'\" x{}*;\\`\n#"), max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.lists(_TEXT, min_size=1, max_size=4), values=st.tuples(_TEXT, _TEXT))
def test_vllm_gets_what_the_kubelet_alone_would_paste(args: list[str], values: tuple[str, str], tmp_path: Path) -> None:
    env = [{"name": name, "value": value} for name, value in zip(DECLARED, values, strict=True)]
    variables = kubelet.container_env(env, {})
    words = [shell_word(a, frozenset(DECLARED)) for a in args]
    assert _vllm_gets(words, env, tmp_path) == [kubelet.expand(a, variables) for a in args]
