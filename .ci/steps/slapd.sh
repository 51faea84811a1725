#!/usr/bin/env bash
# The directory sync suite against a real OpenLDAP slapd: installs slapd from Debian's packages when
# missing, then test/support/slapd.ts starts a throwaway one on a free loopback port in a temporary
# folder, loads a generated directory (3,000 inetOrgPerson entries: non-ASCII names, entries
# without mail, multi-valued attributes, and a recorded Active Directory entry) with slapadd, runs
# the suite on the repository's Node 24 with the server's address in the environment, and stops
# the server whatever happens.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
node="$root/node_modules/.bin/node"

if [ ! -x /usr/sbin/slapd ] || [ ! -x /usr/sbin/slapadd ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends slapd ldap-utils >/dev/null
  # A fresh install starts the system's slapd; this step runs its own instead.
  invoke-rc.d slapd stop >/dev/null 2>&1 || true
fi

cd "$root"
PLATFORM_INTEGRATION_REQUIRE_LDAP=1 "$node" --disable-warning=ExperimentalWarning \
  test/support/slapd.ts run "${PLATFORM_INTEGRATION_LDAP_PEOPLE:-3000}" -- \
  "$node" node_modules/vitest/vitest.mjs run test/ldap "${@:2}"
