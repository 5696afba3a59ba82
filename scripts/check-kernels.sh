#!/usr/bin/env bash
# Checks the CUDA kernels (kernels/cuda/eligibility.cu) on a machine without the CUDA toolkit:
# clang parses them as CUDA device code for one GPU architecture, with the intrinsics they call
# declared by kernels/cuda/check_stubs.h, and fails on any syntax or type error, or warning. The
# kernels are compiled for real by NVRTC only where a GPU runs them (kernels/README.md), so this
# is what keeps a GPU-free CI from accepting kernels that no longer compile.
# Installs Debian's clang-14 when no clang is present.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG="$(command -v clang-14 || command -v clang || true)"
if [ -z "$CLANG" ]; then
  command -v apt-get >/dev/null || { echo "FAIL: no clang, and no apt-get to install clang-14" >&2; exit 1; }
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-14 >/dev/null
  CLANG="$(command -v clang-14)"
fi
# -D__CUDACC_RTC__: the kernels' NVRTC branch (no standard headers), as NVRTC compiles them.
"$CLANG" -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_70 \
  -D__CUDACC_RTC__ -include kernels/cuda/check_stubs.h \
  -fsyntax-only -Wall -Wextra -Werror kernels/cuda/eligibility.cu
echo "ok: kernels/cuda/eligibility.cu parses and type-checks as CUDA device code ($("$CLANG" --version | head -1))"
