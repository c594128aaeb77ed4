#!/usr/bin/env bash
# bench/gpu_check.sh's dry run, on a Debian machine without a GPU: proves that
# the check configures, builds and tests from the .gpu-deps prefix alone.
#
#   bench/gpu_check_dryrun.sh [COMMAND...]
#
# As root; COMMAND (default bench/gpu_check.sh) runs in the namespace with
# GPU_CHECK_ALLOW_NO_GPU=1, and the environment is as for gpu_check.sh.
#
# In a private mount namespace (unshare -m), every installed file of the
# Debian packages the prefix provides — and of oneDNN, which it leaves out —
# is hidden by overlay mounts whose upper layers hold whiteouts, so neither
# CMake nor the compiler nor the loader can see the system's copies: what the
# bare GPU image lacks is then lacking here too. Then gpu_check.sh runs with
# GPU_CHECK_ALLOW_NO_GPU=1 (the CUDA suite reports itself skipped, and
# compute-sanitizer and a CUDA PyTorch may be missing). Nothing outside the
# namespace changes; the mounts vanish with it.
set -euo pipefail
cd "$(dirname "$0")/.."
HIDE=(libeigen3-dev catch2 nlohmann-json3-dev libsleef-dev libsleef3 wamerican libdnnl-dev libdnnl2)

if [ "${GPU_DRYRUN_INSIDE:-}" != 1 ]; then
  [ "$(id -u)" -eq 0 ] || {
    echo "gpu_check_dryrun: needs root (mount namespaces and overlay mounts)" >&2
    exit 1
  }
  scratch=$(mktemp -d /tmp/gpu-dryrun.XXXXXX) # a tmpfs in the namespace; empty outside it
  rc=0
  env GPU_DRYRUN_INSIDE=1 GPU_DRYRUN_SCRATCH="$scratch" unshare -m --propagation private \
    "$(pwd)/bench/gpu_check_dryrun.sh" "$@" || rc=$?
  rmdir "$scratch"
  exit "$rc"
fi

# Inside the namespace: the paths to hide, topmost first (a folder whose every
# file belongs to the hidden packages is hidden whole), grouped by folder.
installed=()
for p in "${HIDE[@]}"; do dpkg -s "$p" >/dev/null 2>&1 && installed+=("$p"); done
SCRATCH=$GPU_DRYRUN_SCRATCH
mount -t tmpfs tmpfs "$SCRATCH"
PLAN=$SCRATCH/plan
python3 - "$PLAN" "${installed[@]}" <<'EOF'
import os, subprocess, sys
plan, pkgs = sys.argv[1], sys.argv[2:]
files, dirs = set(), set()
for p in pkgs:
    for path in subprocess.run(["dpkg", "-L", p], capture_output=True, text=True).stdout.split("\n"):
        if not path.startswith("/usr/") or path.startswith(("/usr/share/doc", "/usr/share/man")):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            dirs.add(path)
        elif os.path.lexists(path):
            files.add(path)
def only_hidden(d):
    for root, ds, fs in os.walk(d):
        for name in fs + [x for x in ds if os.path.islink(os.path.join(root, x))]:
            if os.path.join(root, name) not in files:
                return False
    return True
hidden_dirs = sorted(d for d in dirs if only_hidden(d))
top = [d for d in hidden_dirs if not any(d.startswith(h + "/") for h in hidden_dirs if h != d)]
entries = top + [f for f in sorted(files) if not any(f.startswith(h + "/") for h in top)]
with open(plan, "w") as out:
    for e in sorted(entries, key=lambda e: (e.count("/"), e)):
        out.write(os.path.dirname(e) + "\t" + os.path.basename(e) + "\n")
with open(plan + ".files", "w") as out:
    out.write("\n".join(sorted(files)) + "\n")
EOF

echo "gpu_check_dryrun: hiding the system's ${installed[*]}"
# Each overlay's lower layer is the folder as it is on the root file system
# (a plain bind of / shows no mounts), so overlays never stack on overlays.
mkdir "$SCRATCH/root"
mount --bind / "$SCRATCH/root"
n=0
for parent in $(cut -f1 "$PLAN" | awk '!seen[$0]++'); do
  n=$((n + 1))
  mkdir -p "$SCRATCH/u$n" "$SCRATCH/w$n"
  grep -P "^\Q$parent\E\t" "$PLAN" | cut -f2 | while read -r name; do
    mknod "$SCRATCH/u$n/$name" c 0 0
  done
  mount -t overlay overlay -o "lowerdir=$SCRATCH/root$parent,upperdir=$SCRATCH/u$n,workdir=$SCRATCH/w$n" "$parent"
  echo "  $parent: $(grep -cP "^\Q$parent\E\t" "$PLAN") entries hidden ($(grep -P "^\Q$parent\E\t" "$PLAN" | cut -f2 | head -4 | tr '\n' ' ')...)"
done
visible=0
while read -r f; do
  if [ -e "$f" ] || [ -L "$f" ]; then
    echo "gpu_check_dryrun: still visible: $f" >&2
    visible=1
  fi
done <"$PLAN.files"
[ "$visible" = 0 ] || exit 1
echo "gpu_check_dryrun: $(wc -l <"$PLAN.files") files of those packages are hidden in this namespace"
ldconfig -p | grep -E 'libsleef|libdnnl' && {
  echo "gpu_check_dryrun: the loader's cache still names them (harmless: the files are gone)"
}

[ $# -gt 0 ] || set -- bench/gpu_check.sh
GPU_CHECK_ALLOW_NO_GPU=1 "$@"
