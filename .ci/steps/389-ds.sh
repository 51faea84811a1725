#!/usr/bin/env bash
# The directory sync suite against a real 389 Directory Server: installs 389-ds-base from Debian's
# packages when missing, then test/support/389ds.ts creates a throwaway instance in a temporary
# folder (dscreate in a network namespace of its own, then ns-slapd on free loopback ports, with
# the retro changelog and Content Sync on and a self-signed CA for LDAPS and StartTLS), loads
# 2,010 generated inetOrgPerson entries (above the server's default size limit of 2,000) with one
# `ldapadd -c`, runs test/ldap/389-ds*.test.ts on the repository's Node 24 with the server's
# address in the environment, and stops the server whatever happens. Prints the step's time.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
node="$root/node_modules/.bin/node"
started=$SECONDS

if [ ! -x /usr/sbin/dscreate ] || [ ! -x /usr/sbin/ns-slapd ] || ! command -v ldapadd >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends 389-ds-base ldap-utils >/dev/null
fi
echo "389-ds-base $(dpkg-query -W -f '${Version}' 389-ds-base) installed in $((SECONDS - started)) s"

cd "$root"
status=0
"$node" --disable-warning=ExperimentalWarning \
  test/support/389ds.ts run "${PLATFORM_INTEGRATION_389DS_PEOPLE:-2010}" -- \
  "$node" node_modules/vitest/vitest.mjs run test/ldap/389-ds "${@:2}" || status=$?
echo "389-DS step: $((SECONDS - started)) s"
exit "$status"
