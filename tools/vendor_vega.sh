#!/usr/bin/env bash
# Re-downloads the Vega, Vega-Lite and vega-embed browser bundles that
# `ssgd report` embeds (third_party/vega/), at the versions pinned below, from
# the npm registry (`npm pack`), and checks every file against
# third_party/vega/SHA256SUMS. Nothing is changed when a checksum differs.
#
#   tools/vendor_vega.sh           download, check, and install into third_party/vega/
#   tools/vendor_vega.sh --check   only check the files already in third_party/vega/
#
# To move to new versions: change the pins, run with --update-sums (writes
# SHA256SUMS from what was downloaded), review the diff, update
# third_party/vega/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

VEGA=5.33.1
VEGA_LITE=5.23.0
VEGA_EMBED=6.29.0

dest=third_party/vega
mode=install
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  --update-sums) mode=update ;;
  *) echo "usage: $0 [--check | --update-sums]" >&2; exit 2 ;;
esac

if [ "$mode" = check ]; then
  (cd "$dest" && sha256sum --check --strict SHA256SUMS)
  exit
fi

command -v npm >/dev/null || { echo "vendor_vega: npm is needed (apt-get install npm)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "vega@$VEGA" "vega-lite@$VEGA_LITE" "vega-embed@$VEGA_EMBED" >/dev/null)
stage="$work/stage"
mkdir -p "$stage"
unpack() {  # package version bundle [licence-name]
  local dir="$work/$1"
  mkdir -p "$dir"
  tar -xzf "$work/$1-$2.tgz" -C "$dir"
  cp "$dir/package/build/$3" "$stage/$3"
  if [ -n "${4:-}" ]; then cp "$dir/package/LICENSE" "$stage/$4"; fi
}
# vega's npm package carries no LICENSE file: LICENSE.vega is the repository's
# (https://github.com/vega/vega/blob/v$VEGA/LICENSE), kept here and checked.
unpack vega "$VEGA" vega.min.js
cp "$dest/LICENSE.vega" "$stage/LICENSE.vega"
unpack vega-lite "$VEGA_LITE" vega-lite.min.js LICENSE.vega-lite
unpack vega-embed "$VEGA_EMBED" vega-embed.min.js LICENSE.vega-embed

# The browser (UMD) bundles define the globals vega, vegaLite and vegaEmbed.
grep -q '\.vega={}' "$stage/vega.min.js" || { echo "vendor_vega: vega.min.js is not the UMD bundle" >&2; exit 1; }
grep -q '\.vegaLite={}' "$stage/vega-lite.min.js" || { echo "vendor_vega: vega-lite.min.js is not the UMD bundle" >&2; exit 1; }
grep -q '\.vegaEmbed=' "$stage/vega-embed.min.js" || { echo "vendor_vega: vega-embed.min.js is not the UMD bundle" >&2; exit 1; }

files=(vega.min.js vega-lite.min.js vega-embed.min.js LICENSE.vega LICENSE.vega-lite LICENSE.vega-embed)
if [ "$mode" = update ]; then
  (cd "$stage" && sha256sum "${files[@]}") > "$dest/SHA256SUMS"
  echo "vendor_vega: wrote $dest/SHA256SUMS"
fi
(cd "$stage" && sha256sum --check --strict --quiet "$OLDPWD/$dest/SHA256SUMS") || {
  echo "vendor_vega: downloaded files differ from $dest/SHA256SUMS; nothing changed" >&2
  exit 1
}
for f in "${files[@]}"; do cp "$stage/$f" "$dest/$f"; done
echo "vendor_vega: vega $VEGA, vega-lite $VEGA_LITE, vega-embed $VEGA_EMBED in $dest (checksums match)"
