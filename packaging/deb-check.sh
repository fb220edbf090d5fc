#!/bin/sh
# `make deb-check`: the package installed into a fresh Debian root filesystem of this machine's
# suite (mmdebstrap, variant apt), apt resolving its Depends from the mirror, then, inside that
# root: --version, the man page and completions where Debian looks for them, and a campaign sent
# to the embedded mock APNs with every row accounted for once; then the package removed cleanly.
#
# Environment: OUT (where `make deb` left the package), WORK, VERSION; packaging/rootfs.sh's
# SUITE, MIRROR, SECURITY_MIRROR, PACKAGE_CACHE.
set -eu
: "${OUT:?}" "${WORK:?}" "${VERSION:?}"
SUITE=${SUITE:-$(. /etc/os-release && echo "$VERSION_CODENAME")}
here=$(cd "$(dirname "$0")" && pwd)
arch=$(dpkg --print-architecture)
deb=$(realpath "$OUT/apns-bulk_${VERSION}_$arch.deb")
test -f "$deb" || { echo "deb-check: $deb missing: run make deb" >&2; exit 1; }
rm -rf "$WORK"; mkdir -p "$WORK"

# What runs inside the fresh root, as a user would after `apt install ./apns-bulk_*.deb`.
cat >"$WORK/inside.sh" <<EOF
set -eu
test "\$(apns-bulk --version)" = "$VERSION"
test -f /usr/share/man/man1/apns-bulk.1.gz
test -f /usr/share/bash-completion/completions/apns-bulk
test -f /usr/share/doc/apns-bulk/copyright
cd /tmp && mkdir campaign && cd campaign
apns-bulk gen --rows 5000 --out campaign.csv.zst --invalid-rate 0.01 --unregistered-rate 0.02 \
  --unregistered-out gone.txt --seed 1 >/dev/null
apns-bulk send --input campaign.csv.zst --topic com.example.app --endpoint mock \
  --mock-option unregistered-file=gone.txt --out out --progress never >summary.txt
apns-bulk report out >report.txt
grep -q '^total: rows 5000 ' report.txt || { cat report.txt; exit 1; }
EOF

# apt installs the local package with what it depends on (the file-mirror-automount hook makes
# the .deb's directory visible to apt), then inside.sh runs in that root.
"$here/rootfs.sh" "$WORK/mmdebstrap.log" apt null /dev/null \
  --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
  --include="$deb" \
  --customize-hook="cp '$WORK/inside.sh' \"\$1/tmp/inside.sh\"" \
  --customize-hook='chroot "$1" sh /tmp/inside.sh' \
  --customize-hook="chroot \"\$1\" dpkg-query -W -f='\${Depends}\n' apns-bulk >'$WORK/depends'" \
  --customize-hook='chroot "$1" apt-get remove --purge -y -qq apns-bulk >/dev/null' \
  --customize-hook='! test -e "$1/usr/bin/apns-bulk"' \
  || { echo "deb-check: FAILED (above)" >&2; exit 1; }
echo "deb-check: $(basename "$deb") installed into a fresh $SUITE root with its Depends ($(cat "$WORK/depends")): --version, man page, completions, a 5,000-row campaign to the embedded mock counted once by report; removed cleanly"
