#!/usr/bin/env bash
# Builds the gateway image with this repository's routes.yaml, at the release gateway.env pins:
#   ./build-image.sh [IMAGE]      (default IMAGE: gateway:<GATEWAY_VERSION>)
# The gateway's source is fetched at that tag (a shallow clone, removed afterwards); its deploy/Dockerfile
# compiles our routes.yaml, given as the build context `config` (only routes.yaml is read from this folder).
# A problem in routes.yaml stops the build with routes.yaml:LINE:COL, as `npm run check` would say it.
# Needs git and docker with BuildKit (Docker 23 or later, or docker buildx build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=gateway.env
. "$here/gateway.env"
: "${GATEWAY_REPOSITORY:?gateway.env must set GATEWAY_REPOSITORY (owner/name on GitHub)}"
: "${GATEWAY_VERSION:?gateway.env must set GATEWAY_VERSION (a release tag, such as v0.2.0)}"
# GATEWAY_GIT_URL: another host or a mirror; by default the GitHub repository gateway.env names.
url=${GATEWAY_GIT_URL:-https://github.com/$GATEWAY_REPOSITORY.git}
image=${1:-gateway:$GATEWAY_VERSION}

source_dir=$(mktemp -d)
trap 'rm -rf "$source_dir"' EXIT
git -c advice.detachedHead=false clone --quiet --depth 1 --branch "$GATEWAY_VERSION" "$url" "$source_dir"
docker build --build-context "config=$here" -f "$source_dir/deploy/Dockerfile" -t "$image" "$source_dir"
echo "built $image: gateway $GATEWAY_VERSION with $here/routes.yaml"
