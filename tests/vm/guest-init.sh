#!/bin/sh
# First thing run inside the guest: set up LIO and our module, run the job,
# and leave its exit status where run.py looks for it.
# Usage: guest-init.sh REPO RC_FILE COMMAND [ARGS...]
REPO=$1
RC_FILE=$2
shift 2
cd "$REPO" || exit 1
. tests/vm/guest-env.sh
if vaai_guest_setup; then
	"$@"
	rc=$?
else
	echo "guest-init: setup failed" >&2
	rc=99
fi
dmesg > "$(dirname "$RC_FILE")/guest-dmesg.log" 2>/dev/null
sync
echo "$rc" > "$RC_FILE"
exit "$rc"
