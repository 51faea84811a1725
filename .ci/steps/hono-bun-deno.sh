#!/usr/bin/env bash
# The example servers as the README runs them, from their command lines on the built package:
# the Hono app on Bun and on Deno (users in memory, then in a SQLite file), and every Node server
# on Node 24. Each starts on a free port, must pass the CLI's conformance suite (run on Node 24),
# and must exit 0 on SIGTERM. Whatever happens, no server is left running.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
node="$root/node_modules/.bin/node"
bun="$root/node_modules/.bin/bun"
deno="$root/node_modules/.bin/deno"
work="$1/hono-bun-deno"
rm -rf "$work" && mkdir -p "$work"
cd "$root"
[ -f dist/cli/index.js ] || npm run build >/dev/null

server=""
trap '[ -z "$server" ] || kill -KILL "$server" 2>/dev/null; true' EXIT

check() { # name command...: starts the server, checks it, stops it
  local name=$1 log="$work/$1.log" url=""
  shift
  echo "--- $name"
  : >"$log" # exists before the server's shell opens it
  PORT=0 HOST=127.0.0.1 "$@" >"$log" 2>&1 &
  server=$!
  for _ in $(seq 300); do
    url=$(sed -n 's/^Provisioning API at \([^,]*\),.*/\1/p' "$log")
    [ -z "$url" ] && kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$log"; echo "$name printed no URL"; return 1; }
  local report
  report=$("$node" dist/cli/index.js conformance "$url") || { echo "$report"; return 1; }
  echo "${report##*$'\n'}"
  kill -TERM "$server"
  for _ in $(seq 150); do kill -0 "$server" 2>/dev/null && sleep 0.1 || break; done
  kill -0 "$server" 2>/dev/null && { cat "$log"; echo "$name still runs 15 s after SIGTERM"; return 1; }
  wait "$server" || { cat "$log"; echo "$name did not exit 0 on SIGTERM"; return 1; }
  server=""
  grep -q '^Stopped\.$' "$log" || { cat "$log"; echo "$name did not stop gracefully"; return 1; }
}

deno_run=("$deno" run --allow-net --allow-env --allow-read)
check hono-bun "$bun" examples/servers/hono/bun.ts
check hono-deno "${deno_run[@]}" examples/servers/hono/deno.ts
check hono-bun-sqlite env DATABASE_FILE="$work/bun.db" "$bun" examples/servers/hono/bun.ts
check hono-deno-sqlite env DATABASE_FILE="$work/deno.db" "${deno_run[@]}" --allow-write \
  examples/servers/hono/deno.ts
for example in node-http express fastify koa hono/node; do
  check "${example/\//-}" "$node" "examples/servers/$example.ts"
done
