"""The "where the time goes" sections of docs/benchmarks.md, from the JSON
bench/guest_profile.py writes: the profile of the data path, and the
profiles of the points where ours stayed behind in every boot ("gaps")."""

from plots import LABEL, side_label
from report_cells import FABRIC_TITLE, STORE_TITLE

PROFILE = (
    "`bench/guest_profile.py`, measured {date} (kernel {kernel}), every side "
    "in the same boot: the {store} over {fabric}, a sample every {period_ms:g} ms "
    "for {seconds} s, the guest's clocksource `{clocksource}`.\n"
)

GAPS_RUN = (
    "\n### {store} over {fabric}\n\nMeasured {date} (kernel {kernel}), {seconds} s "
    "per side, a sample every {period_ms:g} ms, clocksource `{clocksource}`.\n\n"
)

FABRIC_TEXT = {"loop": "tcm_loop", "iscsi": "iSCSI target"}
STORE_TEXT = {"file": "file store", "bdev": "block store"}


def _rest(fabric):
    """The buckets after "backend", each in a column of its own, with their
    headings: the initiator's only over iSCSI (tcm_loop is both)."""
    rest = [("LIO core", "LIO core"), ("fabric", FABRIC_TEXT[fabric])]
    if fabric != "loop":
        rest.append(("initiator", "initiator"))
    return [
        *rest,
        ("xfs", "xfs"),
        ("kernel", "kernel, rest"),
        ("fio", "fio"),
        ("user", "user, rest"),
    ]


def _row(workload, side, s, rest):
    b = s["buckets"]
    return "| {} | {} | {:.0f} | {:.0f} | {:.1f} | {:.0f} | {:.0f} | {} |".format(
        workload,
        side,
        s["iops"],
        s["busy_us_per_io"],
        b["backend"],
        s["under_backend_us_per_io"],
        s["under_target_us_per_io"],
        " | ".join(f"{b[c]:.0f}" for c, _ in rest),
    )


def _top(s, n):
    return ", ".join("`{}` {:.1f}".format(t["sym"], t["us_per_io"]) for t in s["top"][:n])


def profile_tables(data):
    """One profile run's tables: the columns, the time through the named
    functions (the page says which and why), and each side's busiest
    functions."""
    rest = _rest(data["meta"].get("fabric", "loop"))
    store = data["meta"]["store"]
    text = (
        "| workload | side | IOPS | busy | backend | under backend | under target | {} |\n"
        "|---|---|{}\n".format(" | ".join(h for _, h in rest), "---:|" * (5 + len(rest)))
    )
    sides = [w for w in LABEL if all(w in r for r in data["results"])]
    text += (
        "\n".join(
            _row(r["workload"], side_label(store, w), r[w], rest)
            for r in data["results"]
            for w in sides
            if "buckets" in r[w]
        )
        + "\n"
    )
    rows = [
        (r["workload"], w, r[w]["through_us_per_io"])
        for r in data["results"]
        for w in sides
        if "through_us_per_io" in r[w]
    ]
    if rows:
        funcs = list(rows[0][2])
        text += "\nTime through the named functions, µs per I/O:\n\n"
        text += "| workload | side | {} |\n|---|---|{}\n".format(
            " | ".join(funcs), "---:|" * len(funcs)
        )
        text += (
            "\n".join(
                "| {} | {} | {} |".format(
                    workload, side_label(store, w), " | ".join(f"{t[f]:.1f}" for f in funcs)
                )
                for workload, w, t in rows
            )
            + "\n"
        )
    text += "\nThe functions that took most of the busy time, µs per I/O:\n\n"
    for r in data["results"]:
        for w in sides:
            if "top" in r[w]:
                text += "- {}, {}: {}\n".format(r["workload"], side_label(store, w), _top(r[w], 6))
    return text


def render_profile(data):
    m = data["meta"]
    return (
        PROFILE.format(
            date=m["date"],
            kernel=m["kernel"],
            seconds=m["seconds"],
            period_ms=m["period_ns"] / 1e6,
            fabric=FABRIC_TITLE[m.get("fabric", "loop")],
            clocksource=m.get("clocksource", "not recorded"),
            store=STORE_TEXT[m["store"]],
        )
        + "\n"
        + profile_tables(data)
    )


# The gaps section's runs in this order: tcm_loop before iSCSI, each fabric's
# file store before its block store.
GAPS_ORDER = [(f, st) for f in FABRIC_TITLE for st in STORE_TITLE]


def render_gaps(runs):
    """Several profile runs, each of one store over one fabric, each under a
    heading of its own."""
    text = ""
    for data in sorted(
        runs, key=lambda d: GAPS_ORDER.index((d["meta"].get("fabric", "loop"), d["meta"]["store"]))
    ):
        m = data["meta"]
        text += GAPS_RUN.format(
            store=STORE_TITLE[m["store"]],
            fabric=FABRIC_TITLE[m.get("fabric", "loop")],
            date=m["date"],
            kernel=m["kernel"],
            seconds=m["seconds"],
            period_ms=m["period_ns"] / 1e6,
            clocksource=m.get("clocksource", "not recorded"),
        )
        text += profile_tables(data)
    return text
