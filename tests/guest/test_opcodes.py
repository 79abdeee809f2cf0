"""REPORT SUPPORTED OPERATION CODES (SPC-4 6.35): what a host reads to learn
which commands a vaai LUN offloads, and a sweep that every opcode and service
action is refused as unsupported exactly when the report leaves it out."""

import struct

import pytest
from conftest import sh
from rsoc import NOT_SUPPORTED, SUPPORTED, report_all, report_one, rsoc
from scsi import CHECK_CONDITION, ILLEGAL_REQUEST, UNIT_ATTENTION, expect_good, expect_sense, sg_io
from sense_codes import INVALID_COMMAND_OPERATION_CODE, INVALID_FIELD_IN_CDB

# Everything a LUN with default attributes accepts: {(opcode, sa): cdb length}
# (sa None: the opcode has no service actions).
VAAI = {
    (0x89, None): 16,
    (0x41, None): 10,
    (0x93, None): 16,
    (0x42, None): 10,
    (0x83, 0x00): 16,
    (0x84, 0x00): 16,
    (0x84, 0x03): 16,
    (0x84, 0x04): 16,
    (0x83, 0x10): 16,
    (0x83, 0x11): 16,
    (0x84, 0x07): 16,  # ODX
    (0x9E, 0x12): 16,
    (0xA3, 0x0C): 12,
}
EXPECTED = dict(VAAI)
EXPECTED.update(
    {
        (op, None): 6
        for op in (0x00, 0x01, 0x03, 0x08, 0x0A, 0x0B, 0x12, 0x15, 0x16, 0x17, 0x1A, 0x1B)
    }
)
EXPECTED.update(
    {
        (op, None): 10
        for op in (0x25, 0x28, 0x2A, 0x2B, 0x2E, 0x2F, 0x34, 0x35, 0x55, 0x56, 0x57, 0x5A)
    }
)
EXPECTED.update({(op, None): 12 for op in (0xA0, 0xA8, 0xAA, 0xAE, 0xAF)})
EXPECTED.update({(op, None): 16 for op in (0x88, 0x8A, 0x8B, 0x8E, 0x8F, 0x90, 0x91)})
EXPECTED.update({(0x5E, sa): 10 for sa in range(4)})  # PERSISTENT RESERVE IN
EXPECTED.update({(0x5F, sa): 10 for sa in range(8)})  # PERSISTENT RESERVE OUT
EXPECTED.update({(0x9E, 0x10): 16, (0xA3, 0x0A): 12, (0xA4, 0x0A): 12})

# What an attribute set to 0 takes out of the report.
ATTRIBUTE_COMMANDS = {
    "emulate_caw": {(0x89, None)},
    "emulate_tpu": {(0x42, None)},
    "emulate_3pc": {
        (0x83, 0x00),
        (0x84, 0x00),
        (0x84, 0x03),
        (0x84, 0x04),
        (0x83, 0x10),
        (0x83, 0x11),
        (0x84, 0x07),
    },
    "emulate_pr": {(0x16, None), (0x17, None), (0x56, None), (0x57, None)}
    | {(0x5E, sa) for sa in range(4)}
    | {(0x5F, sa) for sa in range(8)},
}


def field_pointer(sense):
    """(C/D, byte, bit or None) of a sense-key specific field pointer, or None."""
    if not sense.sks:
        return None
    bit = sense.sks[0] & 0x07 if sense.sks[0] & 0x08 else None
    return bool(sense.sks[0] & 0x40), struct.unpack(">H", sense.sks[1:3])[0], bit


def expect_invalid_cdb_field(res, byte, bit):
    s = expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
    assert field_pointer(s) == (True, byte, bit), f"field pointer: {res}"


# --- the report ---------------------------------------------------------------


def test_all_commands_lists_what_the_lun_accepts(lun):
    got = {k: v[0] for k, v in report_all(lun.sg).items()}
    assert {k: got.get(k) for k in VAAI} == VAAI
    assert got == EXPECTED


def test_sg_opcodes_names_the_vaai_commands(lun):
    out = sh("sg_opcodes", lun.sg)
    for name in (
        "Compare and write",
        "Write same(16)",
        "Unmap",
        "Extended copy(LID1)",
        "Receive copy operating parameters",
        "Get LBA status",
        "Populate token",
        "Write using token",
        "Receive ROD token information",
    ):
        assert name.lower() in out.lower(), name


@pytest.mark.parametrize(
    "opcode, usage",
    [
        # LBA; NUMBER OF LOGICAL BLOCKS (DPO and FUA only with the write cache on)
        (0x89, "89 00 ffffffffffffffff 000000 ff 0000"),
        # UNMAP, NDOB; LBA; NUMBER OF LOGICAL BLOCKS
        (0x93, "93 09 ffffffffffffffff ffffffff 0000"),
        (0x41, "41 08 ffffffff 00 ffff 00"),
        # PARAMETER LIST LENGTH; ANCHOR refused
        (0x42, "42 00 00000000 00 ffff 00"),
        # RDPROTECT; LBA; TRANSFER LENGTH (DPO and FUA: test_dpofua.py)
        (0x88, "88 e0 ffffffffffffffff ffffffff 0000"),
    ],
)
def test_one_command_usage(lun, opcode, usage):
    support, got, _ = report_one(lun.sg, 1, opcode)
    assert support == SUPPORTED
    assert got == bytes.fromhex(usage)


@pytest.mark.parametrize(
    "opcode, sa, usage",
    [
        (0x83, 0x00, "83 00 0000000000000000 ffffffff 0000"),
        (0x84, 0x03, "84 03 0000000000000000 ffffffff 0000"),
        (0x84, 0x00, "84 00 ff 00000000000000 ffffffff 0000"),
        # LIST IDENTIFIER; PARAMETER LIST LENGTH (ALLOCATION LENGTH)
        (0x83, 0x10, "83 10 00000000 ffffffff ffffffff 0000"),
        (0x83, 0x11, "83 11 00000000 ffffffff ffffffff 0000"),
        (0x84, 0x07, "84 07 ffffffff 00000000 ffffffff 0000"),
        (0x9E, 0x12, "9e 12 ffffffffffffffff ffffffff 0000"),
        # RCTD, REPORTING OPTIONS; REQUESTED OPERATION CODE, SERVICE ACTION
        (0xA3, 0x0C, "a3 0c 87 ff ffff ffffffff 0000"),
    ],
)
def test_one_service_action_usage(lun, opcode, sa, usage):
    for options in (2, 3):
        support, got, _ = report_one(lun.sg, options, opcode, sa)
        assert support == SUPPORTED
        assert got == bytes.fromhex(usage)


def test_option_3_ignores_the_service_action_of_a_plain_opcode(lun):
    assert report_one(lun.sg, 3, 0x89, sa=0x1234)[0] == SUPPORTED


def test_unsupported_commands_are_reported_as_such(lun):
    assert report_one(lun.sg, 1, 0x4D)[0] == NOT_SUPPORTED  # LOG SENSE
    assert report_one(lun.sg, 2, 0x9E, 0x11)[0] == NOT_SUPPORTED  # no such SA
    assert report_one(lun.sg, 2, 0x83, 0x01)[0] == NOT_SUPPORTED  # EXTENDED COPY (LID4)
    res = expect_good(rsoc(lun.sg, options=1, opcode=0x4D))
    assert res.data == bytes([0, NOT_SUPPORTED, 0, 0])


def test_option_1_on_a_service_action_opcode_is_refused(lun):
    expect_invalid_cdb_field(rsoc(lun.sg, options=1, opcode=0x9E), 3, 7)


def test_option_2_on_a_plain_opcode_is_refused(lun):
    expect_invalid_cdb_field(rsoc(lun.sg, options=2, opcode=0x89), 3, 7)


@pytest.mark.parametrize("options", [4, 5, 6, 7])
def test_reserved_reporting_options_are_refused(lun, options):
    expect_invalid_cdb_field(rsoc(lun.sg, options=options), 2, 2)


def test_rctd_adds_command_timeouts(lun):
    plain, timed = report_all(lun.sg), report_all(lun.sg, rctd=True)
    assert plain.keys() == timed.keys()
    for key, (cdb_len, (nominal, recommended)) in timed.items():
        assert cdb_len == plain[key][0]
        assert 0 < nominal <= recommended, key
    read16 = timed[(0x88, None)][1][1]
    for key in ((0x83, 0x00), (0x93, None), (0x42, None)):
        assert timed[key][1][1] > read16, key
    # a token is made and reported from memory; writing with one is a copy
    quick, copy = timed[(0x84, 0x03)][1], timed[(0x83, 0x00)][1]
    assert (timed[(0x83, 0x10)][1], timed[(0x84, 0x07)][1], timed[(0x83, 0x11)][1]) == (
        quick,
        quick,
        copy,
    )
    support, _usage, tmo = report_one(lun.sg, 1, 0x93, rctd=True)
    assert support == SUPPORTED and tmo == timed[(0x93, None)][1]


# --- allocation length ---------------------------------------------------------


def test_allocation_length_truncates_the_list(lun):
    full = expect_good(rsoc(lun.sg)).data
    for alloc in (1, 3, 4, 11, 12, len(full) - 1, len(full), len(full) + 100):
        res = expect_good(rsoc(lun.sg, alloc=alloc))
        assert res.data == full[:alloc], alloc
    # a buffer larger than the allocation length still gets only that much
    assert expect_good(rsoc(lun.sg, alloc=10, data_in_len=4096)).data == full[:10]
    expect_good(rsoc(lun.sg, alloc=0))


def test_allocation_length_truncates_one_command(lun):
    full = expect_good(rsoc(lun.sg, options=1, opcode=0x89, rctd=True)).data
    assert len(full) == 4 + 16 + 12
    for alloc in (2, 6, 20, 31):
        assert (
            expect_good(rsoc(lun.sg, options=1, opcode=0x89, rctd=True, alloc=alloc)).data
            == full[:alloc]
        )


# --- attributes -------------------------------------------------------------


@pytest.mark.parametrize("attribute", sorted(ATTRIBUTE_COMMANDS))
def test_attribute_off_takes_commands_out(lun, attribute):
    gone = ATTRIBUTE_COMMANDS[attribute]
    assert gone <= report_all(lun.sg).keys()
    lun.so.set_attribute(attribute, "0")
    assert report_all(lun.sg).keys() == EXPECTED.keys() - gone
    for op, sa in gone:
        support = report_one(lun.sg, 1 if sa is None else 2, op, sa or 0)[0]
        assert support == NOT_SUPPORTED, (op, sa)
    lun.so.set_attribute(attribute, "1")
    assert report_all(lun.sg).keys() == EXPECTED.keys()


def test_compare_and_write_off_is_an_unsupported_opcode(lun):
    lun.so.set_attribute("emulate_caw", "0")
    res = sg_io(lun.sg, struct.pack(">BBQ3xBBB", 0x89, 0, 0, 0, 0, 0))
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_COMMAND_OPERATION_CODE)


# --- the sweep ----------------------------------------------------------------

SA_OPCODES = (0x5E, 0x5F, 0x83, 0x84, 0x9E, 0x9F, 0xA3, 0xA4)  # SA in byte 1
VARIABLE_LENGTH = 0x7F  # SA in bytes 8-9
GROUP_CDB_LEN = (6, 10, 10, 12, 16, 12, 10, 10)


def sweep_cdb(op, sa=None, block_size=512):
    """A CDB for op that is harmless to run: zero transfer lengths, zero
    fields, and where a command checks a length first, one that lets it reach
    the check that matters.  (cdb, data_out, data_in_len)"""
    if op == VARIABLE_LENGTH:
        cdb = bytearray(32)
        cdb[0], cdb[7] = op, 0x18  # ADDITIONAL CDB LENGTH
        cdb[8:10] = struct.pack(">H", sa)
        return cdb, None, 0
    cdb = bytearray(GROUP_CDB_LEN[op >> 5])
    cdb[0] = op
    if sa is not None:
        cdb[1] = sa
    data_out, data_in = None, 0
    if op in (0x08, 0x0A):  # READ (6), WRITE (6): 0 means 256 blocks
        cdb[4] = 1
        data_out, data_in = (bytes(block_size), 0) if op == 0x0A else (None, block_size)
    elif op == 0x5E:  # PERSISTENT RESERVE IN: at least 8 bytes
        cdb[7:9], data_in = struct.pack(">H", 4096), 4096
    elif op == 0x5F:  # PERSISTENT RESERVE OUT: exactly 24 bytes,
        cdb[5:9], data_out = struct.pack(">I", 24), bytes(24)
        cdb[2] = 0x01  # and a valid TYPE (Write Exclusive)
    elif op == 0xA3:
        cdb[6:10], data_in = struct.pack(">I", 4096), 4096
    elif op in (0x84, 0x9E):
        cdb[10:14], data_in = struct.pack(">I", 4096), 4096
    return cdb, data_out, data_in


def send(lun, op, sa=None):
    cdb, data_out, data_in = sweep_cdb(op, sa, lun.block_size)
    for _ in range(3):
        res = sg_io(lun.sg, cdb, data_out=data_out, data_in_len=data_in)
        assert res.host_status == 0, f"opcode {op:02x}: {res}"
        if op in (0x16, 0x56):  # RESERVE: give it back at once
            sg_io(lun.sg, bytes([0x17, 0, 0, 0, 0, 0]))
        if res.status != CHECK_CONDITION or res.decoded().key != UNIT_ATTENTION:
            return res
    return res


def refusal(res, sa_byte):
    """'opcode' or 'sa' when the answer says the command is not supported,
    'field' for INVALID FIELD IN CDB pointing elsewhere, None otherwise."""
    if res.status != CHECK_CONDITION:
        return None
    s = res.decoded()
    if s.key != ILLEGAL_REQUEST:
        return None
    if (s.asc, s.ascq) == INVALID_COMMAND_OPERATION_CODE:
        return "opcode"
    if (s.asc, s.ascq) == INVALID_FIELD_IN_CDB:
        ptr = field_pointer(s)
        if sa_byte is not None and (ptr is None or ptr[:2] == (True, sa_byte)):
            return "sa"
        return "field"
    return None


def test_sweep_unsupported_exactly_when_not_reported(lun):
    reported = report_all(lun.sg).keys()
    wrong = []
    for op in range(256):
        if op in SA_OPCODES or op == VARIABLE_LENGTH:
            sa_byte = 8 if op == VARIABLE_LENGTH else 1
            for sa in range(0x20):
                why = refusal(send(lun, op, sa), sa_byte)
                listed = (op, sa) in reported
                if listed == (why in ("opcode", "sa")):
                    wrong.append(f"{op:02x}/{sa:02x}: reported={listed} answer={why}")
        else:
            why = refusal(send(lun, op), None)
            listed = (op, None) in reported
            if listed == (why == "opcode"):
                wrong.append(f"{op:02x}: reported={listed} answer={why}")
    assert not wrong, "\n".join(wrong)


def test_unknown_service_actions_of_supported_opcodes_are_invalid_fields(lun):
    # MAINTENANCE IN has REPORT TARGET PORT GROUPS: REPORT ALIASES is a bad field
    expect_sense(send(lun, 0xA3, 0x0B), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
    # nothing of SERVICE ACTION OUT (16) is supported: the opcode is unknown
    expect_sense(send(lun, 0x9F, 0x11), ILLEGAL_REQUEST, *INVALID_COMMAND_OPERATION_CODE)
