"""nix.sh's in-container half, with fake nix, git and chown on a bare PATH (no Docker needed)."""

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash")
UTILITIES = ("mktemp", "readlink", "rm", "cp", "chmod", "find", "mkdir", "ln", "sleep")
NIX_EXIT = 3

# Stands in for `nix build`: writes a lock file and a store path, links ./result to it, fails.
# The pause puts its writes on a later clock tick than nix.sh's marker file.
FAKE_NIX = """#!{bash}
sleep 0.05
echo lock >flake.lock
mkdir -p store/pkg/bin
echo tool >store/pkg/bin/tool
ln -s "$PWD/store/pkg" result
exit {status}
"""
FAKE_LOGGER = """#!{bash}
printf '%s\\n' "${{0##*/}} $*" >>"$FAKE_LOG"
"""


def test_nix_sh_copies_results_hands_new_files_back_and_keeps_nixs_status(tmp_path: Path) -> None:
    assert BASH is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for utility in UTILITIES:
        found = shutil.which(utility)
        assert found is not None, utility
        (bin_dir / utility).symlink_to(found)
    fakes = {
        "nix": FAKE_NIX.format(bash=BASH, status=NIX_EXIT),
        "git": FAKE_LOGGER.format(bash=BASH),
        "chown": FAKE_LOGGER.format(bash=BASH),
    }
    for name, text in fakes.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    old = checkout / "old.txt"
    old.write_text("untouched")
    os.utime(old, (0, 0))
    os.utime(checkout, (0, 0))
    log = tmp_path / "calls.log"
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
        "FAKE_LOG": str(log),
        "MODELPLANE_IN_NIX_CONTAINER": "1",
        "HOST_UID": "1234",
        "HOST_GID": "5678",
    }

    result = subprocess.run(
        [BASH, str(ROOT / "nix.sh"), "build"], cwd=checkout, env=env, capture_output=True, text=True, check=False
    )

    calls = log.read_text().splitlines()
    chowned = sorted(path for call in calls if call.startswith("chown -h 1234:5678 ") for path in call.split()[3:])
    got = {
        "exit": result.returncode,
        "calls": [call for call in calls if not call.startswith("chown ")],
        "chowned": chowned,
        "result is a link": (checkout / "result").is_symlink(),
        "result content": (checkout / "result" / "bin" / "tool").read_text(),
    }
    assert got == {
        "exit": NIX_EXIT,
        "calls": ["git config --global --add safe.directory /work"],
        "chowned": sorted(
            [
                ".",
                "./flake.lock",
                "./result",
                "./result/bin",
                "./result/bin/tool",
                "./store",
                "./store/pkg",
                "./store/pkg/bin",
                "./store/pkg/bin/tool",
            ]
        ),
        "result is a link": False,
        "result content": "tool\n",
    }, result.stderr
