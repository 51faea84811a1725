#!/usr/bin/env bash
# Installs the registry's `node` package at version $1 into folder $2 (binary at $2/node_modules/.bin/node).
set -euo pipefail
mkdir -p "$2"
printf '{"private":true,"allowScripts":{"node":true}}\n' >"$2/package.json"
npm install --prefix "$2" --no-audit --no-fund --save-exact "node@$1" >/dev/null
