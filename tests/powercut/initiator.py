"""The host's iSCSI initiator for the power-cut harness: one iscsi_pipe
process (tests/powercut/iscsi_pipe.c, libiscsi) per LUN, spoken to through
its stdin and stdout.

An IscsiLun takes the place of a /dev/sgN path in tests/guest/scsi.py's
helpers: they call its sg_io() and get the same Reply back.
"""

import struct
import subprocess

from vaai.sgio import Reply

PIPE = "build/powercut/iscsi_pipe"
REQUEST = struct.Struct("=IIII")
REPLY = struct.Struct("=iII")
# status when the command got none: the session broke (the target died).
NO_STATUS = -1


class SessionLostError(Exception):
    """The target went away with a command outstanding."""


class IscsiLun:
    def __init__(self, portal, target, lun, initiator):
        self.proc = subprocess.Popen(
            [PIPE, portal, target, str(lun), initiator],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        if self.proc.stdout.read(1) != b"R":
            self.proc.wait()
            raise SessionLostError(f"no login to {portal} {target} LUN {lun}")

    def _read(self, n):
        b = self.proc.stdout.read(n)
        if len(b) != n:
            raise SessionLostError("iscsi_pipe ended")
        return b

    def sg_io(self, cdb, data_out=None, data_in_len=0, timeout_ms=0, page_offset=None):
        """One command; SessionLostError when it got no status."""
        cdb = bytes(cdb)
        out = bytes(data_out) if data_out is not None else b""
        direction = 1 if data_out is not None else 2 if data_in_len else 0
        try:
            self.proc.stdin.write(REQUEST.pack(len(cdb), direction, len(out), data_in_len))
            self.proc.stdin.write(cdb + out)
            self.proc.stdin.flush()
        except BrokenPipeError as e:
            raise SessionLostError("iscsi_pipe ended") from e
        status, sense_len, data_len = REPLY.unpack(self._read(REPLY.size))
        if status == NO_STATUS:
            raise SessionLostError("the session broke with the command outstanding")
        sense = self._read(sense_len)
        data = self._read(data_len)
        return Reply(status, sense, data, 0, 0)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
