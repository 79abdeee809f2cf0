# vaai: LIO backend with the VAAI offloads.  `make help` lists the targets.
#
# The kernel: KDIR's when KDIR is given; else the running one where its
# headers are installed; else the newest kernel whose headers are.
# KERNELRELEASE= picks one; unstable's kernel builds in its chroot
# (tests/vm/newest-kernel.sh, scripts/kbuild.sh).
HEADERS_KVERS := $(shell cd /lib/modules 2>/dev/null && \
	for k in *; do [ -d $$k/build ] && echo $$k; done | sort -V)
ifdef KDIR
KERNELRELEASE ?= $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
endif
ifneq ($(wildcard /lib/modules/$(shell uname -r)/build),)
KERNELRELEASE ?= $(shell uname -r)
else
KERNELRELEASE ?= $(lastword $(HEADERS_KVERS))
endif
KDIR ?= /lib/modules/$(KERNELRELEASE)/build
W ?= 1
PYTHON ?= /usr/bin/python3
# ruff, installed by make deps (tests/vm/deps.sh) with virtme-ng.
RUFF ?= $(or $(VAAI_VENV),/var/cache/vaai/venv)/bin/ruff
# The kernel's scsi/scsi_proto.h, which the host-side parser builds use too.
KSRC ?= $(firstword $(wildcard /lib/modules/$(KERNELRELEASE)/source) $(KDIR))

# One directory per kernel: build/module/KVER/target_core_vaai.ko.
MODDIR = build/module/$(KERNELRELEASE)
MODULE = $(MODDIR)/target_core_vaai.ko

all: module

KBUILD_FLAGS = W=$(W) $(if $(WERROR),KCFLAGS=-Werror)

module:
	scripts/kbuild.sh $(KERNELRELEASE) $(KDIR) $(KBUILD_FLAGS)

# The guest suites' test aids (tests/kmod): build/kmod/KVER/.
test-kmod:
	scripts/kbuild.sh --tree tests/kmod $(KERNELRELEASE) $(KDIR) $(KBUILD_FLAGS)

install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(MODDIR) modules_install
	depmod -a $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KERNELRELEASE)

clean:
	rm -rf build

include tests/parsers/parsers.mk
include tests/fuzz/fuzz.mk

help:
	@echo "make            build $(MODULE) against KDIR ($(KDIR))"
	@echo "make install    install the module for KERNELRELEASE ($(KERNELRELEASE))"
	@echo "make deps       install the Debian and PyPI packages the tests and demo need"
	@echo "make test       host tests, a 10 s fuzz pass, the guest suites (libiscsi's"
	@echo "                on the block store among them) in a VM on TEST_KERNEL"
	@echo "                (Debian 12's own; ocf-tester aside), the VAAI primitives"
	@echo "                on 6.12 and the other commands on 7.2 (make test-cross),"
	@echo "                two power cuts (make powercut), the rig's shared-disk"
	@echo "                pair (make test-rig), then the Debian packages"
	@echo "make test-host  host-side tests only (lint, pytest, then test-parsers)"
	@echo "make lint       ruff check and ruff format --check over the Python files"
	@echo "make test-upstream  the rtslib-fb patch in docs/upstream/ on its latest release"
	@echo "make test-parsers  the parsers' unit tests, with ASan and UBSan"
	@echo "make fuzz       each parser's libFuzzer target for FUZZ_SECONDS (60) s"
	@echo "make test-guest guest suites only (TESTS=... to pick pytest paths)"
	@echo "make test-libiscsi  libiscsi's iscsi-test-cu alone: both stores side by"
	@echo "                side (make test runs the block store's among the guest"
	@echo "                suites)"
	@echo "make test-ha    the two-node rig (tests/ha): three guests, a pair on a"
	@echo "                shared disk (over iSCSI and over FCoE) and on DRBD"
	@echo "                (dual- and single-primary), by hand and under"
	@echo "                Pacemaker, a planned switchover and a"
	@echo "                power cut under I/O and copies, under Pacemaker the"
	@echo "                fenced node's return; ocf-tester on the resource agent"
	@echo "                first, in a guest"
	@echo "make test-rig   the rig's HA_TESTS without installing the cluster's packages"
	@echo "make test-cross the VAAI primitives on 6.12, the other commands on 7.2"
	@echo "make test-kernels  every guest suite on each tested kernel (tests/vm/kernels.sh)"
	@echo "make modules-all   the module for each tested kernel"
	@echo "make test-kmod  the guest suites' test aid (tests/kmod) for KERNELRELEASE"
	@echo "make deb        the Debian packages vaai-dkms and vaai-tools -> build/deb/"
	@echo "make test-packages  install them in a Debian 12 root and a guest (root)"
	@echo "make test-debug guest suites on a KASAN/lockdep/kmemleak/UBSAN kernel,"
	@echo "                built once and cached (TESTS=... as for test-guest)"
	@echo "make report-libiscsi  libiscsi's suite on ours and on LIO's fileio and"
	@echo "                iblock in one boot of TEST_KERNEL; prints docs/testing.md's table"
	@echo "make demo       boot the VM and exercise a vaai LUN over tcm_loop and iSCSI"
	@echo "make bench      benchmarks against upstream LIO on BENCH_KERNEL (Debian 12's"
	@echo "                own), writes docs/benchmarks.md"
	@echo "make powercut   POWERCUT_CUTS (2) power cuts under load, each LUN checked"
	@echo "                after each"
	@echo "make replay     the dm-log-writes replay of REPLAY_COMMANDS (300) at every"
	@echo "                flush point"
	@echo "make test-powercut  POWERCUT_LONG (200) cuts shared among the kernels,"
	@echo "                and make replay; writes the counts into docs/testing.md"
	@echo "make serve      keep a VM serving a vaai LUN on the host's 127.0.0.1:3260"

deps:
	tests/vm/deps.sh

# The kernels the module is tested on (tests/vm/kernels.sh): Debian 12's
# 6.1 and 6.12, and unstable's newest.  `make test` runs every guest suite
# on TEST_KERNEL (Debian 12's own) and the cross-kernel ones on the others
# (test-cross, below).
KERNELS = $(shell tests/vm/kernels.sh)
TEST_KERNEL ?= $(firstword $(KERNELS))
CROSS_KERNELS = $(filter-out $(TEST_KERNEL),$(KERNELS))
# The cross kernels share out the primitives, over tcm_loop, on each
# module's stores: compat.h takes the same branches on 6.12 and 7.2 but
# for the rotation rate's (bdev_rot(), behind is_nonrot), which
# NONROT_TEST checks on both.  The first cross kernel (6.12: Debian 13's,
# and Debian 12's backports) runs the VAAI primitives, the others (7.2,
# the newest) reads and writes, GET LBA STATUS, WRITE USING TOKEN, WRITE
# ATOMIC, which only these kernels have (docs/kernels.md), and the
# pair's ALUA, whose relative port numbers differ from 6.4 on; not
# with 4096-byte blocks (block-size arithmetic is the same code on every
# kernel; nothing in compat.h depends on it), and not the tests of
# refused CDBs and lists (names with these words), which the parsers
# answer, the same code on every kernel, fuzzed on the host (a refusal
# the module or LIO decides at run time, a read-only LUN's, Standby's,
# stays).  make test-kernels runs every suite on every kernel.
space := $(subst ,, )
# pytest -k deselecting every test whose name has one of the words $(1)
deselect = -k "not $(subst $(space), and not ,$(1))"
PARSER_ONLY = is_refused are_refused refused_cdb bad_ wrong beyond past_the_end \
	out_of_range too_many shorter_than_its_header
CROSS_SKIP = fc iscsi 4096 $(PARSER_ONLY)
NONROT_TEST = tests/guest/test_vaaictl.py::test_create_applies_the_esxi_profile
CROSS_VAAI_TESTS = $(NONROT_TEST) tests/guest/test_compare_and_write.py \
	tests/guest/test_write_same.py tests/guest/test_unmap.py tests/guest/test_xcopy.py \
	$(call deselect,$(CROSS_SKIP))
CROSS_REST_TESTS = $(NONROT_TEST) tests/guest/test_read_write.py \
	tests/guest/test_lba_status.py tests/guest/test_odx_write_using_token.py \
	tests/guest/test_write_atomic.py tests/guest/test_pair.py tests/guest/test_alua_peer.py \
	$(call deselect,$(CROSS_SKIP))

# WERROR=1 down to every module build: a build with other flags than the
# last rebuilds the whole module (half a minute per kernel).  The guest
# fuzzer runs 10 s per store here (40 in make test-guest) and libiscsi's
# suite on the block store alone (both in make test-guest and make
# test-libiscsi), for the rig's shared-disk failover (about 4 minutes)
# within CI's hour; ocf-tester (over a minute of the agent's starts and
# stops, a vaaictl each) runs in make test-ha.
GUEST_CI_TESTS = tests/guest $(call deselect,test_ocf_tester_passes)
test: deps
	$(MAKE) WERROR=1 modules-all
	$(MAKE) test-host
	$(MAKE) test-upstream
	$(MAKE) fuzz FUZZ_SECONDS=10
	VAAI_FUZZ_SECONDS=10 VAAI_LIBISCSI_STORES=bdev \
		$(MAKE) WERROR=1 test-guest KERNELRELEASE=$(TEST_KERNEL) TESTS='$(GUEST_CI_TESTS)'
	$(MAKE) WERROR=1 test-cross
	$(MAKE) WERROR=1 powercut KERNELRELEASE=$(TEST_KERNEL)
	$(MAKE) WERROR=1 test-rig HA_TESTS='$(HA_CI_TESTS)' RIG_TIMEOUT=600
	$(MAKE) test-packages

modules-all:
	for k in $(KERNELS); do $(MAKE) module KERNELRELEASE=$$k || exit; done

test-host: lint
	$(PYTHON) -m pytest -q tests/host
	$(MAKE) test-parsers

# Every Python file of the tree, as python/pyproject.toml configures ruff.
lint:
	$(RUFF) check --config python/pyproject.toml .
	$(RUFF) format --check --config python/pyproject.toml .

test-upstream:
	docs/upstream/run-tests.sh -q

test-guest: module test-kmod
	tests/vm/run.py --kver $(KERNELRELEASE) --timeout 3600 \
		--log build/vm/test-console-$(KERNELRELEASE).log \
		-- tests/vm/guest-test.sh $(TESTS)

# libiscsi's iscsi-test-cu on both stores (tests/guest/test_libiscsi.py),
# alone; test-guest runs it among the other suites.
test-libiscsi: module test-kmod
	tests/vm/run.py --kver $(KERNELRELEASE) --timeout 1800 \
		--log build/vm/libiscsi-console-$(KERNELRELEASE).log \
		-- tests/vm/guest-test.sh tests/guest/test_libiscsi.py \
		--junitxml=build/vm/libiscsi-junit-$(KERNELRELEASE).xml

# The two-node rig (tests/ha/rig.py, docs/ha.md): node1, node2 and an
# initiator, one VM lock for the three, on HA_KERNEL (Debian 12's own);
# a boot of the rig for each test (each cuts a node's power), its
# consoles and JUnit XML in build/rig/TEST/.  test-ha installs the
# cluster's and DRBD's packages first; test-rig runs HA_TESTS with what
# is installed: make test runs the shared-disk test (HA_CI_TESTS), which
# needs nothing beyond tests/vm/deps.sh.
HA_KERNEL ?= $(TEST_KERNEL)
HA_TESTS = tests/ha/test_shared_disk.py tests/ha/test_fc.py tests/ha/test_drbd.py \
	tests/ha/test_pacemaker.py tests/ha/test_drbd_pacemaker.py \
	tests/ha/test_drbd_single_primary.py
HA_CI_TESTS = tests/ha/test_shared_disk.py
# seconds a test's rig may run before it is stopped (a hang fails, its
# consoles kept)
RIG_TIMEOUT ?= 2700
test-ha:
	tests/vm/deps.sh ha
	$(MAKE) test-guest KERNELRELEASE=$(HA_KERNEL) TESTS=tests/guest/test_ocf_pair.py
	$(MAKE) test-rig

test-rig:
	$(MAKE) module test-kmod KERNELRELEASE=$(HA_KERNEL)
	for t in $(HA_TESTS); do \
		n=$$(basename $$t .py); \
		tests/ha/rig.py --kver $(HA_KERNEL) --timeout $(RIG_TIMEOUT) --dir build/rig/$$n \
			-- $$t -s --junitxml=build/rig/$$n/junit.xml || exit; \
	done

test-cross:
	$(if $(CROSS_KERNELS),$(MAKE) test-guest KERNELRELEASE=$(firstword $(CROSS_KERNELS)) \
		TESTS='$(CROSS_VAAI_TESTS)')
	for k in $(wordlist 2,$(words $(CROSS_KERNELS)),$(CROSS_KERNELS)); do \
		$(MAKE) test-guest KERNELRELEASE=$$k TESTS='$(CROSS_REST_TESTS)' || exit; \
	done

test-kernels:
	for k in $(KERNELS); do $(MAKE) test-guest KERNELRELEASE=$$k || exit; done

# The Debian packages vaai-dkms and vaai-tools (docs/packaging.md).
deb:
	scripts/deb.sh

# apt install of `make deb`'s packages into a Debian 12 root, DKMS, a guest
# serving a LUN on that root, a kernel upgrade, apt remove and purge.
test-packages:
	$(PYTHON) -m pytest -q tests/packages

# The sanitizer kernel: built once into /var/cache/vaai/debug-kernel by
# tests/vm/debug-kernel.sh, which prints the tree (and installs only the
# packages the build needs; `make deps` the rest, as for test-guest).
# Software-emulated and instrumented, the guest runs five to nine times
# slower: more time, and memory for KASAN's shadow.
DEBUG_TIMEOUT ?= 21600

test-debug:
	kdir=$$(tests/vm/debug-kernel.sh) && \
	$(MAKE) module test-kmod KDIR=$$kdir && \
	VAAI_WATCH_COMPLETIONS=1 \
	tests/vm/run.py --kernel-dir $$kdir --mem 4G --timeout $(DEBUG_TIMEOUT) \
		--log build/vm/debug-console.log -- tests/vm/guest-test.sh $(TESTS)

# libiscsi beside LIO (tests/guest/report_libiscsi.py): not a test, a table.
report-libiscsi: deps
	$(MAKE) module test-kmod KERNELRELEASE=$(TEST_KERNEL)
	tests/vm/run.py --kver $(TEST_KERNEL) --timeout 3600 \
		--log build/vm/report-libiscsi-console.log \
		-- tests/vm/guest-test.sh tests/guest/report_libiscsi.py \
		--junitxml=build/vm/report-libiscsi-junit.xml
	scripts/libiscsi-table.py $(TEST_KERNEL)

demo: deps
	$(MAKE) module
	tests/vm/run.py --kver $(KERNELRELEASE) --log build/vm/demo-console.log \
		-- tests/vm/guest-demo.sh

# The benchmarks' command senders (bench/sgloop.c, bench/heartbeat.c), run
# inside the guest.
build/bench/sgloop: bench/sgloop.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -pthread -o $@ $<

build/bench/heartbeat: bench/heartbeat.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $<

# The guest's clock is the TSC: without these the guest kernel finds QEMU's
# TSCs unsynchronized and reads the emulated HPET, each read a trap to the
# emulator (docs/benchmarks.md).
# On the kernel docs/benchmarks.md's figures were measured on, as make test.
BENCH_KERNEL ?= $(TEST_KERNEL)

bench: build/bench/sgloop build/bench/heartbeat
	tests/vm/deps.sh bench
	$(MAKE) module KERNELRELEASE=$(BENCH_KERNEL)
	tests/vm/run.py --kver $(BENCH_KERNEL) --mem 12G \
		--append clocksource=tsc --append tsc=reliable \
		--log build/vm/bench-console.log --timeout 14400 -- bench/guest-bench.sh
	$(PYTHON) bench/report.py --data build/bench/results.json \
		--profile build/bench/profile.json \
		--durability build/bench/durability.json --metrics build/bench/metrics.json \
		--odxcheck build/bench/odxcheck.json --thin build/bench/thin.json \
		--caw build/bench/caw.json --ats build/bench/ats.json \
		--space build/bench/space.json \
		--clone build/bench/clone.json \
		docs/benchmarks.md

# The power-cut harness (tests/powercut, docs/testing.md): a guest serving
# six LUNs (each store, write cache off and on) to an initiator on the
# host, its QEMU killed under load POWERCUT_CUTS times, every LUN checked
# after each cut.  make test runs a few cuts; make test-powercut the long
# run, whose counts it writes into docs/testing.md.
build/powercut/iscsi_pipe: tests/powercut/iscsi_pipe.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -pthread -o $@ $< -liscsi

POWERCUT_CUTS ?= 2
POWERCUT_LONG ?= 200

powercut: module build/powercut/iscsi_pipe
	$(PYTHON) tests/powercut/powercut.py --kver $(KERNELRELEASE) \
		--cuts $(POWERCUT_CUTS) --summary build/powercut/summary-$(KERNELRELEASE).json

# The dm-log-writes replay (tests/powercut/replay.py) at length:
# REPLAY_COMMANDS of the workload on an XFS file store, checked at every
# flush and FUA point, write cache off and on (the guest suites' short
# run: tests/guest/test_log_replay.py).
REPLAY_COMMANDS ?= 300

replay: module
	VAAI_REPLAY_COMMANDS=$(REPLAY_COMMANDS) \
	tests/vm/run.py --kver $(KERNELRELEASE) --timeout 14400 \
		--log build/vm/replay-console-$(KERNELRELEASE).log \
		-- tests/powercut/guest-replay.sh

# The long cuts are shared out among the kernels, POWERCUT_LONG in all.
test-powercut: deps
	rm -f build/powercut/summary-*.json build/powercut/replay-*.json
	n=$(words $(KERNELS)); i=0; for k in $(KERNELS); do \
		c=$$(( $(POWERCUT_LONG) / n + (i < $(POWERCUT_LONG) % n) )); \
		i=$$((i + 1)); \
		$(MAKE) powercut KERNELRELEASE=$$k POWERCUT_CUTS=$$c || exit; \
	done
	$(MAKE) replay KERNELRELEASE=$(TEST_KERNEL)
	$(PYTHON) tests/powercut/report_counts.py docs/testing.md \
		--cuts build/powercut/summary-*.json --replays build/powercut/replay-*.json

serve: deps
	$(MAKE) module
	tests/vm/run.py --kver $(KERNELRELEASE) --serve --timeout 0 \
		--log build/vm/serve-console.log -- fabrics/iscsi/guest-serve.sh

.PHONY: all module test-kmod install clean help deps test test-host lint test-parsers test-guest \
	test-libiscsi test-ha test-rig \
	test-cross test-kernels modules-all deb test-packages test-upstream \
	test-debug report-libiscsi demo bench serve powercut replay test-powercut
