#!/bin/sh
# First thing run inside the guest: set up LIO and our module, run the job,
# and leave its exit status where run.py looks for it.
# Usage: guest-init.sh REPO RC_FILE COMMAND [ARGS...]
REPO=$1
RC_FILE=$2
shift 2
# run.py boots once more a guest that died before this line
echo "guest-init: up"
cd "$REPO" || exit 1
. tests/vm/guest-env.sh

# A kernel with kmemleak (make test-debug): one scan once the job is done.
# The kernel logs "kmemleak: N new suspected memory leaks" and the report,
# one "unreferenced object" with its allocation stack per leak, goes to the
# console; run.py fails the run on either.  VAAI_KMEMLEAK=1 (run.py sets it
# for such a kernel) makes a scan that cannot run a failure.
kmemleak_scan() {
	f=/sys/kernel/debug/kmemleak
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	if [ ! -e $f ]; then
		[ "${VAAI_KMEMLEAK:-0}" = 0 ] && return 0
		echo "guest-init: kmemleak: no $f" >&2
		return 1
	fi
	# Objects younger than 5 s are not reported yet.
	sleep 5
	if ! echo scan > $f; then
		echo "guest-init: kmemleak: the scan failed (kmemleak off?)" >&2
		return 1
	fi
	report=$(cat $f) || return 1
	[ -z "$report" ] || printf '%s\n' "$report"
	echo "guest-init: kmemleak: $(printf '%s\n' "$report" |
		grep -c '^unreferenced object') suspected leaks"
}

if vaai_guest_setup; then
	"$@"
	rc=$?
else
	echo "guest-init: setup failed" >&2
	rc=99
fi
kmemleak_scan || [ "$rc" != 0 ] || rc=98
dmesg > "${RC_FILE%.rc}-dmesg.log" 2>/dev/null
sync
echo "$rc" > "$RC_FILE"
exit "$rc"
