#!/usr/bin/env bash
# Builds the client package (client/) into the wheel the site serves at /client/ (browse.client_wheel).
#   scripts/build-client-wheel.sh [DIR]
# DIR defaults to the site's NVMEDB_CLIENT_WHEEL_DIR setting: $NVMEDB_CLIENT_WHEEL_DIR, else $NVMEDB_VAR_DIR/client,
# else var/client. The wheel is built from an sdist (python -m build), so nothing left over in client/build can slip
# in, then renamed into DIR, which keeps only this wheel. Needs the `build` package (requirements-dev.txt); setuptools
# comes from the package index into an isolated build environment. Prints the wheel's path.
set -euo pipefail
out="${1:-${NVMEDB_CLIENT_WHEEL_DIR:-${NVMEDB_VAR_DIR:-var}/client}}"
out="$(realpath -m "$out")"
cd "$(dirname "$0")/.."
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
mkdir -p "$out"
work="$(mktemp -d "$out/.build-XXXXXX")"
trap 'rm -rf "$work"' EXIT
if ! "$PYTHON" -m build --outdir "$work" client >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  echo "building the client wheel failed (output above)" >&2
  exit 1
fi
wheels=("$work"/nvmedb_client-*-py3-none-any.whl)
if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
  echo "python -m build made no single nvmedb_client wheel in $work" >&2
  exit 1
fi
name="$(basename "${wheels[0]}")"
chmod 644 "${wheels[0]}"
mv -f "${wheels[0]}" "$out/$name"  # a rename within DIR: the site never sees half a wheel
for old in "$out"/nvmedb_client-*.whl; do
  [ "$old" = "$out/$name" ] || rm -f "$old"
done
echo "$out/$name"
