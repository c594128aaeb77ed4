#!/usr/bin/env bash
# Gathers, on a normal Debian 12 machine with network, what a bare GPU image
# lacks to build and test strata, so that bench/gpu_check.sh runs there
# offline: the Debian packages as .deb files (apt-get download, no root
# needed), each unpacked with dpkg-deb -x into a private prefix — never into /.
#
#   bench/gpu_deps.sh            (or: make gpu-deps)
#
# Result, git-ignored (about 10 MiB; the device tool carries at most 64 MiB):
#   .gpu-deps/debs/*.deb      the packages, as downloaded
#   .gpu-deps/prefix/usr/...  their files (headers, CMake configs, libsleef.so.3,
#                             the word list), documentation removed
#   .gpu-deps/MANIFEST        package versions and sha256 sums
# Another folder: GPU_DEPS_DIR=/path bench/gpu_deps.sh (gpu_check.sh reads the
# same variable).
#
# Why these packages: the CUDA image has nvcc, cuBLAS, CMake and ninja but not
#   libeigen3-dev       Eigen (CPU matmul and reference checks; headers only)
#   catch2              Catch2 2.13 (tests; headers and a CMake config)
#   nlohmann-json3-dev  nlohmann/json (checkpoints, benchmark JSON; headers only)
#   libsleef-dev, libsleef3  SLEEF (the CPU's vector math; a shared library
#                       needing only glibc >= 2.17, found at run time through
#                       the build tree's RUNPATH)
#   wamerican           /usr/share/dict/words, which the makemore example reads
# oneDNN is left out (40 MiB, and optional: without it Eigen does the CPU's f32
# GEMM), and so is doxygen (the api_docs test reports itself skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${GPU_DEPS_DIR:-.gpu-deps}
PACKAGES=(libeigen3-dev catch2 nlohmann-json3-dev libsleef-dev libsleef3 wamerican)

mkdir -p "$DEST/debs"
DEST=$(cd "$DEST" && pwd)
echo "gpu_deps: downloading ${PACKAGES[*]} into $DEST/debs"
rm -f "$DEST"/debs/*.deb
if ! (cd "$DEST/debs" && apt-get download -q "${PACKAGES[@]}"); then
  echo "gpu_deps: apt-get download failed; refresh the package lists (apt-get update) and retry" >&2
  exit 1
fi

echo "gpu_deps: unpacking into $DEST/prefix"
rm -rf "$DEST/prefix"
mkdir -p "$DEST/prefix"
for deb in "$DEST"/debs/*.deb; do
  dpkg-deb -x "$deb" "$DEST/prefix"
done
rm -rf "$DEST/prefix/usr/share/doc" "$DEST/prefix/usr/share/man" "$DEST/prefix/usr/share/doc-base"
# Symbolic links become copies (five small ones: libsleef.so -> .so.3 -> .so.3.5.1,
# the word list), so the folder survives any way of carrying it.
find "$DEST/prefix" -type l | while read -r link; do
  cp --remove-destination "$(readlink -f "$link")" "$link"
done

{
  echo "# bench/gpu_deps.sh, $(date -u +%Y-%m-%dT%H:%M:%SZ), on $(. /etc/os-release && echo "$PRETTY_NAME")"
  for deb in "$DEST"/debs/*.deb; do
    printf '%s %s %s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)" \
      "$(sha256sum "$deb" | cut -d' ' -f1)"
  done
} >"$DEST/MANIFEST"

# What gpu_check.sh and cmake/gpu_deps.toolchain.cmake rely on.
P=$DEST/prefix/usr
for f in share/eigen3/cmake/Eigen3Config.cmake lib/cmake/Catch2/Catch2Config.cmake \
  include/catch2/catch.hpp share/cmake/nlohmann_json/nlohmann_jsonConfig.cmake \
  include/x86_64-linux-gnu/sleef.h lib/x86_64-linux-gnu/libsleef.so lib/x86_64-linux-gnu/libsleef.so.3 \
  share/dict/words; do
  [ -e "$P/$f" ] || {
    echo "gpu_deps: $P/$f is missing after unpacking" >&2
    exit 1
  }
done
cat "$DEST/MANIFEST"
echo "gpu_deps: $(du -sh "$DEST" | cut -f1) in $DEST ($(du -sh "$DEST/debs" | cut -f1) of .deb files," \
  "$(du -sh "$DEST/prefix" | cut -f1) unpacked)"
