#!/usr/bin/env bash
# The pg-boss audit suite (outbox, dead letters, a replica killed mid-delivery) against its own
# throwaway PostgreSQL cluster, started and stopped by postgres.sh.
set -euo pipefail
PG_SUITE=test/clients/audit-pg-boss exec bash "$(dirname "$0")/postgres.sh" "$1"
