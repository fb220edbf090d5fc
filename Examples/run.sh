#!/usr/bin/env bash
# Builds and runs Examples/EmbeddedCampaign, which depends on apns-bulk by URL and version like
# any other package would (`make test` runs this after `swift test`).
#
# The dependency is a throwaway repository at .build/example-origin/apns-bulk: the working
# tree's files (tracked and new, not ignored; Examples/ left out) committed and tagged with the
# version Sources/Pipeline/Campaign/Version.swift declares (what `apns-bulk --version` prints). The commit's author and date are fixed, so an unchanged tree
# gives the same commit and SwiftPM resolves and rebuilds nothing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SWIFT=${SWIFT:-swift}
EXAMPLE=$ROOT/Examples/EmbeddedCampaign
ORIGIN=$ROOT/.build/example-origin/apns-bulk
VERSION=$(sed -n 's/.*static let current = "\(.*\)"/\1/p' "$ROOT/Sources/Pipeline/Campaign/Version.swift")

rm -rf "$ORIGIN"
mkdir -p "$ORIGIN"
cd "$ROOT"
git ls-files -z --cached --others --exclude-standard -- . ':!Examples' | while IFS= read -r -d '' file; do
    if [ -e "$file" ]; then mkdir -p "$ORIGIN/$(dirname "$file")" && cp -pP "$file" "$ORIGIN/$file"; fi
done
cd "$ORIGIN"
git init -q -b main
git add -A
GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
    git -c user.name=apns-bulk -c user.email=apns-bulk@localhost -c commit.gpgsign=false \
    commit -q -m "apns-bulk $VERSION, as Examples/ depends on it"
git tag "$VERSION"
commit=$(git rev-parse HEAD)

# A new commit under the same tag: drop the pin, or SwiftPM refuses the moved tag, and the clone
# and checkout SwiftPM keeps of the origin, or it builds the old commit.
if [ "$(cat "$EXAMPLE/.build/origin-commit" 2>/dev/null)" != "$commit" ]; then
    rm -rf "$EXAMPLE/Package.resolved" "$EXAMPLE/.build/workspace-state.json" "$EXAMPLE/.build/checkouts/apns-bulk" \
        "$EXAMPLE"/.build/repositories/apns-bulk-*
fi
export APNS_BULK_URL="file://$ORIGIN"
# No shared cache: it keeps the origin by URL, and the tag moves with every change of the tree.
"$SWIFT" build --disable-dependency-cache --package-path "$EXAMPLE"
mkdir -p "$EXAMPLE/.build" && echo "$commit" >"$EXAMPLE/.build/origin-commit"
"$EXAMPLE/.build/debug/EmbeddedCampaign"
