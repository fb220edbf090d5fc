#!/bin/sh
# `make image`: an OCI image archive of apns-bulk built from Debian's packages only.
#
# A minimal root filesystem of this machine's Debian suite (mmdebstrap, variant essential) with the
# packages the binary links (packaging/shlibdeps.sh, from dpkg-shlibdeps) and IMAGE_PACKAGES
# (the CA certificates and tzdata), the `make install` binary at /usr/bin/apns-bulk, a numeric
# non-root user 65532:65532 and /data (the working directory, where the manifests mount the
# campaign volume); one layer, assembled by umoci, tarred as an oci-archive. With
# SOURCE_DATE_EPOCH every timestamp is fixed: the same commit against the same mirror state gives
# the same image digest. The last line printed is the archive's path.
#
# Environment: STAGE (a `make install DESTDIR` root with PREFIX=/usr), OUT (the archive), WORK
# (scratch directory), VERSION, REVISION, SOURCE_URL, SOURCE_DATE_EPOCH; optional IMAGE_PACKAGES,
# IMAGE_USER, and packaging/rootfs.sh's SUITE, MIRROR, SECURITY_MIRROR, PACKAGE_CACHE.
set -eu
: "${STAGE:?}" "${OUT:?}" "${WORK:?}" "${VERSION:?}" "${REVISION:?}" "${SOURCE_URL:?}" "${SOURCE_DATE_EPOCH:?}"
IMAGE_PACKAGES=${IMAGE_PACKAGES-ca-certificates tzdata}
IMAGE_USER=${IMAGE_USER:-65532:65532}
# This machine's own suite (packaging/rootfs.sh reads the same; its mirrors are deb.debian.org's).
SUITE=${SUITE:-$(. /etc/os-release && echo "$VERSION_CODENAME")}
# The licenses of what the binary is made of (NOTICE); the base system's packages carry their own
# in /usr/share/doc/*/copyright.
LICENSES="Apache-2.0 AND MIT AND LGPL-2.1-or-later AND BSD-3-Clause AND Unicode-3.0"
export SOURCE_DATE_EPOCH

binary="$STAGE/usr/bin/apns-bulk"
test -x "$binary" || { echo "image: $binary missing: run make install DESTDIR=$STAGE PREFIX=/usr" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$WORK"; mkdir -p "$WORK" "$(dirname "$OUT")"

# What goes in besides Debian's packages, owned by root with fixed times.
files="$WORK/files"
install -D -m 755 "$binary" "$files/usr/bin/apns-bulk"
install -D -m 644 "$here/debian/copyright" "$files/usr/share/doc/apns-bulk/copyright"
find "$files" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

packages=$("$here/shlibdeps.sh" --names "$binary" | tr '\n' ' ')
include=$(echo "$packages $IMAGE_PACKAGES" | tr -s ' ' ',' | sed 's/^,//; s/,$//')
echo "image: $SUITE packages: $include" >&2

# Hashed links in /etc/ssl/certs make the binary read the roots one by one from the directory
# and ignore ca-certificates.crt: the image keeps the bundle only, so that a bundle mounted over
# /etc/ssl/certs/ca-certificates.crt (a Kubernetes ConfigMap or Secret) is the trust store.
"$here/rootfs.sh" "$WORK/mmdebstrap.log" essential tar "$WORK/rootfs.tar" --skip=output/dev \
  --include="$include" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --customize-hook="cp -a '$files/.' \"\$1/\"" \
  --customize-hook='! test -d "$1/etc/ssl/certs" || find "$1/etc/ssl/certs" -type l -name "*.[0-9]" -delete' \
  --customize-hook="echo 'apns-bulk:x:${IMAGE_USER%%:*}:${IMAGE_USER##*:}:apns-bulk:/data:/usr/sbin/nologin' >>\"\$1/etc/passwd\"" \
  --customize-hook="echo 'apns-bulk:x:${IMAGE_USER##*:}:' >>\"\$1/etc/group\"" \
  --customize-hook="install -d -m 755 -o '${IMAGE_USER%%:*}' -g '${IMAGE_USER##*:}' \"\$1/data\" && touch -d @$SOURCE_DATE_EPOCH \"\$1/data\""

created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
name="apns-bulk:$VERSION"
layout="$WORK/oci"
umoci init --layout "$layout"
umoci new --image "$layout:$name"
umoci raw add-layer --image "$layout:$name" --history.created "$created" \
  --history.created_by "make image ($SUITE, mmdebstrap --variant=essential)" "$WORK/rootfs.tar"
umoci config --image "$layout:$name" --no-history --created "$created" --author "apns-bulk" \
  --architecture amd64 --os linux \
  --config.entrypoint /usr/bin/apns-bulk --config.cmd --help \
  --config.user "$IMAGE_USER" --config.workingdir /data \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.label "org.opencontainers.image.title=apns-bulk" \
  --config.label "org.opencontainers.image.version=$VERSION" \
  --config.label "org.opencontainers.image.revision=$REVISION" \
  --config.label "org.opencontainers.image.source=$SOURCE_URL" \
  --config.label "org.opencontainers.image.licenses=$LICENSES" \
  --config.label "org.opencontainers.image.created=$created" \
  --config.label "org.opencontainers.image.base.name=debian:$SUITE (mmdebstrap, essential)"
umoci gc --layout "$layout"

# The layout as an oci-archive: a tar with fixed order, owners and times.
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner --format=gnu \
  -C "$layout" -cf "$OUT" .
digest=$(sed 's/.*"digest":"\([^"]*\)".*/\1/' "$layout/index.json")
size=$(du -m "$OUT" | cut -f1)
echo "image: $name, manifest $digest, $size MiB, user $IMAGE_USER" >&2
echo "$digest" >"$OUT.digest"
echo "$OUT"
