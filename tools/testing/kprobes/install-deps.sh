#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install, with apt-get, whatever the build and the QEMU run need and is
# missing (with --docs, what make docs needs). Does nothing when
# everything is there.
set -euo pipefail
if [ "${1:-}" = --docs ]; then
	pkgs="python3-sphinx python3-sphinx-rtd-theme python3-yaml"
else
pkgs="linux-source-6.12 qemu-system-x86 gcc make flex bison bc libelf-dev
      libssl-dev cpio busybox-static ccache rsync python3 kmod xz-utils
      dwarves sparse git perl gzip libc6-dev gnuplot-nox python3-ply python3-git
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
      gcc-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-system-misc opensbi
      gcc-arm-linux-gnueabihf libc6-dev-armhf-cross clang lld llvm"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "ok installed" >/dev/null ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "  APT     $missing"
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: need root to install:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Another apt-get may hold the dpkg lock: wait for it rather than fail.
lock="-o DPkg::Lock::Timeout=900"
apt-get $lock update -qq
apt-get $lock install -y -qq --no-install-recommends $missing >/dev/null
