#!/bin/sh
# The Debian packages a binary needs at run time, as dpkg-shlibdeps derives them from the
# libraries it links (so a new C library comes along by itself). Prints the Depends line
# ("libc6 (>= 2.34), libcsv3 (>= 3.0.0), ..."); with --names, one package name a line
# (the first of any alternatives, no version).
# Usage: packaging/shlibdeps.sh [--names] BINARY
set -eu
names=false
if [ "$1" = --names ]; then names=true; shift; fi
binary=$(realpath "$1")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# dpkg-shlibdeps reads debian/control for the package's name: a stub is enough.
mkdir "$work/debian"
printf 'Source: apns-bulk\n\nPackage: apns-bulk\nArchitecture: any\n' >"$work/debian/control"
line=$(cd "$work" && dpkg-shlibdeps -O -e "$binary" 2>"$work/log") || { cat "$work/log" >&2; exit 1; }
depends=${line#shlibs:Depends=}
if $names; then
  echo "$depends" | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/[[:space:]]//g' | grep -v '^$' | sort -u
else
  echo "$depends"
fi
