"""Where a heartbeat's time goes, from the kernel's own tracepoints: for
every COMPARE AND WRITE the initiator sends (over tcm_loop or iSCSI),
  scsi:scsi_dispatch_cmd_start     the initiator's SCSI layer hands it down
  target:target_sequencer_start    LIO core has its CDB (tcm_loop does that
                                   in the dispatching context, iSCSI in
                                   the connection's receive thread)
  kprobe ats_execute_ours/_lio     the backend's COMPARE AND WRITE starts:
                                   ours vaai_caw_execute, LIO's
                                   sbc_compare_and_write
  target:target_cmd_complete       LIO core sends the status back
  scsi:scsi_dispatch_cmd_done      the initiator's SCSI layer has it back
the tracepoints filtered to opcode 89h, in the mono trace clock (one clock
for every CPU).  Heartbeats are one at a time, so the n-th event of each
kind is the n-th beat's.  The phases of a beat:
  to_target   dispatch to LIO's CDB: the fabric's submission
  queued      LIO's CDB to the backend's start: LIO's per-CPU submission
              queue, behind the commands queued before it
  in_backend  the backend's start to LIO's status: range lock, read,
              compare, write, and LIO's completion work
  back        the status to the initiator's SCSI layer
and, from the beat's own time as the heartbeat program took it
(with_initiator()),
  initiator   the rest: the system call, the wait for a tag of the LUN's
              queue in the initiator's block layer before the dispatch,
              and the completion's way back to the program after it
With sched (guest_ats.py --trace-sched), the scheduler's sched_switch as
well, unfiltered: for each beat, what ran on the CPU that started its
COMPARE AND WRITE while it was queued there (queued_ran()).
Used by guest_ats.py --trace, inside the guest."""

import bisect
import contextlib
import os
import re

TRACING = "/sys/kernel/tracing"
EVENTS = (
    "scsi/scsi_dispatch_cmd_start",
    "target/target_sequencer_start",
    "kprobes/ats_execute_ours",
    "kprobes/ats_execute_lio",
    "target/target_cmd_complete",
    "scsi/scsi_dispatch_cmd_done",
)
# the backends' COMPARE AND WRITE entries; each fires only for its own
# backend's commands, so a beat has one of the two
PROBES = {
    "ats_execute_ours": "target_core_vaai:vaai_caw_execute",
    "ats_execute_lio": "target_core_mod:sbc_compare_and_write",
}
TRACED = ("to_target", "queued", "in_backend", "back")
PHASES = ("initiator", *TRACED)
NAMES = tuple(ev.split("/")[1] for ev in EVENTS)
SCHED = "sched/sched_switch"
# "  <task>-<pid> [cpu] flags  <seconds>: <event>: ..."
_LINE = re.compile(r"\s(\d+\.\d+): (" + "|".join(NAMES) + r"):")
_CPU_LINE = re.compile(
    r"^\s*.+?-\d+\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): "
    r"(sched_switch|target_sequencer_start|ats_execute_ours|ats_execute_lio): (.*)$",
    re.MULTILINE,
)
_NEXT = re.compile(r"next_comm=(.*?) next_pid=")


def _write(path, text):
    with open(os.path.join(TRACING, path), "w") as f:
        f.write(text)


def _probe(line):
    """Add or remove one kprobe event, leaving the others (Python's append
    mode seeks to the end, which kprobe_events refuses)."""
    fd = os.open(os.path.join(TRACING, "kprobe_events"), os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


class Trace:
    """The events, set up once (Trace(), with no I/O running: switching a
    tracepoint or a kprobe on or off rewrites kernel text, which under the
    emulator's heavy I/O once locked a CPU up) and recorded between
    start() and stop(), which switch only the ring buffer; close() takes
    them down again, also with no I/O running."""

    def __init__(self, sched=False):
        self.sched = sched
        _write("tracing_on", "0")
        _write("trace_clock", "mono")
        # every task switch of a point's 10 s, on each CPU
        _write("buffer_size_kb", "65536" if sched else "8192")
        try:
            if sched:
                _write(f"events/{SCHED}/enable", "1")
            for name, where in PROBES.items():
                _probe(f"p:kprobes/{name} {where}")
            for ev in EVENTS:
                if not ev.startswith("kprobes/"):
                    _write(f"events/{ev}/filter", "opcode == 0x89")
                _write(f"events/{ev}/enable", "1")
        except OSError:
            self.close()
            raise

    def start(self):
        _write("trace", "")  # empties the buffer
        _write("tracing_on", "1")

    def stop(self):
        """The beats recorded since start(): [{phase: µs}], with sched
        each with "ran" as well (queued_ran())."""
        _write("tracing_on", "0")
        with open(os.path.join(TRACING, "trace")) as f:
            text = f.read()
        beats = phases(text)
        if self.sched:
            for beat, ran in zip(beats, queued_ran(text)):
                beat["ran"] = ran
        return beats

    def close(self):
        """Everything __init__ set up taken down, what of it was."""
        with contextlib.suppress(OSError):
            _write(f"events/{SCHED}/enable", "0")
        for ev in EVENTS:
            with contextlib.suppress(OSError):
                _write(f"events/{ev}/enable", "0")
            if not ev.startswith("kprobes/"):
                with contextlib.suppress(OSError):
                    _write(f"events/{ev}/filter", "0")
        for name in PROBES:
            with contextlib.suppress(OSError):
                _probe(f"-:kprobes/{name}")
        _write("trace", "")


def phases(text):
    """[{phase: µs}] per beat, from the trace's text."""
    seen = {name: [] for name in NAMES}
    for m in _LINE.finditer(text):
        seen[m.group(2)].append(float(m.group(1)))
    # one side's heartbeat: its own backend's entry, none of the other's
    execute = seen["ats_execute_ours"] or seen["ats_execute_lio"]
    if seen["ats_execute_ours"] and seen["ats_execute_lio"]:
        raise ValueError("the trace holds both sides' COMPARE AND WRITEs")
    order = (
        seen["scsi_dispatch_cmd_start"],
        seen["target_sequencer_start"],
        execute,
        seen["target_cmd_complete"],
        seen["scsi_dispatch_cmd_done"],
    )
    if len({len(times) for times in order}) != 1:
        raise ValueError(
            "the trace has unequal counts of its events: "
            + ", ".join(str(len(times)) for times in order)
        )
    out = []
    # the n-th of each is one beat, if each follows the one before
    for t in zip(*order):
        if list(t) != sorted(t):
            raise ValueError("the trace's events are not one beat at a time")
        out.append({ph: (t[i + 1] - t[i]) * 1e6 for i, ph in enumerate(TRACED)})
    return out


def with_initiator(beats, lat_us):
    """beats (phases()) each with "initiator" as well: its time as the
    heartbeat program took it (lat_us, in the beats' order) less the
    traced phases.  The two must count the same beats."""
    if len(beats) != len(lat_us):
        raise ValueError(f"the trace has {len(beats)} beats, the heartbeat {len(lat_us)}")
    for beat, lat in zip(beats, lat_us):
        beat["initiator"] = max(0.0, lat - sum(beat[ph] for ph in TRACED))
    return beats


def task_kind(comm):
    """A task's name without its numbers: kworker/uN:N is a worker of the
    unbound workqueues, kworker/N:N a per-CPU one (LIO's submission and
    completion work among them)."""
    return re.sub(r"\d+", "N", comm)


def queued_ran(text):
    """For each beat (in order), while it was queued (LIO's CDB to the
    backend's COMPARE AND WRITE), the µs each kind of task ran on the CPU
    that then started it: {task_kind: µs}.  Needs the trace's sched_switch."""
    switches = {}  # cpu -> [(seconds, next task)]
    seq, execute = [], []
    for m in _CPU_LINE.finditer(text):
        cpu, t, name, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        if name == "sched_switch":
            nxt = _NEXT.search(rest)
            if nxt:
                switches.setdefault(cpu, []).append((t, task_kind(nxt.group(1))))
        elif name == "target_sequencer_start":
            seq.append(t)
        else:
            execute.append((t, cpu))
    times = {cpu: [t for t, _ in sw] for cpu, sw in switches.items()}
    out = []
    for t0, (t1, cpu) in zip(seq, execute):
        sw, ran, since = switches.get(cpu, []), {}, t0
        # the switch that put on the CPU what ran at t0, and those after
        k = bisect.bisect_right(times.get(cpu, []), t0) - 1
        cur = sw[k][1] if k >= 0 else None
        for t, task in sw[k + 1 :]:
            if t >= t1:
                break
            if cur:
                ran[cur] = ran.get(cur, 0) + (t - since) * 1e6
            cur, since = task, t
        if cur:
            ran[cur] = ran.get(cur, 0) + (t1 - since) * 1e6
        out.append(ran)
    return out


def summary(beats):
    """For the beats, each phase's (of those every beat has) p50 and p99
    in µs, and over the slowest 1 % of beats (at least one) each phase's
    mean: where a slow beat went; where the beats have "ran", the kinds of
    task that ran meanwhile on the CPU the slowest beats were queued for,
    mean µs, most first."""
    if not beats:
        return None
    out = {}
    have = [ph for ph in PHASES if all(ph in b for b in beats)]
    for ph in have:
        vals = sorted(b[ph] for b in beats)
        out[ph] = {"p50_us": vals[len(vals) // 2], "p99_us": vals[int(0.99 * (len(vals) - 1))]}
    slow = sorted(beats, key=lambda b: sum(b[ph] for ph in have))
    slow = slow[-max(1, len(beats) // 100) :]
    for ph in have:
        out[ph]["slowest_mean_us"] = sum(b[ph] for b in slow) / len(slow)
    if all("ran" in b for b in slow):
        out["queued_ran"] = mean_ran([b["ran"] for b in slow])
    return out


def mean_ran(rans):
    """The mean µs of each kind of task over the {task_kind: µs} of rans
    (a task missing from one counts 0 there), longest first."""
    total = {}
    for ran in rans:
        for task, us in ran.items():
            total[task] = total.get(task, 0) + us / len(rans)
    return dict(sorted(total.items(), key=lambda kv: -kv[1]))
