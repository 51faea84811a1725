#!/usr/bin/env bash
# The README's first command on this fresh clone, and the API reference build.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run demo
npm run docs
