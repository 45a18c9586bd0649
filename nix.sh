#!/usr/bin/env bash
# Run nix against this flake with nothing but Docker on the host: the script re-executes itself
# inside the nixos/nix container and runs `nix ARGS...` there, in the checkout.
#
#   ./nix.sh flake check     every check in flake.nix (what CI runs, under Nix)
#   ./nix.sh develop         a shell with the devShell's tools
#   ./nix.sh run .#fix       apply the formatters and ruff's autofixes to the checkout
#
# Environment: NIX_IMAGE (default nixos/nix:2.28.3), NIX_VOLUME (the named volume caching /nix,
# default modelplane-nix; `docker volume rm` it to start afresh).
set -euo pipefail

if [ "${MODELPLANE_IN_NIX_CONTAINER:-}" != 1 ]; then
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  # A TTY only for a terminal: docker refuses --tty when stdin is not one, and piped output
  # (CI logs, `| less`) should not carry terminal control codes.
  tty=()
  if [ -t 0 ] && [ -t 1 ]; then
    tty=(--tty)
  fi
  # No --privileged: Nix's build sandbox needs mount and user namespaces that an unprivileged
  # container does not grant, so sandboxing is turned off instead. The container is already the
  # isolation boundary, and the Python checks must reach PyPI anyway (see flake.nix).
  # A named volume (empty at first, so Docker seeds it with the image's /nix) keeps the store
  # between runs.
  exec docker run --rm --interactive "${tty[@]}" \
    --volume "${NIX_VOLUME:-modelplane-nix}:/nix" \
    --volume "$root:/work" --workdir /work \
    --env MODELPLANE_IN_NIX_CONTAINER=1 \
    --env HOST_UID="$(id -u)" --env HOST_GID="$(id -g)" \
    --env NIX_CONFIG=$'experimental-features = nix-command flakes\nsandbox = false' \
    "${NIX_IMAGE:-nixos/nix:2.28.3}" bash /work/nix.sh "$@"
fi

# The checkout is owned by the host user, not the container's root: without this, git (and
# so Nix's flake source fetcher) refuses to read it.
git config --global --add safe.directory /work

marker=$(mktemp)
status=0
nix "$@" || status=$?

# `result` links point into this container's /nix/store, which the host cannot see: replace
# each with a writable copy of what it points to.
for link in result result-*; do
  [ -L "$link" ] || continue
  target=$(readlink -f "$link")
  rm "$link"
  cp -R -L "$target" "$link"
  chmod -R u+w "$link"
done

# Everything written during this run (flake.lock, result copies) belongs to root here; hand it
# back to the host user.
find . -newer "$marker" -exec chown -h "${HOST_UID:?}:${HOST_GID:?}" {} +
rm -f "$marker"
exit "$status"
