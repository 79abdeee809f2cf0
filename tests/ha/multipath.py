"""dm-multipath over a pair's two paths, for the rig's tests that switch
or kill a node under it (tests/ha/failover.py): multipathd set up for one
device, and which path multipath sends I/O down."""

import contextlib
import os
import re
import subprocess
import time

# the pair's device alone (the initiator's other disks are not multipath's)
CONF = """defaults {
	user_friendly_names no
	find_multipaths no
	polling_interval 1
}
blacklist {
	wwid ".*"
}
blacklist_exceptions {
	wwid "%s"
}
devices {
	device {
		vendor ".*"
		product ".*"
		path_grouping_policy group_by_prio
		prio alua
		hardware_handler "1 alua"
		path_checker tur
		failback immediate
		no_path_retry queue
	}
}
"""


def sh(*argv):
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    if p.returncode:
        raise AssertionError(f"{' '.join(argv)} failed ({p.returncode}): {p.stdout}{p.stderr}")
    return p.stdout


def show(wwid):
    """multipath -ll of the device."""
    return subprocess.run(
        ["multipath", "-ll", wwid], capture_output=True, text=True, check=False
    ).stdout


def paths():
    """What multipathd holds of each path (for a failure's message)."""
    p = subprocess.run(
        ["multipathd", "show", "paths"], capture_output=True, text=True, check=False, timeout=30
    )
    return p.stdout + p.stderr


def mapped(wwid, timeout=60):
    """/dev/mapper/WWID, once multipathd has made it with two paths."""
    dev = f"/dev/mapper/{wwid}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = show(wwid)
        if os.path.exists(dev) and out.count("active ready") + out.count("ghost") >= 2:
            return dev, out
        time.sleep(1)
    raise AssertionError(f"no multipath device {wwid} with two paths: {out}")


@contextlib.contextmanager
def multipathd(wwid, log=None):
    """multipathd running for the device wwid alone (its messages, at
    verbosity 3, to log if given): (its /dev/mapper path, multipath -ll as
    it was made)."""
    sh("modprobe", "dm-multipath")
    sh("modprobe", "scsi_dh_alua")
    with open("/etc/multipath.conf", "w") as f:
        f.write(CONF % wwid)
    out = open(log, "w") if log else subprocess.DEVNULL
    daemon = subprocess.Popen(
        ["multipathd", "-d", "-s", *(["-v3"] if log else [])], stdout=out, stderr=out
    )
    try:
        time.sleep(2)
        sh("multipath", "-r")
        yield mapped(wwid)
    finally:
        # queued I/O failed, not held for ever, before the map goes (a
        # writer stuck in it would keep the map, and this process, alive)
        subprocess.run(["multipathd", "disablequeueing", "maps"], capture_output=True, check=False)
        subprocess.run(["multipath", "-F"], capture_output=True, check=False)
        daemon.terminate()
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        if log:
            out.close()
        # the guest as it was: no configuration (Debian's default claims
        # only what the wwids file names), and a wwids file naming no
        # device
        with contextlib.suppress(FileNotFoundError):
            os.unlink("/etc/multipath.conf")
        subprocess.run(["multipath", "-W"], capture_output=True, check=False)


def active_disk(shown):
    """The sdX multipath sends I/O down, and its line in multipath -ll: a
    path active and ready in the path group at Active/Optimized's
    priority (the ALUA prioritizer's 50; Standby's is 1) that is the
    active one, or, before any I/O has picked one, the first such.  A
    dead path keeps the priority it last had: the path's state counts."""
    found, group = [], ""
    for line in shown.splitlines():
        if "policy=" in line:
            group = line
        elif "prio=50" in group:
            m = re.search(r"\b(sd[a-z]+)\b.*\bactive ready\b", line)
            if m:
                found.append(("status=active" in group, m.group(1), line))
    if not found:
        raise AssertionError(f"no active path group at Active/Optimized's priority:\n{shown}")
    _, disk, line = max(found, key=lambda f: f[0])
    return disk, line
