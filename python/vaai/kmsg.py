"""The kernel's own explanation of a refused configfs write.

configfs only returns an errno; target_core_vaai logs a line that names what
was wrong.  KernelLog marks the end of the kernel log before an operation and
returns the module's lines logged after it.
"""

import errno
import os


class KernelLog:
    def __init__(self, prefix):
        self.prefix = prefix + ":"
        self.fd = None

    def __enter__(self):
        try:
            self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
            os.lseek(self.fd, 0, os.SEEK_END)
        except OSError:
            self.fd = None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
        return False

    def lines(self):
        """The module's messages since __enter__, oldest first."""
        out = []
        while self.fd is not None:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                break
            except OSError:  # EPIPE: records were overwritten; go on
                continue
            if not rec:
                break
            msg = rec.decode(errors="replace").partition(";")[2]
            msg = msg.split("\n", 1)[0].strip()
            if msg.startswith(self.prefix):
                out.append(msg[len(self.prefix) :].strip())
        return out

    def why(self, err, naming=None):
        """What the module said last about a write that failed with err
        (an OSError): its last line, or its last line holding naming when
        it logged others too (I/O errors), else the errno's text."""
        said = self.lines()
        if naming:
            said = [line for line in said if naming in line] or said
        return said[-1] if said else os.strerror(err.errno or errno.EIO)
