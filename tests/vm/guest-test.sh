#!/bin/sh
# Inside the guest: the conformance suites (default: all of tests/guest but
# the libiscsi runs only `make test-libiscsi` makes).
# Usage: guest-test.sh [PYTEST_ARGS...]
[ $# -gt 0 ] || set -- tests/guest -m "not libiscsi_full"
exec /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfEs \
	--junitxml="build/vm/guest-junit-$(uname -r).xml" "$@"
