#!/usr/bin/env bash
# The project's checks, one subcommand per concern. CI (through make) and every Nix flake check
# call this script, so the two run the same commands and cannot drift apart.
#
# Usage: scripts/checks.sh SUBCOMMAND [ARGS...]
#   lint       ruff check
#   format     ruff format --check
#   typecheck  pyright
#   unit       pytest (ARGS are passed on)
#   shell      shellcheck and shfmt over the shell scripts
#   nix        nixfmt, statix and deadnix over flake.nix
#   all        lint, format, typecheck, unit and shell: what CI runs (it has no Nix tools)
#   fix        rewrite what the formatters and ruff's autofixes can
#   list       print the check subcommands, one a line
#
# Tools come from $VENV/bin (default .venv, holding the versions pyproject pins) when there,
# otherwise from PATH, as in the Nix devShell.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=${VENV:-.venv}
shell_files=(nix.sh scripts/*.sh .ci/run)
shfmt_flags=(--indent 2)

run() {
  local tool=$1
  shift
  if [ -x "$venv/bin/$tool" ]; then
    tool=$venv/bin/$tool
  fi
  "$tool" "$@"
}

check() {
  case "$1" in
  lint) run ruff check . ;;
  format) run ruff format --check . ;;
  typecheck) run pyright ;;
  unit) run pytest "${@:2}" ;;
  shell)
    run shellcheck "${shell_files[@]}"
    run shfmt "${shfmt_flags[@]}" --diff "${shell_files[@]}"
    ;;
  nix)
    nixfmt --check flake.nix
    statix check .
    deadnix --fail flake.nix
    ;;
  all)
    for name in lint format typecheck unit shell; do
      echo "== checks: $name" >&2
      check "$name"
    done
    ;;
  fix)
    run ruff check --fix .
    run ruff format .
    run shfmt "${shfmt_flags[@]}" --write "${shell_files[@]}"
    if command -v nixfmt >/dev/null 2>&1; then nixfmt flake.nix; fi
    ;;
  list) printf '%s\n' lint format typecheck unit shell nix all ;;
  *)
    echo "checks: unknown subcommand '$1'; expected one of: $(check list | tr '\n' ' ')fix" >&2
    return 2
    ;;
  esac
}

if (($# == 0)); then
  echo "usage: scripts/checks.sh lint|format|typecheck|unit|shell|nix|all|fix|list [ARGS...]" >&2
  exit 2
fi
check "$@"
