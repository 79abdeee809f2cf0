"""`vaaictl adopt`: an LIO fileio or block backstore, exported over iSCSI to
a logged-in initiator that writes to it all along, becomes a vaai backstore
on the same store.  The initiator's disk (the same SCSI device) returns no
error to the writer, holds every byte written before, during and after the
move, and shows the same identity (INQUIRY, VPD pages 0x80 and 0x83,
capacity) on the same LUN numbers, mappings and ALUA group, now with thin
provisioning.  A move that fails puts everything back; a refused one
changes nothing."""

import mmap
import os
import re
import struct
import threading

import pytest
from conftest import INITIATOR, SCRATCH, MiB, sh
from ctl import refused, vaaictl
from rtslib_fb import (
    LUN,
    TPG,
    ALUATargetPortGroup,
    BlockStorageObject,
    FabricModule,
    FileIOStorageObject,
    MappedLUN,
    NetworkPortal,
    NodeACL,
    RDMCPStorageObject,
    RTSRoot,
    Target,
)
from rtslib_fb.tcm import bs_cache
from scsi import clear_unit_attention, expect_good, read_capacity16, sg_io
from vaai import VaaiStorageObject, adopt
from vaai.export import export_loopback, find_disk, sg_of

IQN = "iqn.2026-11.org.vaai:adopt"
OTHER = "iqn.2026-11.org.vaai:adopt-other-host"
SIZE = 64 * MiB
CHUNK = 64 * 1024
REGION = 16 * MiB  # what the writer cycles through


def running():
    bs_cache.clear()
    return RTSRoot().dump()


@pytest.fixture
def lio_store(request):
    """(kind, path): a file, or a loop device over one; removed after."""
    image = os.path.join(SCRATCH, "adopt.img")
    with open(image, "wb") as f:
        f.truncate(SIZE)
    loop = None
    if request.param == "block":
        loop = sh("losetup", "--find", "--show", image).strip()
    yield request.param, loop or image
    for so in RTSRoot().storage_objects:
        if so.name == "ds":
            for lun in so.attached_luns:
                lun.parent_tpg.parent_target.delete()
            so.delete()
    if loop:
        sh("losetup", "-d", loop)
    os.unlink(image)


def lio_backstore(kind, path):
    """The LIO backstore "ds" on path, with a vendor of its own (what
    LIO keeps beside the unit serial, carried over too)."""
    if kind == "fileio":
        so = FileIOStorageObject("ds", path, SIZE, write_back=True)
    else:
        so = BlockStorageObject("ds", path)
    with open(os.path.join(so.path, "wwn", "vendor_id"), "w") as f:
        f.write("ACME\n")
    return so


def export(so, me):
    """so over iSCSI as TPG LUN 2: mapped as LUN 5 to this machine, as a
    read-only LUN 7 to another host; in an ALUA group of its own, the
    default group set apart from LIO's defaults too."""
    group = ALUATargetPortGroup(so, "ds_ao", 17)
    ALUATargetPortGroup(so, "default_tg_pt_gp").nonop_delay_msecs = 250
    tpg = TPG(Target(FabricModule("iscsi"), IQN), 1)
    NetworkPortal(tpg, "127.0.0.1", 3260)
    lun = LUN(tpg, 2, storage_object=so)
    lun.alua_tg_pt_gp_name = group.name
    MappedLUN(NodeACL(tpg, me), 5, lun)
    MappedLUN(NodeACL(tpg, OTHER), 7, lun, write_protect=True)
    tpg.set_attribute("authentication", 0)
    tpg.enable = True
    return tpg


def identity(sg):
    """What a host tells the device by: standard INQUIRY's vendor, product
    and revision, VPD 0x80 and 0x83 whole, READ CAPACITY(16)'s first 12
    bytes (last LBA, block length); and its caching mode page with the
    header's DPOFUA and WP bits (the write cache it has)."""

    def inq(evpd, page):
        cdb = struct.pack(">BBBHB", 0x12, evpd, page, 255, 0)
        return bytes(expect_good(sg_io(sg, cdb, data_in_len=255)).data)

    return (
        inq(0, 0)[8:36],
        inq(1, 0x80),
        inq(1, 0x83),
        bytes(expect_good(read_capacity16(sg)).data[:12]),
        bytes(expect_good(sg_io(sg, bytes([0x1A, 0, 0x08, 0, 255, 0]), data_in_len=255)).data),
    )


def thin(sg):
    """LBPU of the Logical Block Provisioning VPD page (0xB2)."""
    res = sg_io(sg, struct.pack(">BBBHB", 0x12, 1, 0xB2, 64, 0), data_in_len=64)
    return res.status == 0 and bool(res.data[5] & 0x80)


class Writer(threading.Thread):
    """Writes CHUNK-sized stamped blocks round REGION through the disk with
    O_DIRECT (as a VM's disk would), reading each back, until stopped;
    what each chunk should hold in self.want, the first error in self.error."""

    def __init__(self, disk):
        super().__init__(daemon=True)
        self.disk, self.want, self.error = disk, {}, None
        self.done = 0
        self.stop = threading.Event()

    def run(self):
        buf = mmap.mmap(-1, CHUNK)
        fd = os.open(self.disk, os.O_RDWR | os.O_DIRECT)
        try:
            while not self.stop.is_set():
                i = self.done % (REGION // CHUNK)
                data = struct.pack(">QQ", i, self.done) * (CHUNK // 16)
                buf[:] = data
                if os.pwritev(fd, [buf], i * CHUNK) != CHUNK:
                    raise OSError(f"short write at chunk {i}")
                self.want[i] = data
                if os.preadv(fd, [buf], i * CHUNK) != CHUNK or buf[:] != data:
                    raise AssertionError(f"chunk {i} read back other data")
                self.done += 1
        except Exception as e:  # handed to the test
            self.error = e
        finally:
            os.close(fd)

    def until(self, n, timeout=300):
        """Wait until n more writes completed (or the writer failed)."""
        goal = self.done + n
        for _ in range(timeout * 10):
            if self.done >= goal or self.error or not self.is_alive():
                break
            self.stop.wait(0.1)
        assert self.error is None, self.error
        assert self.done >= goal, f"the writer stalled at {self.done} writes"


def read_back(disk, want):
    fd = os.open(disk, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, CHUNK)
    try:
        for i, data in want.items():
            assert os.preadv(fd, [buf], i * CHUNK) == CHUNK
            assert buf[:] == data, f"chunk {i} lost what was written"
    finally:
        os.close(fd)


@pytest.mark.parametrize("lio_store", ["fileio", "block"], indirect=True)
def test_adopt_under_live_io_keeps_device_data_and_mappings(lio_store):
    kind, path = lio_store
    sh(INITIATOR, "start")
    me = sh(INITIATOR, "name").strip()
    old = lio_backstore(kind, path)
    export(old, me)
    before = running()
    sh(INITIATOR, "login", IQN)
    try:
        disk = find_disk(old, "iscsi_tcp", target=IQN)
        device = os.path.realpath(f"/sys/block/{os.path.basename(disk)}/device")
        sg = sg_of(disk)
        clear_unit_attention(sg)
        was = identity(sg)
        assert not thin(sg)
        writer = Writer(disk)
        writer.start()
        writer.until(20)

        _, out, _ = vaaictl("adopt", "ds")

        writer.until(20)
        writer.stop.set()
        writer.join()
        assert writer.error is None, writer.error
        assert f"adopt {kind}/ds as vaai/ds on {path}" in out
        assert f"pausing iscsi {IQN} TPG 1" in out and f"resuming iscsi {IQN} TPG 1" in out
        assert "adopted: vaai/ds serves" in out
        assert os.path.realpath(f"/sys/block/{os.path.basename(disk)}/device") == device
        read_back(disk, writer.want)
        clear_unit_attention(sg)  # REPORTED LUNS DATA HAS CHANGED, if not taken yet
        assert identity(sg) == was
        assert thin(sg)
    finally:
        sh(INITIATOR, "logout", IQN)

    after = running()
    [so] = [so for so in after["storage_objects"] if so["name"] == "ds"]
    assert so["plugin"] == "vaai"
    assert so["alua_tpgs"] == next(
        s["alua_tpgs"] for s in before["storage_objects"] if s["name"] == "ds"
    )
    renamed = str(before["targets"]).replace(f"/backstores/{kind}/ds", "/backstores/vaai/ds")
    assert str(after["targets"]) == renamed


@pytest.mark.parametrize("lio_store", ["fileio"], indirect=True)
def test_dry_run_prints_the_plan_and_changes_nothing(lio_store):
    kind, path = lio_store
    old = lio_backstore(kind, path)
    export(old, sh(INITIATOR, "name").strip())
    before = running()
    _, out, _ = vaaictl("adopt", "--dry-run", "fileio/ds")
    assert running() == before
    assert out.splitlines()[0] == (
        f"adopt fileio/ds as vaai/ds on {path} ({SIZE} bytes, 512-byte blocks)"
    )
    assert re.search(rf"identity: unit serial '{re.escape(old.wwn)}' \(NAA 6[0-9a-f]{{31}}\)", out)
    assert f"pause iscsi {IQN} TPG 1" in out
    assert "ALUA group ds_ao (id 17)" in out
    assert f"mapped to {OTHER} as LUN 7, read-only" in out


@pytest.mark.parametrize("lio_store", ["fileio"], indirect=True)
def test_a_failed_move_puts_everything_back(lio_store, monkeypatch):
    """The vaai backstore made and its LUN, then a step fails: the fileio
    backstore, its vendor, ALUA groups, LUN and mappings are as they were,
    the TPG enabled."""
    kind, path = lio_store
    old = lio_backstore(kind, path)
    tpg = export(old, sh(INITIATOR, "name").strip())
    before = running()

    luns = adopt.luns

    def broken(so, entries, err):
        if so.plugin != "vaai":
            return luns(so, entries, err)
        luns(so, entries, err)  # made, and then
        return err("injected")

    monkeypatch.setattr(adopt, "luns", broken)
    rc, out, err = vaaictl("adopt", "ds", check=False)
    assert (rc, err) == (
        1,
        "vaaictl: error: adopting fileio/ds failed, put back as it was: injected\n",
    )
    assert f"pausing iscsi {IQN} TPG 1" in out and f"resuming iscsi {IQN} TPG 1" in out
    assert running() == before
    assert tpg.enable
    with open(os.path.join(FileIOStorageObject("ds").path, "wwn", "vendor_id")) as f:
        assert f.read().strip() == "ACME"


@pytest.mark.parametrize("lio_store", ["fileio"], indirect=True)
def test_tcm_loop_needs_offline(lio_store):
    """tcm_loop has no TPG to disable: refused unless --offline, which then
    moves it with the data the old backstore wrote."""
    kind, path = lio_store
    old = lio_backstore(kind, path)
    export_loopback(old)
    sg = sg_of(find_disk(old, "tcm_loopback"))
    clear_unit_attention(sg)
    data = os.urandom(4096)
    expect_good(sg_io(sg, struct.pack(">BBQIBB", 0x8A, 0, 16, 8, 0, 0), data_out=data))
    before = running()
    refused(["adopt", "ds"], "whose sessions cannot be paused: stop the I/O to it and adopt")
    assert running() == before

    vaaictl("adopt", "--offline", "ds")
    sg = sg_of(find_disk(VaaiStorageObject("ds"), "tcm_loopback"))
    clear_unit_attention(sg)
    res = expect_good(sg_io(sg, struct.pack(">BBQIBB", 0x88, 0, 16, 8, 0, 0), data_in_len=4096))
    assert bytes(res.data) == data


@pytest.mark.parametrize("lio_store", ["fileio"], indirect=True)
def test_refusals_change_nothing(lio_store):
    _, path = lio_store
    FileIOStorageObject("ds", path, SIZE // 2)
    ram = RDMCPStorageObject("adopt_ram", 1 * MiB)
    try:
        before = running()
        refused(["adopt", "adopt_ram"], "only fileio and block backstores can be adopted")
        refused(["adopt", "ds"], f"serves {SIZE // 2} bytes of {path}, which holds {SIZE}")
        refused(["adopt", "nothing"], "no backstore 'nothing' to adopt")
        assert running() == before
    finally:
        ram.delete()


@pytest.mark.parametrize("lio_store", ["fileio"], indirect=True)
def test_reservations_off_are_no_reservation(lio_store):
    """emulate_pr=0: LIO shows no registrations, its holder file says
    SPC_RESERVATIONS_DISABLED; that is nothing to lose, and it is carried."""
    kind, path = lio_store
    old = lio_backstore(kind, path)
    old.set_attribute("emulate_pr", 0)
    export_loopback(old)
    vaaictl("adopt", "--offline", "ds")
    assert VaaiStorageObject("ds").get_attribute("emulate_pr") == "0"


@pytest.mark.parametrize("lio_store", ["fileio"], indirect=True)
def test_registered_reservation_keys_are_refused(lio_store):
    """A host's PERSISTENT RESERVE OUT registration lives in the old device:
    refused until it is gone, then adopted."""
    kind, path = lio_store
    old = lio_backstore(kind, path)
    export_loopback(old)
    sg = sg_of(find_disk(old, "tcm_loopback"))
    clear_unit_attention(sg)
    serial = old.wwn
    sh("sg_persist", "--out", "--register", "--param-sark=0x1234", sg)
    before = running()
    refused(["adopt", "--offline", "ds"], "persistent reservation keys are registered")
    assert running() == before
    sh("sg_persist", "--out", "--register", "--param-rk=0x1234", "--param-sark=0", sg)
    vaaictl("adopt", "--offline", "ds")
    assert VaaiStorageObject("ds").wwn == serial
