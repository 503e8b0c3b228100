# SPDX-License-Identifier: GPL-2.0
#
# The kprobes series: build Debian's linux-source-6.12 with our kprobes in
# place of the tree's, boot it under QEMU and test it.
#
#   make demo      build, boot, run the samples and show their output
#                  (make demo ARCH=arm64, riscv64 or arm: on that architecture)
#   make test      build both test configurations, boot each, run every test;
#                  ends with 'N passed, N failed'
#   make test-main, make test-alt   one configuration only
#   make test ARCH=arm64 (or riscv64, arm), make test-arm64   one architecture
#   make test-arm64-bti-kasan   the arm64 guest make test boots: built
#                  with clang, BTI in the kernel, generic KASAN
#   make test-arm64-kasan, make test-arm64-bti   one of the two only
#   make shell     build, boot to a shell in the guest
#   make storm     many kprobes clients at once for STORM_SECS (60) seconds
#                  on the main configuration, then a kmemleak scan
#   make bench     our kprobes against the tree's, under QEMU -icount:
#                  out/bench.txt and out/bench.png
#   make bench-arm64   the same on arm64 (our arm64 kprobes against the
#                  tree's): out/bench-arm64.txt
#   make bench-riscv64 the same on riscv64: out/bench-riscv64.txt
#   make cross     build the series for the other architectures, print a table
#   make matrix    x86-64 and arm64 in small configurations, print a table
#   make patches   write the patch series to out/patches/
#   make patches-check   build and boot every prefix of the series
#   make check     checkpatch --strict and kernel-doc on our files
#   make kunit     the KUnit suite through the tree's kunit.py
#   make docs      htmldocs of Documentation/trace, no warning from ours
#   FILTER=suite.case (a glob) with a test target or make kunit: only
#                  those KUnit cases run

SHELL := /bin/bash
REPO := $(abspath .)
BUILD := $(REPO)/.build
SRC := $(BUILD)/src
OBJ := $(BUILD)/obj
T := $(REPO)/tools/testing/kprobes
export JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))

# ccache lives outside the clone, so that a fresh clone (CI) starts warm.
export CCACHE_DIR ?= $(HOME)/.cache/kprobes-ccache
export CCACHE_BASEDIR := $(BUILD)
export CCACHE_MAXSIZE ?= 8G
export CCACHE_SLOPPINESS := time_macros

KMAKE = $(MAKE) -s -C $(SRC) O=$(OBJ) CC="ccache gcc" -j$(JOBS)
# The main configuration: distribution-like (IBT, return thunks, call depth
# tracking, PREEMPT_DYNAMIC, KASLR, livepatch) with KASAN, kmemleak, lockdep.
FRAGMENTS ?= $(T)/kprobes.config $(T)/debug.config
MAIN_APPEND := preempt=full
# FILTER=suite.case (a glob): only those KUnit cases run, in every guest
# and in make kunit (kunit.filter_glob=); the selftests still all run.
export FILTER ?=
KUNIT_APPEND := $(if $(FILTER),kunit.filter_glob=$(FILTER))
MAIN_APPEND += $(KUNIT_APPEND)

.PHONY: all deps tree kernel initramfs test demo shell patches check clean distclean \
	test-alt test-main alt-kernel bench bench-arm64 bench-riscv64 storm patches-check docs kunit test-arm64 test-riscv64 test-arm test-arm64-kasan test-arm64-bti \
	test-arm64-bti-kasan cross coverage matrix

# A second configuration: PREEMPT, no modules, no function tracer (so no
# kprobes on ftrace), the KUnit suite built in.
OBJ_ALT := $(BUILD)/obj-alt
ALT_FRAGMENTS := $(T)/kprobes.config $(T)/alt.config

all: kernel

deps:
	@$(T)/install-deps.sh

tree: deps
	@$(T)/prepare-tree.sh

kernel: tree
	@$(T)/config.sh $(SRC) $(OBJ) $(FRAGMENTS)
	@echo "  KERNEL  linux-source-6.12 $$(cat $(BUILD)/upstream-version) with our kprobes"
	@$(KMAKE) bzImage modules
	@$(KMAKE) M=$(T)/modules modules
	@$(T)/upstream-kunit.sh
	@$(KMAKE) M=$(BUILD)/upstream-kunit modules

initramfs: kernel
	@$(T)/make-initramfs.sh

# The other architectures booted in QEMU: the tree's arch code on our
# core. 'make test ARCH=arm64' (or riscv64, arm) tests that one alone.
CROSS_ARCHES := arm64 riscv64 arm
# make test boots arm64 built with clang, with BTI in the kernel (which
# 6.12 builds only with clang) and generic KASAN on top of the
# distribution-like configuration (arm64-bti-kasan): one arm64 kernel, not
# two, is what a cold make test has time to build; arm64 built with gcc
# is make test-arm64's and the bench's.
ARM64_VARIANTS := arm64-kasan arm64-bti arm64-bti-kasan
TEST_CROSS := arm64-bti-kasan riscv64 arm
CROSS_LOGS = $(foreach a,$(TEST_CROSS),$(BUILD)/console-$(a).log:$(a))

ifneq ($(filter $(ARCH),$(CROSS_ARCHES)),)
test: tree
	@$(T)/cross-guest.sh $(ARCH)
	@python3 $(T)/ktap-summary.py $(BUILD)/console-$(ARCH).log:$(ARCH)
else
# Both x86-64 configurations and the other architectures, one summary.
# QEMU runs each guest on one host thread (run-guest.sh), so while a
# guest runs, the other architectures' kernels build one after another
# on the other core, at the lowest priority: each architecture's guest
# boots once the x86-64 guests are done and its kernel is built
# (.build/cross-built-ARCH), while the next one builds.
CROSS_BUILD_LOG := $(BUILD)/cross-build.log
test: initramfs alt-kernel
	@rm -f $(BUILD)/cross-built-*; \
	{ for a in $(TEST_CROSS); do nice -n 19 $(T)/cross-guest.sh $$a build || exit 1; \
		touch $(BUILD)/cross-built-$$a; done; } > $(CROSS_BUILD_LOG) 2>&1 & bg=$$!; \
	echo "  KERNEL  $(TEST_CROSS) meanwhile, log in .build/cross-build.log"; \
	echo "  QEMU    main config, console in .build/console-test.log"; \
	$(T)/run-guest.sh -t 2400 $(BUILD)/console-test.log kptest=test $(MAIN_APPEND); \
	echo "  QEMU    alt config, console in .build/console-alt.log"; \
	$(ALT_RUN); \
	for a in $(TEST_CROSS); do \
		while [ ! -e $(BUILD)/cross-built-$$a ] && kill -0 $$bg 2>/dev/null; do sleep 5; done; \
		if [ ! -e $(BUILD)/cross-built-$$a ]; then wait $$bg; cat $(CROSS_BUILD_LOG); \
			echo "make test: the $$a build failed" >&2; exit 1; fi; \
		$(T)/cross-guest.sh $$a run || { kill $$bg 2>/dev/null; exit 1; }; \
	done; \
	wait $$bg
	@python3 $(T)/ktap-summary.py $(BUILD)/console-test.log:main \
		$(ALT_LOGS) $(CROSS_LOGS)
endif

$(addprefix test-,$(CROSS_ARCHES) $(ARM64_VARIANTS)): test-%: tree
	@$(T)/cross-guest.sh $*
	@python3 $(T)/ktap-summary.py $(BUILD)/console-$*.log:$*

test-main: initramfs
	@$(T)/run-guest.sh -t 2400 $(BUILD)/console-test.log kptest=test $(MAIN_APPEND)
	@python3 $(T)/ktap-summary.py $(BUILD)/console-test.log:main

ALT_GUEST = $(T)/run-guest.sh -k $(OBJ_ALT)/arch/x86/boot/bzImage \
	-i $(BUILD)/initramfs-bare.cpio.gz
ALT_RUN = $(ALT_GUEST) $(BUILD)/console-alt.log kptest=kunit $(KUNIT_APPEND) && \
	echo "  QEMU    alt config on one CPU of two, console in .build/console-alt-up.log" && \
	$(ALT_GUEST) -t 300 $(BUILD)/console-alt-up.log kptest=kunit maxcpus=1 \
		kunit.filter_glob=$(ALT_UP_TESTS)
# The cases that need a kernel booted with one CPU of several possible
# (the lock prefixes patched out), run again that way.
ALT_UP_TESTS := kprobes_test_x86.test_smp_lock_prefix
ALT_LOGS = $(BUILD)/console-alt.log:alt $(BUILD)/console-alt-up.log:alt-up

alt-kernel: tree
	@$(T)/config.sh $(SRC) $(OBJ_ALT) $(ALT_FRAGMENTS)
	@echo "  KERNEL  alt config (PREEMPT, no MODULES, no FUNCTION_TRACER)"
	@$(MAKE) -s -C $(SRC) O=$(OBJ_ALT) CC="ccache gcc" -j$(JOBS) bzImage
	@$(T)/make-initramfs.sh --bare

test-alt: alt-kernel
	@$(ALT_RUN)
	@python3 $(T)/ktap-summary.py $(ALT_LOGS)

ifneq ($(filter $(ARCH),$(CROSS_ARCHES)),)
DEMO_LOG := $(BUILD)/console-demo-$(ARCH).log
demo: tree
	@$(T)/cross-guest.sh $(ARCH) demo
else
DEMO_LOG := $(BUILD)/console-demo.log
demo: initramfs
	@$(T)/run-guest.sh -t 600 $(DEMO_LOG) kptest=demo $(MAIN_APPEND)
endif
	@sed -n '/^### /,/KPROBES-GUEST-DONE/p' $(DEMO_LOG) | tr -d '\r' | \
		grep -v 'KPROBES-GUEST-DONE'
	@grep -q KPROBES-GUEST-DONE $(DEMO_LOG)

STORM_SECS ?= 60
storm: initramfs
	@echo "  QEMU    storm for $(STORM_SECS) s, console in .build/console-storm.log"
	@$(T)/run-guest.sh -t $$(( $(STORM_SECS) + 600 )) $(BUILD)/console-storm.log \
		kptest=storm $(MAIN_APPEND) storm_secs=$(STORM_SECS)
	@python3 $(T)/ktap-summary.py $(BUILD)/console-storm.log:storm

shell: initramfs
	@$(T)/run-guest.sh -s $(BUILD)/console-shell.log kptest=shell $(MAIN_APPEND)

# Two more kernels (ours and the untouched tree, same fragments plus
# bench.config), each booted once with -icount shift=0.
bench: tree
	@$(T)/bench.sh

# Two arm64 kernels (ours and the tree's, the arm64 guest's fragments plus
# bench-arm64.config), each booted once under qemu-system-aarch64 -icount.
bench-arm64: tree
	@$(T)/bench-arm64.sh

# The same on riscv64 (the riscv64 guest's fragments plus
# bench-riscv64.config), under qemu-system-riscv64 -icount.
bench-riscv64: tree
	@BENCH_ARCH=riscv64 $(T)/bench-arm64.sh

# Only the optimization coverage of make bench, into out/coverage.txt.
coverage: tree
	@$(T)/bench.sh coverage

# The series built for every architecture Debian has a cross compiler
# for; prints a table. Not part of make test (CI's time).
cross: tree
	@$(T)/cross-build.sh $(CROSS_BUILD_ARCHES)
	@$(T)/build-matrix.sh

# x86-64 and arm64 in small configurations, each kprobes option on and off.
matrix: tree
	@$(T)/build-matrix.sh $(MATRIX_ROWS)

patches: deps
	@$(T)/make-patches.sh

# Every prefix of the series built (both x86-64 configurations) and its
# alt kernel booted; not part of make test (CI's time).
patches-check: patches
	@$(T)/patches-check.sh

check: tree
	@$(T)/check.sh

# The KUnit suite through the tree's runner, tools/testing/kunit/kunit.py.
kunit: tree
	@$(T)/kunit.sh

# Documentation/trace built with Sphinx; fails on a warning about ours.
docs: tree
	@$(T)/install-deps.sh --docs
	@$(T)/docs.sh

clean:
	rm -rf $(OBJ) $(BUILD)/initramfs* $(BUILD)/console-*.log out

distclean:
	rm -rf $(BUILD) out
