#!/bin/sh
# A fresh Debian root filesystem of this machine's suite (SUITE, default /etc/os-release's) from
# Debian's mirrors (MIRROR, SECURITY_MIRROR), by mmdebstrap with the merged-/usr hook, for
# `make image` and `make deb-check`. Downloaded packages are kept in PACKAGE_CACHE for the next
# build (none stay in the root filesystem); mmdebstrap's output goes to LOG, shown if it fails.
# Usage: packaging/rootfs.sh LOG VARIANT FORMAT TARGET [more mmdebstrap options...]
set -eu
log=$1 variant=$2 format=$3 target=$4
shift 4
SUITE=${SUITE:-$(. /etc/os-release && echo "$VERSION_CODENAME")}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${SECURITY_MIRROR:-http://deb.debian.org/debian-security}
cache=$(realpath -m "${PACKAGE_CACHE:-$(dirname "$log")/apt-cache}")
mkdir -p "$cache"
mmdebstrap --quiet --variant="$variant" --mode=root --format="$format" --skip=download/empty --skip=essential/unlink \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
  --setup-hook="sync-in '$cache' /var/cache/apt/archives/" \
  "$@" \
  --customize-hook="sync-out /var/cache/apt/archives '$cache'" \
  --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
  "$SUITE" "$target" \
  "deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" "deb $SECURITY_MIRROR $SUITE-security main" \
  >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
