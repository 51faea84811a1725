#!/usr/bin/env bash
# The Redis store example's suite against a real server: installs redis-server from Debian's
# packages when missing, starts a throwaway server on 127.0.0.1 and a free port with its files in
# the work folder ($1), nothing saved to disk, runs the suite on the repository's Node 24, and
# stops the server whatever happens.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
node="$root/node_modules/.bin/node"

if ! command -v redis-server >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  # A fresh install starts the default service on port 6379; this step runs its own instead.
  invoke-rc.d redis-server stop >/dev/null 2>&1 || true
fi

data="$1/redis"
rm -rf "$data" && mkdir -p "$data"
port=$("$node" -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => {
  console.log(s.address().port); s.close(); })')
redis-server --bind 127.0.0.1 --port "$port" --dir "$data" --save '' --appendonly no \
  --logfile "$data/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 50); do
  if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then break; fi
  sleep 0.1
done
redis-cli -h 127.0.0.1 -p "$port" ping | grep -q PONG || { cat "$data/server.log"; exit 1; }

cd "$root"
PLATFORM_INTEGRATION_REDIS_URL="redis://127.0.0.1:$port" \
  PLATFORM_INTEGRATION_REQUIRE_REDIS=1 \
  "$node" node_modules/vitest/vitest.mjs run examples/redis-store
