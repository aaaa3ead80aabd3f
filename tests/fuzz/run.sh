#!/usr/bin/env bash
# API fuzzing of the all-in-one portal from its OpenAPI document (schemathesis; see README.md here).
# Needs the build (npm run build) and Python 3.11+ with venv (Debian: python3-venv). Installs
# schemathesis from requirements.txt into a virtual environment of its own, made again when
# requirements.txt changes: FUZZ_VENV (default ${XDG_CACHE_HOME:-$HOME/.cache}/evidence-portal/
# fuzz-venv), made with PYTHON (python3). The run's settings are described in README.md here.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=tests/fuzz

if [ ! -f packages/all-in-one/dist/main.js ]; then
  echo "The portal is not built: run npm run build first." >&2
  exit 1
fi

venv="${FUZZ_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/evidence-portal/fuzz-venv}"
if ! cmp -s "$here/requirements.txt" "$venv/requirements.installed" 2>/dev/null; then
  echo "Installing schemathesis into $venv"
  rm -rf "$venv"
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/requirements.installed"
fi

SCHEMATHESIS="$venv/bin/schemathesis" exec node "$here/run.mjs"
