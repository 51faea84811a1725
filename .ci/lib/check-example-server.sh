# Sourced by the CI steps that run the example servers from their command lines. Defines
# check_example NAME COMMAND...: starts the server on a free port with its read route
# (READ_USER_ROUTE=1), runs `platform-integration conformance --read-user` against it (on the
# repository's Node 24), and stops it with SIGTERM, which must end it with status 0 after
# "Stopped.". With check_scim=1 it also serves SCIM (SCIM_TOKEN set) and runs `platform-integration
# conformance --scim` against it: Entra's and Okta's sequences, every test user deleted. Needs
# $root (the repository) and $work (a folder for logs). Whatever happens, no server is left
# running.
node="$root/node_modules/.bin/node"
server=""
trap '[ -z "$server" ] || kill -KILL "$server" 2>/dev/null; true' EXIT

check_example() {
  local name=$1 log="$work/$1.log" url=""
  shift
  echo "--- $name"
  : >"$log" # exists before the server's shell opens it
  local token=""
  # 64 hex digits, as `openssl rand -hex 32` makes (a SCIM token has at least 16 characters).
  [ "${check_scim:-0}" = 1 ] && token=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
  PORT=0 HOST=127.0.0.1 READ_USER_ROUTE=1 SCIM_TOKEN="$token" "$@" >"$log" 2>&1 &
  server=$!
  for _ in $(seq 300); do
    url=$(sed -n 's/^Provisioning API at \([^,]*\),.*/\1/p' "$log")
    [ -z "$url" ] && kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$log"; echo "$name printed no URL"; return 1; }
  local report
  report=$("$node" "$root/dist/cli/index.js" conformance "$url" --read-user "$url/v1/user/{uuid}") ||
    { echo "$report"; return 1; }
  # Effects verified, nothing left behind: the summary says neither "not verified" nor "delete".
  if grep -q -e "not verified" -e "Could not delete" <<<"$report"; then
    echo "$report"
    return 1
  fi
  grep -E "checks passed" <<<"$report"
  if [ -n "$token" ]; then
    local scim
    scim=$(sed -n 's/^SCIM 2.0 at \([^,]*\),.*/\1/p' "$log")
    [ -n "$scim" ] || { cat "$log"; echo "$name printed no SCIM URL"; return 1; }
    report=$(SCIM_TOKEN="$token" "$node" "$root/dist/cli/index.js" conformance --scim "$scim") ||
      { echo "$report"; return 1; }
    if grep -q -e "Could not delete" <<<"$report"; then
      echo "$report"
      return 1
    fi
    grep -E "checks passed" <<<"$report" | sed 's/^/SCIM: /'
  fi
  kill -TERM "$server"
  for _ in $(seq 150); do kill -0 "$server" 2>/dev/null && sleep 0.1 || break; done
  kill -0 "$server" 2>/dev/null && { cat "$log"; echo "$name still runs 15 s after SIGTERM"; return 1; }
  wait "$server" || { cat "$log"; echo "$name did not exit 0 on SIGTERM"; return 1; }
  server=""
  grep -q '^Stopped\.$' "$log" || { cat "$log"; echo "$name did not stop gracefully"; return 1; }
}
