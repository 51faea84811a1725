#!/usr/bin/env bash
# Every Node example server as the README runs it, from its command line on the built package and
# Node 24, with its opt-in read route: each must pass `platform-integration conformance
# --read-user` (effects verified, every test user deleted), serve SCIM from the same store
# (SCIM_TOKEN) that passes `conformance --scim`, and exit 0 on SIGTERM. The Hono app on Bun and
# Deno is checked the same way, SCIM included, by hono-bun-deno.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$1/example-servers"
rm -rf "$work" && mkdir -p "$work"
cd "$root"
[ -f dist/cli/index.js ] || npm run build >/dev/null
source .ci/lib/check-example-server.sh
check_scim=1

for example in node-http express fastify koa hono/node; do
  check_example "${example/\//-}" "$node" "examples/servers/$example.ts"
done
check_example node-http-sqlite env DATABASE_FILE="$work/node.db" "$node" \
  --disable-warning=ExperimentalWarning examples/servers/node-http.ts
