#!/usr/bin/env bash
# Build the function's runtime image and its Crossplane package (xpkg) under _output/.
#
# Environment (all optional):
#   IMAGE       image repository to tag (default: function-modelplane)
#   VERSION     image tag and xpkg file version (default: the version in pyproject.toml)
#   PLATFORMS   space-separated architectures, e.g. "amd64 arm64" (default: the Docker daemon's
#               own); a foreign architecture needs buildx with QEMU emulation on the host
#   OUTPUT_DIR  where the .xpkg files go (default: _output)
#
# Exit status: 2 when docker, its daemon or the crossplane CLI is missing (all are reported at
# once, so one run tells you everything to install); otherwise that of the first failing step.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
if ! command -v docker >/dev/null 2>&1; then
  missing+=("docker: not found on PATH. Install Docker Engine: https://docs.docker.com/engine/install/")
elif ! docker info >/dev/null 2>&1; then
  missing+=("docker daemon: not reachable ('docker info' failed). Start dockerd, or set DOCKER_HOST to a running daemon.")
fi
if ! command -v crossplane >/dev/null 2>&1; then
  missing+=("crossplane: CLI not found on PATH. Install v2.3.0 or newer: https://docs.crossplane.io/latest/cli/")
fi
if ((${#missing[@]} > 0)); then
  echo "package: cannot build the function package, missing prerequisites:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 2
fi

version=${VERSION:-$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml)}
image=${IMAGE:-function-modelplane}
out=${OUTPUT_DIR:-_output}
read -r -a archs <<<"${PLATFORMS:-$(docker version --format '{{.Server.Arch}}')}"

mkdir -p "$out"
for arch in "${archs[@]}"; do
  tag="$image:$version-$arch"
  xpkg="$out/function-modelplane-$version-$arch.xpkg"
  docker build --platform "linux/$arch" --tag "$tag" .
  # examples/ holds render inputs (XRs, Compositions, Function objects), not package examples:
  # point --examples-root at a path that does not exist so the default ./examples stays out.
  crossplane xpkg build --package-root=package --examples-root=package/examples \
    --embed-runtime-image="$tag" --package-file="$xpkg"
  echo "package: built $xpkg (runtime image $tag)"
done
