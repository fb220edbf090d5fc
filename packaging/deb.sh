#!/bin/sh
# `make deb`: apns-bulk_<version>_amd64.deb from the `make install` tree (PREFIX=/usr): the binary,
# its man page and bash/zsh/fish completions, copyright and changelog; Depends from
# dpkg-shlibdeps (packaging/shlibdeps.sh). Checked with lintian (no error or warning may remain).
# With SOURCE_DATE_EPOCH the package is byte-identical for the same tree. The last line printed
# is the package's path.
#
# Environment: STAGE, OUT (directory), WORK, VERSION, SOURCE_URL, SOURCE_DATE_EPOCH; MAINTAINER.
set -eu
: "${STAGE:?}" "${OUT:?}" "${WORK:?}" "${VERSION:?}" "${SOURCE_URL:?}" "${SOURCE_DATE_EPOCH:?}"
# A role address of the project, never a person's.
MAINTAINER=${MAINTAINER:-apns-bulk maintainers <apns-bulk@example.org>}
export SOURCE_DATE_EPOCH
here=$(cd "$(dirname "$0")" && pwd)
changelog_version=$(sed -n '1s/^apns-bulk (\([^)]*\)).*/\1/p' "$here/debian/changelog")
if [ "$changelog_version" != "$VERSION" ]; then
  echo "deb: packaging/debian/changelog's first entry is $changelog_version, the binary is $VERSION: add an entry for $VERSION" >&2
  exit 1
fi
arch=$(dpkg --print-architecture)
deb="$OUT/apns-bulk_${VERSION}_$arch.deb"
root="$WORK/root"
rm -rf "$WORK"; mkdir -p "$root/DEBIAN" "$OUT"

for file in usr/bin/apns-bulk usr/share/man/man1/apns-bulk.1 usr/share/bash-completion/completions/apns-bulk \
    usr/share/zsh/vendor-completions/_apns-bulk usr/share/fish/vendor_completions.d/apns-bulk.fish; do
  source_file=$file
  # make install puts zsh's under site-functions; Debian's zsh reads packages' from vendor-completions.
  [ "$file" = usr/share/zsh/vendor-completions/_apns-bulk ] && source_file=usr/share/zsh/site-functions/_apns-bulk
  mode=644; [ "$file" = usr/bin/apns-bulk ] && mode=755
  install -D -m "$mode" "$STAGE/$source_file" "$root/$file"
done
# bash-completion sources its files: a #! line there is noise (lintian says so).
sed -i '1{/^#!/d}' "$root/usr/share/bash-completion/completions/apns-bulk"
gzip -9n "$root/usr/share/man/man1/apns-bulk.1"
install -D -m 644 "$here/debian/copyright" "$root/usr/share/doc/apns-bulk/copyright"
gzip -9nc "$here/debian/changelog" >"$root/usr/share/doc/apns-bulk/changelog.gz"
chmod 644 "$root/usr/share/doc/apns-bulk/changelog.gz"

depends=$("$here/shlibdeps.sh" "$root/usr/bin/apns-bulk")
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: apns-bulk
Version: $VERSION
Architecture: $arch
Maintainer: $MAINTAINER
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Homepage: $SOURCE_URL
Description: send push-notification campaigns to APNs and account for every row
 apns-bulk sends push-notification campaigns (millions of device-token and
 payload rows from a CSV file) to Apple's Push Notification service over
 HTTP/2, as fast as APNs allows, and accounts for every row: each ends in
 exactly one recorded outcome. It totals result logs, merges dead tokens for
 cleanup, writes an HTML report, and embeds a mock APNs server for rehearsals.
EOF
(cd "$root" && find usr -type f | sort | xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
# xz -3: a 1.1 MB larger package than the default -6, built in half the time.
dpkg-deb --root-owner-group -Zxz -z3 --build "$root" "$deb" >/dev/null

if command -v lintian >/dev/null; then
  lintian --pedantic --fail-on error,warning "$deb" >&2 \
    || { echo "deb: lintian found errors or warnings in $deb (above)" >&2; exit 1; }
fi
echo "deb: apns-bulk $VERSION, $(du -k "$deb" | cut -f1) KiB, Depends: $depends" >&2
echo "$deb"
