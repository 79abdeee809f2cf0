#!/bin/sh
# Install what the build, the VM harness, the tests and the demo need on a
# Debian 12 host: the three kernels the module is tested on (Debian 12's
# 6.1 and 6.12, and unstable's newest through tests/vm/newest-kernel.sh),
# clang-14 and its runtimes (libFuzzer and the sanitizers for tests/fuzz),
# libiscsi-bin for libiscsi's conformance suite (iscsi-test-cu),
# libiscsi-dev for the power-cut harness's initiator (tests/powercut),
# dosfstools for a file system that cannot punch holes,
# prometheus_client for vaaictl's exporter (yaml: its alert rules, checked;
# promtool, unpacked from the prometheus package, checks its output),
# resource-agents and libxml2-utils for ocf-tester (the pair's Pacemaker
# agent, ha/ocf/pair), multipath-tools for the two-node rig's initiator
# (its multipathd service claims no disk with Debian's default
# find_multipaths "strict" and no wwids listed).
# `deps.sh bench` adds what only make bench uses: matplotlib for the
# plots, linux-perf for the profile (the test run goes without them).
# `deps.sh ha` adds what only make test-ha uses: drbd-utils, corosync and
# pacemaker (the replication and the cluster it runs on the rig's nodes).
# Idempotent: a second run installs nothing.
set -eu

PKGS="build-essential linux-image-amd64 linux-headers-amd64
      linux-image-6.12-amd64 linux-headers-6.12-amd64 debootstrap qemu-system-x86
      busybox-static kmod udev python3 python3-venv python3-pip python3-pytest
      python3-rtslib-fb targetcli-fb sg3-utils ddpt open-iscsi fio xfsprogs
      btrfs-progs fcoe-utils iproute2 dmsetup e2fsprogs clang-14
      libclang-rt-14-dev patch libiscsi-bin libiscsi-dev dosfstools
      python3-prometheus-client python3-yaml resource-agents libxml2-utils
      multipath-tools"
[ "${1:-}" = bench ] && PKGS="$PKGS python3-matplotlib linux-perf"
VENV=${VAAI_VENV:-/var/cache/vaai/venv}
VNG_VERSION=1.42
RUFF_VERSION=0.17.6

. "$(dirname "$0")/debian-pkgs.sh"
# shellcheck disable=SC2086
install_missing $PKGS
if [ "${1:-}" = ha ]; then
	fresh=""
	for p in corosync pacemaker; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || fresh="$fresh $p"
	done
	install_missing corosync pacemaker pacemaker-cli-utils drbd-utils
	# the rig's guests run their own cluster: none on the host, which
	# Debian's packages start where systemd runs (once, as installed
	# here: a service the host had before is its admin's)
	if [ -n "$fresh" ] && [ -d /run/systemd/system ]; then
		# shellcheck disable=SC2086
		systemctl disable --now $fresh 2>/dev/null || :
	fi
fi

# The newest Debian kernel: headers in a chroot of unstable, image and
# modules unpacked for the guest.
"$(dirname "$0")/newest-kernel.sh" >/dev/null

# virtme-ng boots the stock Debian kernel with the host's root filesystem.
# It lives in a venv on Debian's own python3, which also sees rtslib-fb.
if ! "$VENV/bin/vng" --version 2>/dev/null | grep -q "$VNG_VERSION"; then
	echo "deps: installing virtme-ng $VNG_VERSION into $VENV"
	/usr/bin/python3 -m venv --system-site-packages "$VENV"
	"$VENV/bin/pip" install -q "virtme-ng==$VNG_VERSION"
fi

# ruff, which make lint runs (python/pyproject.toml), in the same venv.
if ! "$VENV/bin/ruff" --version 2>/dev/null | grep -qx "ruff $RUFF_VERSION"; then
	echo "deps: installing ruff $RUFF_VERSION into $VENV"
	"$VENV/bin/pip" install -q "ruff==$RUFF_VERSION"
fi

# vaaictl and targetcli-vaai: the python/ package, installed editable (it
# runs this tree's code) into its own venv, which also sees Debian's
# rtslib-fb and targetcli-fb; the two commands are linked into /usr/local/bin.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS=${VAAI_TOOLS_VENV:-/opt/vaai/venv}
if [ "$("$TOOLS/bin/python" -c 'import vaai, os; print(os.path.dirname(vaai.__file__))' 2>/dev/null)" \
		!= "$REPO/python/vaai" ] || [ ! -x /usr/local/bin/vaaictl ]; then
	echo "deps: installing vaaictl from $REPO/python into $TOOLS"
	[ -x "$TOOLS/bin/pip" ] || /usr/bin/python3 -m venv --system-site-packages "$TOOLS"
	"$TOOLS/bin/pip" install -q --no-deps -e "$REPO/python"
	ln -sf "$TOOLS/bin/vaaictl" /usr/local/bin/vaaictl
	ln -sf "$TOOLS/bin/targetcli-vaai" /usr/local/bin/targetcli-vaai
fi

# promtool, Prometheus' own check of an exposition and of alert rules (the
# exporter's tests run it, in the guest too), from Debian's prometheus package into
# /opt/vaai/bin (the guest does not see /var/cache): installing the package
# would start a Prometheus server.
PROMTOOL=${VAAI_PROMTOOL:-/opt/vaai/bin/promtool}
if ! [ -x "$PROMTOOL" ]; then
	echo "deps: unpacking promtool from Debian's prometheus package"
	tmp=$(mktemp -d)
	(cd "$tmp" && { apt-get download -q prometheus >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && apt-get download -q prometheus >/dev/null; }; } &&
		dpkg-deb --fsys-tarfile prometheus_*.deb | tar -x ./usr/bin/promtool)
	mkdir -p "$(dirname "$PROMTOOL")"
	mv "$tmp/usr/bin/promtool" "$PROMTOOL"
	rm -rf "$tmp"
fi
