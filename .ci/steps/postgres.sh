#!/usr/bin/env bash
# The PostgreSQL store suite against a real server: installs PostgreSQL from Debian's packages
# when missing, starts a throwaway cluster on 127.0.0.1 in the work folder ($1), runs the suite
# on the repository's Node 24, and stops the cluster whatever happens. Other suites reuse it:
# PG_SUITE names the test paths (default: the PostgreSQL store, the quarantine's and SCIM's model
# tests with replicas, SCIM's sequences and its attack suites that need PostgreSQL (races between
# replicas, U+0000), the example servers, which take DATABASE_URL, and the Express application
# on PostgreSQL).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
node="$root/node_modules/.bin/node"

bindir() { find /usr/lib/postgresql -path '*/bin/initdb' -printf '%h\n' 2>/dev/null | sort -V | tail -n 1; }
if [ -z "$(bindir)" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  # A fresh install starts a default cluster on port 5432; this step runs its own instead.
  invoke-rc.d postgresql stop >/dev/null 2>&1 || true
fi
bin=$(bindir)

# The server refuses to run as root: the cluster belongs to the postgres user, who also needs a
# way into the work folder (a checkout under /root has none; then the cluster goes to /tmp).
as_postgres() { runuser -u postgres -- "$@"; }
read -r -a suite <<<"${PG_SUITE:-test/stores/postgres.test.ts test/provisioning/quarantine.replicas.model.test.ts test/scim/stores.test.ts test/scim/scim.replicas.model.test.ts test/scim/attack/scim-pg.test.ts test/scim/attack/scim-races.test.ts test/scim/attack/scim-nul.test.ts examples/servers/servers.test.ts examples/express-postgres/app.test.ts}"
data="$1/postgres-$(basename "${suite[0]}")"
rm -rf "$data" && mkdir -p "$data" && chown postgres: "$data"
if ! as_postgres test -w "$data"; then
  data=$(mktemp -d) && chown postgres: "$data"
fi
as_postgres "$bin/initdb" --pgdata="$data/db" --username=postgres --auth=trust --no-locale \
  --encoding=UTF8 --no-sync >/dev/null

port=$("$node" -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => {
  console.log(s.address().port); s.close(); })')
trap 'as_postgres "$bin/pg_ctl" stop --pgdata="$data/db" --mode=immediate >/dev/null || true
  rm -rf "$data"' EXIT
as_postgres "$bin/pg_ctl" start --pgdata="$data/db" --log="$data/server.log" --wait \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='' -c fsync=off" \
  >/dev/null || { cat "$data/server.log"; exit 1; }

cd "$root"
PLATFORM_INTEGRATION_PG_URL="postgres://postgres@127.0.0.1:$port/postgres" \
  PLATFORM_INTEGRATION_REQUIRE_PG=1 \
  "$node" node_modules/vitest/vitest.mjs run "${suite[@]}"
