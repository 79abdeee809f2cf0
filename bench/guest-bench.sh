#!/bin/sh
# Inside the guest: the data-path benchmark and its profile, thin provisioning,
# ATS and full copy.
set -e
/usr/bin/python3 bench/guest_bench.py build/bench/results.json "$@"
/usr/bin/python3 bench/guest_profile.py build/bench/profile.json
/usr/bin/python3 bench/guest_thin.py build/bench/thin.json
/usr/bin/python3 bench/guest_caw.py build/bench/caw.json
/usr/bin/python3 bench/guest_clone.py build/bench/clone.json --budget 4000
