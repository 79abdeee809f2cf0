# Sourced inside the guest: what every guest job needs.
# Run from the repository root.

# The module built for the kernel the guest booted (make module).
export VAAI_MODULE=${VAAI_MODULE:-$PWD/build/module/$(uname -r)/target_core_vaai.ko}
export VAAI_SCRATCH=/run/vaai
export TARGETCLI_HOME=$VAAI_SCRATCH/targetcli
export PYTHONPATH=$PWD/python
export PYTHONDONTWRITEBYTECODE=1

vaai_guest_setup() {
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
	# rtslib-fb points LIO's dbroot (PR and ALUA state) here; /etc is an
	# overlay in the guest, so this changes nothing on the host.
	mkdir -p /etc/rtslib-fb-target/pr /etc/rtslib-fb-target/alua
	return 0
}
