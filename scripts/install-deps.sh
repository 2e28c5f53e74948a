#!/usr/bin/env bash
# Install what tscope needs to build and test on Debian/Ubuntu, only when
# something is missing (so a warm machine pays nothing).
set -euo pipefail

need=()
command -v meson >/dev/null || need+=(meson)
command -v ninja >/dev/null || need+=(ninja-build)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v cc >/dev/null || need+=(gcc)
command -v nm >/dev/null || need+=(binutils)
pkg-config --exists libcjson 2>/dev/null || need+=(libcjson-dev)
pkg-config --exists cmocka 2>/dev/null || need+=(libcmocka-dev)
pkg-config --exists yajl 2>/dev/null || need+=(libyajl-dev)
pkg-config --exists zlib 2>/dev/null || need+=(zlib1g-dev)
# Optional (gzip traces decompressed faster; zlib does it without).
pkg-config --exists libdeflate 2>/dev/null || need+=(libdeflate-dev)
# Open MPI: tscope-report-mpi and its test (both skipped without it).
command -v mpirun >/dev/null || need+=(openmpi-bin)
pkg-config --exists ompi-c 2>/dev/null || need+=(libopenmpi-dev)
# The pip way (pyproject.toml; test pip_wheel, skipped without them): the
# system Python's meson-python, build and venv, and patchelf.
pyhas() { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import $1" 2>/dev/null; }
pyhas mesonpy || need+=(python3-mesonpy)
pyhas build || need+=(python3-build)
pyhas 'venv, ensurepip' || need+=(python3-venv)
command -v patchelf >/dev/null || need+=(patchelf)

if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
echo "tscope: installing ${need[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
