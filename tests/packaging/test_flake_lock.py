"""flake.lock pins every input flake.nix declares, to a full revision and its NAR hash.

Without a lock, `nix flake check` resolves `nixos-25.05` to whatever the branch is that day, so two
runs of the same commit may build against different packages.
"""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GITHUB_INPUT = re.compile(r'inputs\.(\w+)\.url = "github:([\w.-]+)/([\w.-]+)/([\w.-]+)";')


def _declared() -> dict[str, dict[str, str]]:
    flake = (ROOT / "flake.nix").read_text()
    return {
        name: {"owner": owner, "repo": repo, "ref": ref, "type": "github"}
        for name, owner, repo, ref in GITHUB_INPUT.findall(flake)
    }


def test_the_flake_declares_its_inputs_as_this_test_reads_them() -> None:
    # A reworded input line must not let the test below pass over an empty set.
    assert sorted(_declared()) == ["nixpkgs"]


def test_every_input_is_locked_to_a_full_revision_and_nar_hash() -> None:
    lock = json.loads((ROOT / "flake.lock").read_text())
    nodes = lock["nodes"]
    declared = _declared()
    got = {
        "version": lock["version"],
        "root inputs": nodes[lock["root"]]["inputs"],
        "originals": {name: nodes[name]["original"] for name in declared},
        "pins": {
            name: (
                nodes[name]["locked"]["type"],
                nodes[name]["locked"]["owner"] == declared[name]["owner"],
                nodes[name]["locked"]["repo"] == declared[name]["repo"],
                bool(re.fullmatch(r"[0-9a-f]{40}", nodes[name]["locked"]["rev"])),
                bool(re.fullmatch(r"sha256-[A-Za-z0-9+/]{43}=", nodes[name]["locked"]["narHash"])),
                isinstance(nodes[name]["locked"]["lastModified"], int),
            )
            for name in declared
        },
    }
    assert got == {
        "version": 7,
        "root inputs": {name: name for name in declared},
        "originals": declared,
        "pins": dict.fromkeys(declared, ("github", True, True, True, True, True)),
    }
