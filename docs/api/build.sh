#!/usr/bin/env bash
# Builds the API reference of a configured and built tree: installs its headers
# into BUILD/docs/install, runs Doxygen (docs/api/Doxyfile) over the installed
# include tree into BUILD/docs/html, and fails on any Doxygen warning -- an
# undocumented public symbol in particular (the list is in BUILD/docs/warnings.log).
# Usage: docs/api/build.sh BUILD. Exits 77 (ctest: skipped) without doxygen.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v doxygen >/dev/null; then
  echo "doxygen not found (make deps installs it)" >&2
  exit 77
fi
rm -rf "$build/docs/install" "$build/docs/html"
mkdir -p "$build/docs"
cmake --install "$build" --prefix "$build/docs/install" >/dev/null
export STRATA_DOCS_INPUT="$build/docs/install/include/strata"
export STRATA_DOCS_OUTPUT="$build/docs"
if ! (cd "$here" && doxygen Doxyfile); then
  echo "doxygen failed; its warnings:" >&2
  cat "$build/docs/warnings.log" >&2
  exit 1
fi
echo "API reference: $build/docs/html/index.html"
