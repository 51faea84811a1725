#!/usr/bin/env bash
# Installs Bun and Deno from the npm registry into $1/runtimes, once (binaries in
# $1/runtimes/node_modules/.bin). They are not devDependencies, so that a contributor's `npm ci`
# downloads neither (about 200 MB): the CI steps that run them call this, as .ci/run installs
# Node 22 with install-node.sh.
set -euo pipefail
folder="$1/runtimes"
bin="$folder/node_modules/.bin"
[ -x "$bin/bun" ] && [ -x "$bin/deno" ] && exit 0
mkdir -p "$folder"
printf '{"private":true,"allowScripts":{"bun":true,"deno":true}}\n' >"$folder/package.json"
npm install --prefix "$folder" --no-audit --no-fund --save-exact bun@1.4.5 deno@2.9.6 >/dev/null
"$bin/bun" --version >/dev/null
"$bin/deno" --version >/dev/null
