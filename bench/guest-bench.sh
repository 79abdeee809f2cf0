#!/bin/sh
# Inside the guest: the data-path benchmark and its profile, the file store's
# writes synced and not, what the I/O metrics and the ODX token check cost,
# thin provisioning, ATS (contention, and heartbeats beside streams), VM
# I/O beside UNMAP and WRITE SAME, and full copy.
set -e
/usr/bin/python3 bench/guest_bench.py build/bench/results.json "$@"
/usr/bin/python3 bench/guest_profile.py build/bench/profile.json
/usr/bin/python3 bench/guest_bench.py build/bench/durability.json --store file \
	--fabric loop --side ours --side ours-wb --side lio-aio --side lio --rounds 4 \
	--only 4k-randwrite-qd1 --only 4k-randwrite-qd32 --only 4k-randwrite-qd128 \
	--only 4k-randrw70-qd32 --only 8k-randrw90-qd32 --only 64k-seqwrite-qd8
/usr/bin/python3 bench/guest_bench.py build/bench/metrics.json --fabric loop \
	--side ours --side ours-nostats --rounds 4 --only 4k-randread-qd1 \
	--only 4k-randread-qd32 --only 4k-randwrite-qd32 --only 64k-seqread-qd8
/usr/bin/python3 bench/guest_bench.py build/bench/odxcheck.json --fabric loop \
	--side ours --side ours-tokens --rounds 4 --only 4k-randwrite-qd1 \
	--only 4k-randwrite-qd32 --only 4k-randrw70-qd32 --only 64k-seqwrite-qd8
/usr/bin/python3 bench/guest_thin.py build/bench/thin.json
/usr/bin/python3 bench/guest_caw.py build/bench/caw.json
/usr/bin/python3 bench/guest_ats.py build/bench/ats.json --fabric loop --fabric iscsi
/usr/bin/python3 bench/guest_space.py build/bench/space.json
/usr/bin/python3 bench/guest_clone.py build/bench/clone.json
