"""An arg referring to the container's env (`$(NAME)`) reaches vLLM as the kubelet alone would expand it.

The oracle is the kubelet's expansion (kubelet.py) of the arg as the user wrote it. What runs is
what a cluster runs: the container the launcher renders (args and the env aliases it adds),
expanded by the kubelet, then `eval`ed by bash the way the presets end (`eval "exec vllm serve ...
$@"`), into a stub vllm that records its argv. Env names are generated as Kubernetes accepts them
(apimachinery `IsRelaxedEnvVarName`: printable ASCII but `=`), not only shell identifiers.
"""

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplane.render.envrefs import alias, aliases, shell_word
from modelplane.render.launch import Launcher, convention
from modelplane.render.rendered import RenderError

from tests.conformance import kserve, kubelet

DECLARED = frozenset({"A", "B_1", "API-KEY", "a.b", "UID", "_"})
PRESET = 'eval "exec vllm serve $@"'


def ref(name: str) -> str:
    return f'"${{{alias(name)}}}"'


CASES = [
    ("a plain reference", "--api-key=$(A)", f"--api-key={ref('A')}"),
    ("two references and text", "x$(A)-$(B_1)y", f"x{ref('A')}-{ref('B_1')}y"),
    ("a name with a dash", "--api-key=$(API-KEY)", f"--api-key={ref('API-KEY')}"),
    ("a name with a dot", "$(a.b)", ref("a.b")),
    ("a name bash sets itself", "--uid=$(UID)$(_)", f"--uid={ref('UID')}{ref('_')}"),
    ("an escaped reference stays for the kubelet", "--x=$$(A)", "'--x=$$(A)'"),
    ("an undeclared name stays for the kubelet", "--x=$(C)", "'--x=$(C)'"),
    ("unterminated", "--x=$(A", "'--x=$(A'"),
    ("a dollar before the reference", "$x$(A)", f"'$x'{ref('A')}"),
    ("no reference", "--x={a,b}", "'--x={a,b}'"),
]


@pytest.mark.parametrize(("name", "arg", "want"), CASES, ids=[c[0] for c in CASES])
def test_shell_word(name: str, arg: str, want: str) -> None:
    assert shell_word(arg, DECLARED) == want, name


ALIAS_CASES = [
    ("no reference", ["--x"], []),
    (
        "each declared name once, in alias order",
        ["$(API-KEY)$(A)", "--k=$(API-KEY)", "$(C)", "$$(a.b)"],
        sorted(
            [{"name": alias("API-KEY"), "value": "$(API-KEY)"}, {"name": alias("A"), "value": "$(A)"}],
            key=lambda e: e["name"],
        ),
    ),
]


@pytest.mark.parametrize(("name", "args", "want"), ALIAS_CASES, ids=[c[0] for c in ALIAS_CASES])
def test_aliases(name: str, args: list[str], want: list[Mapping[str, str]]) -> None:
    assert aliases(args, DECLARED) == want, name


def test_an_env_var_named_like_an_alias_is_refused() -> None:
    launcher = Launcher(convention=convention("0.20"), multi_node=False, model_name="m", port=8000, tensor=None)
    env = [{"name": "A", "value": "x"}, {"name": alias("A"), "value": "y"}]
    with pytest.raises(RenderError, match=re.escape(f"env var {alias('A')} has a name the function reserves")):
        launcher.forward(["$(A)"], env)


# Names bash or the test harness read as configuration: declaring them changes how the container
# starts, not what a value does to the args.
_HARNESS = frozenset(
    {"PATH", "HOME", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "BASH_XTRACEFD", "POSIXLY_CORRECT"}
)
_KUBE_NAME = st.one_of(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters="="), min_size=1, max_size=6),
    st.sampled_from(["API-KEY", "a.b", "UID", "_", "PWD", "SHLVL", "RANDOM", "LINENO", "1", "-", "$(", "a b"]),
).filter(lambda n: n not in _HARNESS and not n.startswith(("BASH_FUNC_", "LD_", "STUB_", "DP_", "LC_")) and n != "LANG")
# Values that bash would run, split, glob or unquote if it ever parsed them.
_HOSTILE = st.lists(st.sampled_from([*"'\"$(){}*;\\`\n# x&|<>~!", "$(id)", "';id;'", '"$HOME"']), max_size=8).map(
    "".join
)


@st.composite
def _env_and_args(draw: st.DrawFn) -> tuple[list[str], dict[str, str], list[str]]:
    names = draw(st.lists(_KUBE_NAME, min_size=1, max_size=4, unique=True))
    values = {n: draw(_HOSTILE) for n in names}
    piece = st.one_of(
        st.sampled_from(names).map(lambda n: f"$({n})"),
        st.sampled_from(["$$", "$(", "$(NOPE)", "--k=", "'", '"', " ", "x"]),
    )
    args = draw(st.lists(st.lists(piece, max_size=4).map("".join), min_size=1, max_size=3))
    return names, values, args


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_env_and_args())
def test_vllm_gets_what_the_kubelet_alone_would_paste(
    case: tuple[list[str], dict[str, str], list[str]], tmp_path: Path
) -> None:
    names, values, args = case
    # Secret-fed vars: the kubelet resolves them as they are, never expanding what they hold.
    env: list[Any] = [{"name": n, "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}} for n in names]
    launcher = Launcher(convention=convention("0.20"), multi_node=False, model_name="m", port=8000, tensor=None)
    words, rendered_env = launcher.forward(args, env)
    container = {"command": ["/bin/bash", "-c", PRESET, "--"], "args": list(words), "env": rendered_env or env}
    got = kserve.launch(container, tmp_path, env=values)[1:]  # after `serve`
    assert got == [kubelet.expand(a, kubelet.container_env(env, values)) for a in args]
