#!/usr/bin/env bash
# Installs the packed tarball into an empty project and imports every entry (ESM and CJS) on
# Node 22 and 24, runs the CLI through npx on both (and the sync command's worker thread from
# both builds, and the LDAP reader thread) and the demo on Node 24, then runs one real request
# cycle on Bun and on Deno.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$1/smoke"
node22="$2"
node24="$root/node_modules/.bin/node"
rm -rf "$work" && mkdir -p "$work"
tarball=$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)
cd "$work"
printf '{"name":"smoke","private":true,"type":"module"}\n' >package.json
# Bun reads the nearest tsconfig.json's paths: without one here it would find the repository's,
# which maps platform-integration/* to src/, and test the sources instead of the tarball.
printf '{}\n' >tsconfig.json
npm install --no-audit --no-fund "./$tarball" msw@3.0.5 ldapts@9.2.0 >/dev/null
cp "$root"/.ci/smoke/*.mjs "$root"/.ci/smoke/*.cjs .
for node in "$node22" "$node24"; do
  "$node" imports.mjs
  "$node" requires.cjs
  # The bin's shebang finds `node` on PATH: put this Node (and only it) first.
  mkdir -p "$work/path" && ln -sf "$(realpath "$node")" "$work/path/node"
  PATH="$work/path:$PATH" npx --no-install platform-integration --help | grep conformance >/dev/null
  PATH="$work/path:$PATH" npx --no-install platform-integration --version
  # The bin restarts itself for sync (process.execve): its one build, ESM, must find its commands.
  PATH="$work/path:$PATH" npx --no-install platform-integration sync --help | grep -q -- --ldap-url
  # The CLI ships as ESM only: a CommonJS copy would be dead weight in every install.
  test ! -e node_modules/platform-integration/dist/cli/index.cjs
  "$node" --disable-warning=ExperimentalWarning read-worker.mjs
done
# The README's first command, from the package: the demo on node:sqlite, with Node 24.
ln -sf "$(realpath "$node24")" "$work/path/node"
PATH="$work/path:$PATH" npx --no-install platform-integration demo --users 20
# Bun and Deno are not devDependencies: installed here (once per CI run) from the npm registry.
bash "$root/.ci/install-runtimes.sh" "$1"
"$1/runtimes/node_modules/.bin/bun" request-cycle.mjs
"$1/runtimes/node_modules/.bin/deno" run --allow-net --allow-env --allow-read request-cycle.mjs
