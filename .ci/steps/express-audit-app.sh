#!/usr/bin/env bash
# The Express audit app as its README runs it: the built package on plain Node 24, against the
# CLI's mock-api. The banner must show, a sign-in must reach the fake with the address the
# trusted proxy reported, and SIGTERM must deliver it and exit 0.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
node="$root/node_modules/.bin/node"
work="$1/express-audit-app"
rm -rf "$work" && mkdir -p "$work"
cd "$root"
[ -f dist/cli/index.js ] || npm run build >/dev/null

mock="" app=""
trap '[ -z "$app" ] || kill "$app" 2>/dev/null; [ -z "$mock" ] || kill "$mock" 2>/dev/null; true' EXIT
wait_for() { # pattern file
  for _ in $(seq 100); do grep -q "$1" "$2" && return 0; sleep 0.1; done
  cat "$2" && return 1
}

"$node" dist/cli/index.js mock-api --port 0 --updates 1 >"$work/mock.log" 2>&1 &
mock=$!
wait_for "export PLATFORM_INTEGRATIONAPI=" "$work/mock.log"
api=$(sed -n 's/.*export PLATFORM_INTEGRATIONAPI=//p' "$work/mock.log")

PORT=0 TRUST_PROXY=loopback PLATFORM_INTEGRATIONAPI="$api" \
  "$node" examples/express-audit-app/server.ts >"$work/app.log" 2>&1 &
app=$!
wait_for "Listening on" "$work/app.log"
url=$(grep -o 'http://localhost:[0-9]*' "$work/app.log")

URL="$url" "$node" --input-type=module -e '
const url = process.env.URL;
for (let attempt = 0; !(await (await fetch(url)).text()).includes("update-banner"); attempt++) {
  if (attempt === 50) throw new Error("no update banner on " + url);
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const response = await fetch(url + "/sign-in", {
  method: "POST",
  headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.7" },
  body: JSON.stringify({ username: "bob", password: "password123" }),
});
if (response.status !== 200) throw new Error("sign-in answered " + response.status);
'

kill -TERM "$app"
wait "$app" || { cat "$work/app.log"; exit 1; }
app=""
wait_for "audit user.signin.success .*ipAddress=203.0.113.7" "$work/mock.log"
grep "All audit events delivered." "$work/app.log"
