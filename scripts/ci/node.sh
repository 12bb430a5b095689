#!/usr/bin/env bash
# Prints the path of an official Node binary of one major line (`scripts/ci/node.sh 24`), fetched once
# from the npm registry (package node-linux-<arch>, no install script) into a cache outside the repository.
# Each call asks the registry for the newest release of the line; offline, the newest cached one serves.
set -euo pipefail
major=${1:?usage: scripts/ci/node.sh MAJOR (e.g. 24)}
[[ $major =~ ^[0-9]+$ ]] || { echo "node.sh: MAJOR must be a number, not '$major'" >&2; exit 2; }
case $(uname -m) in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "node.sh: no official Node binary package for $(uname -m)" >&2; exit 1 ;;
esac
package=node-linux-$arch
cache=${NODE_BINARY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/chat-routing-gateway/node}
mkdir -p "$cache"

newest_cached() {
  ls -d "$cache/$major".*/bin/node 2>/dev/null | sort -V | tail -1
}

# Every release of the line, in the registry's order (not semver order): sort them.
version=$(npm view --fetch-retries=1 --fetch-retry-mintimeout=2000 "$package@$major" version --json 2>/dev/null | grep -oE '"[0-9]+\.[0-9]+\.[0-9]+"' | tr -d '"' | sort -V | tail -1 || true)
if [ -z "$version" ]; then
  cached=$(newest_cached)
  [ -n "$cached" ] || { echo "node.sh: cannot reach the npm registry and no Node $major is cached in $cache" >&2; exit 1; }
  echo "$cached"
  exit 0
fi

target=$cache/$version
if [ ! -x "$target/bin/node" ]; then
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$package@$version" >/dev/null && tar xzf "$package-$version.tgz")
  "$work/package/bin/node" --version >/dev/null
  # A rename is atomic: two runs at once never see a half-unpacked binary.
  mv -T "$work/package" "$target" 2>/dev/null || [ -x "$target/bin/node" ]
fi
echo "$target/bin/node"
