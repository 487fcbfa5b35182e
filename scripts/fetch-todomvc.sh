#!/usr/bin/env bash
# TodoMVC (MIT licence): many public implementations of one specification, as the npm package `todomvc` ships
# them (version 0.1.1, pinned by its registry integrity). Used as a static FlowEval reference site and its analogs
# (docs/floweval-metrics.md, tests/suites/floweval): nothing of it is committed.
#   .cache/todomvc/0.1.1/examples/<implementation>/  the implementations, served as they are
#   .cache/todomvc/0.1.1/license.md                  their licence (MIT), beside them
#   tasks/floweval/todomvc/vanillajs/static/         the reference site of tasks/floweval/todomvc (a copy)
# Idempotent; the download is checked against the pinned sha512 before anything is written.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.1.1
INTEGRITY="sha512-gd6+DoObD0yzXEpbvHvkSoOd9/krxd/wvUTbzvKe7uTjAM2v9wG6zy4Icl6aUcMpDof53Cz2l5O/9mdN3Jk+ag=="
IMPLEMENTATIONS=(vanillajs mithril angularjs)
DEST=.cache/todomvc/$VERSION
SITE=tasks/floweval/todomvc/vanillajs/static

if [ ! -f "$DEST/.complete" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "todomvc@$VERSION" --silent >/dev/null)
  tarball="$work/todomvc-$VERSION.tgz"
  got="sha512-$(python3 -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$tarball")"
  if [ "$got" != "$INTEGRITY" ]; then
    echo "fetch-todomvc: todomvc@$VERSION does not match its pinned integrity ($got)" >&2
    exit 1
  fi
  members=(package/license.md)
  for name in "${IMPLEMENTATIONS[@]}"; do members+=("package/examples/$name"); done
  tar -xzf "$tarball" -C "$work" "${members[@]}"
  mkdir -p "$(dirname "$DEST")"
  rm -rf "$DEST.partial" && mv "$work/package" "$DEST.partial"
  touch "$DEST.partial/.complete"
  rm -rf "$DEST" && mv "$DEST.partial" "$DEST"
fi

if [ ! -f "$SITE/index.html" ]; then
  rm -rf "$SITE.partial" && cp -r "$DEST/examples/vanillajs" "$SITE.partial"
  cp "$DEST/license.md" "$SITE.partial/LICENSE.md"
  rm -rf "$SITE" && mv "$SITE.partial" "$SITE"
fi
echo "$DEST"
