#!/usr/bin/env bash
# The directory sync suite against a real Active Directory: installs Samba's AD DC from Debian's
# packages when missing (stopping whatever service the install starts), then
# test/support/samba-ad.ts provisions a throwaway domain in a temporary folder, with a private CA
# and a server certificate, loads 2,000 generated users (disabled accounts, contacts, computers,
# users without mail, non-ASCII names) through Samba's Python bindings, starts the DC on
# 127.0.0.1 (LDAP only: 389 with StartTLS, 636), runs the Active Directory suite on the
# repository's Node 24 with the DC's address in the environment, and stops the DC whatever
# happens. Samba's LDAP ports cannot be chosen: the step needs 389, 636, 3268 and 3269 free on
# 127.0.0.1, and says so when they are not.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
node="$root/node_modules/.bin/node"
started=$(date +%s)

if ! command -v samba >/dev/null || ! command -v samba-tool >/dev/null \
  || ! /usr/bin/python3 -c 'import samba.samdb' 2>/dev/null || ! command -v openssl >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends \
    samba samba-ad-dc samba-ad-provision ldb-tools ldap-utils openssl python3-samba >/dev/null
  # A fresh install may start the system's Samba daemons; this step runs its own instead.
  for service in samba-ad-dc smbd nmbd winbind; do
    invoke-rc.d "$service" stop >/dev/null 2>&1 || true
  done
fi

cd "$root"
status=0
PLATFORM_INTEGRATION_REQUIRE_AD=1 "$node" --disable-warning=ExperimentalWarning \
  test/support/samba-ad.ts run "${PLATFORM_INTEGRATION_AD_PEOPLE:-2000}" -- \
  "$node" node_modules/vitest/vitest.mjs run test/ldap/active-directory "${@:2}" || status=$?
echo "samba-ad step: $(($(date +%s) - started)) s"
exit "$status"
