#!/usr/bin/env bash
# setup.sh - install madsweep's Debian packages when missing, then build.
#
# usage: scripts/setup.sh [BUILD_DIR [extra cmake arguments...]]
#        scripts/setup.sh --install PACKAGE...
# Installs (apt-get, as root or through sudo) only the packages that are
# not installed yet, configures with CMake and builds. Idempotent: a second
# run only rebuilds what changed. With --install, only installs the named
# Debian packages (the Slurm and fuzz scripts use it for slurm-wlm, munge
# and clang).
set -euo pipefail
cd "$(dirname "$0")/.."

# apt-get install of those of "$@" that are missing
install_missing() {
  local missing=() p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
}

if [ "${1:-}" = "--install" ]; then
  shift
  install_missing "$@"
  exit 0
fi

build_dir=${1:-build}
shift || true

install_missing build-essential cmake pkg-config \
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools \
  libconfig-dev libcunit1-dev libjansson-dev libssl-dev \
  python3 python3-h5py python3-matplotlib python3-pandas

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >&2
cmake --build "$build_dir" -j "$(nproc)" >&2
