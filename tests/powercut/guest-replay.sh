#!/bin/sh
# Inside a guest (make replay): the power-cut workload recorded under an
# XFS file store with dm-log-writes and replayed to its flush and FUA
# points (tests/powercut/replay.py), write cache off, then on.
# VAAI_REPLAY_COMMANDS: workload commands per run (default 300).
set -eu
modprobe dm-log-writes
modprobe dm-snapshot
for cache in no-write-cache write-cache; do
	/usr/bin/python3 tests/powercut/replay.py --$cache \
		--summary "build/powercut/replay-$(uname -r)-$cache.json" \
		--commands "${VAAI_REPLAY_COMMANDS:-300}"
done
