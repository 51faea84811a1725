#!/usr/bin/env bash
# Bun and Deno, installed here from the npm registry (they are not devDependencies): the tests
# that run the clients on each and the license signature vectors (v1 needs node:crypto's MD5
# RSA-PSS), required (PLATFORM_INTEGRATION_REQUIRE_RUNTIMES=1, so that a missing runtime fails
# instead of skipping), then the Hono example app from its command line on
# each, users in memory and in a SQLite file, checked with `platform-integration conformance
# --read-user`, and serving SCIM from the same store (SCIM_TOKEN) checked with `conformance
# --scim`: Entra's and Okta's sequences against the Bun and Deno servers (see
# .ci/lib/check-example-server.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$1/hono-bun-deno"
rm -rf "$work" && mkdir -p "$work"
cd "$root"
bash .ci/install-runtimes.sh "$1"
bun="$1/runtimes/node_modules/.bin/bun"
deno="$1/runtimes/node_modules/.bin/deno"
[ -f dist/cli/index.js ] || npm run build >/dev/null
source .ci/lib/check-example-server.sh
check_scim=1

PLATFORM_INTEGRATION_BUN="$bun" PLATFORM_INTEGRATION_DENO="$deno" \
  PLATFORM_INTEGRATION_REQUIRE_RUNTIMES=1 \
  "$node" node_modules/vitest/vitest.mjs run test/clients/integration-api/runtimes.test.ts \
  test/clients/audit/spool/runtimes.test.ts test/clients/license/verify-license-field.test.ts

deno_run=("$deno" run --allow-net --allow-env --allow-read)
check_example hono-bun "$bun" examples/servers/hono/bun.ts
check_example hono-deno "${deno_run[@]}" examples/servers/hono/deno.ts
check_example hono-bun-sqlite env DATABASE_FILE="$work/bun.db" "$bun" examples/servers/hono/bun.ts
check_example hono-deno-sqlite env DATABASE_FILE="$work/deno.db" "${deno_run[@]}" --allow-write \
  examples/servers/hono/deno.ts
