# Sourced inside the guest: what every guest job needs.
# Run from the repository root.

# The module built for the kernel the guest booted (make module).
export VAAI_MODULE=${VAAI_MODULE:-$PWD/build/module/$(uname -r)/target_core_vaai.ko}
export VAAI_SCRATCH=/run/vaai
export TARGETCLI_HOME=$VAAI_SCRATCH/targetcli
export PYTHONPATH=$PWD/python
export PYTHONDONTWRITEBYTECODE=1
# The rtslib hook as vaai-dkms installs it in dist-packages: here in a user
# site directory, which site.py reads for .pth files as it does dist-packages.
export PYTHONUSERBASE=$VAAI_SCRATCH/python-user

# udev rules for an initiator's disks that start programs on each SCSI
# disk's events: sg3-utils' sg_inq (three to five per disk) and
# multipath-tools' `multipath -u`.  The suites make about 1300 disks, and
# under TCG 16 disks took 20 s to settle with them, 3.6 s without.  No
# test reads what they add (by-id links, SCSI_IDENT_*), and the rig's
# initiator (tests/ha/multipath.py) runs multipathd itself.  The kernel's
# nompath cannot do it here: udev takes its command line from PID 1 when
# systemd-detect-virt sees a container, and the host's root (shared with
# the guest) is one.
vaai_guest_udev() {
	mkdir -p /etc/udev/rules.d || return 1
	for r in 55-scsi-sg3_id 58-scsi-sg3_symlink 60-multipath; do
		ln -sf /dev/null "/etc/udev/rules.d/$r.rules" || return 1
	done
	udevadm control --reload
}

# VAAI_NET="MAC=ADDR/LEN ...": the rig's links (tests/ha/rig.py, run.py
# --link), each NIC found by its MAC and given its address.
vaai_guest_net() {
	[ -n "${VAAI_NET:-}" ] || return 0
	modprobe virtio_net || return 1
	ip link set lo up || return 1
	for spec in $VAAI_NET; do
		mac=${spec%%=*}
		dev=
		tries=0
		while [ -z "$dev" ] && [ $tries -lt 100 ]; do
			for f in /sys/class/net/*/address; do
				[ "$(cat "$f")" = "$mac" ] && dev=${f%/address} && dev=${dev##*/}
			done
			[ -n "$dev" ] || { sleep 0.1; tries=$((tries + 1)); }
		done
		if [ -z "$dev" ]; then
			echo "guest: no NIC with MAC $mac" >&2
			return 1
		fi
		ip addr add "${spec#*=}" dev "$dev" && ip link set "$dev" up || return 1
	done
}

vaai_guest_setup() {
	vaai_guest_udev || return 1
	vaai_guest_net || return 1
	modprobe configfs || return 1
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || return 1
	for m in target_core_mod target_core_file target_core_iblock tcm_loop \
		 iscsi_target_mod sd_mod sg loop; do
		modprobe "$m" || { echo "guest: modprobe $m failed" >&2; return 1; }
	done
	# "installed": the module modprobe finds (the package tests' DKMS one).
	if [ "$VAAI_MODULE" = installed ]; then
		modprobe target_core_vaai || return 1
	else
		insmod "$VAAI_MODULE" || return 1
	fi
	mkdir -p "$VAAI_SCRATCH"
	mountpoint -q "$VAAI_SCRATCH" ||
		mount -t tmpfs -o size=75% tmpfs "$VAAI_SCRATCH" || return 1
	mkdir -p "$TARGETCLI_HOME"
	# "installed": the package's hook, in dist-packages.
	[ "$VAAI_MODULE" = installed ] || vaai_guest_rtslib_hook || return 1
	# rtslib-fb points LIO's dbroot (PR and ALUA state) here; /etc is an
	# overlay in the guest, so this changes nothing on the host.
	mkdir -p /etc/rtslib-fb-target/pr /etc/rtslib-fb-target/alua
	return 0
}

vaai_guest_rtslib_hook() {
	local site
	site=$(/usr/bin/python3 -c 'import site; print(site.getusersitepackages())') ||
		return 1
	mkdir -p "$site" &&
		cp dist/vaai-rtslib.pth python/vaai_rtslib_hook.py "$site/"
}
