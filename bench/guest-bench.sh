#!/bin/sh
# Inside the guest: the data-path, thin-provisioning and ATS benchmarks.
set -e
/usr/bin/python3 bench/guest_bench.py build/bench/results.json "$@"
/usr/bin/python3 bench/guest_thin.py build/bench/thin.json
/usr/bin/python3 bench/guest_caw.py build/bench/caw.json
