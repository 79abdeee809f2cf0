"""The data-path plots of docs/benchmarks.md: IOPS and CPU time per I/O
across block sizes (random reads and writes at queue depth 32 over
tcm_loop), one panel per store and direction, one line per side."""

import os

SIZES = ("4k", "16k", "64k", "256k", "1m")
LABEL = {
    "ours": "vaai (ours)",
    "lio": "LIO",
    "lio-aio": "LIO async_io",
    "ours-wb": "vaai, write cache on",
}
LIO_NAME = {"file": "target_core_file", "bdev": "target_core_iblock"}


def side_label(store, who):
    """A side's name in a legend or a column: LIO named by its backstore."""
    return LABEL[who].replace("LIO", LIO_NAME[store])


STYLE = {
    "ours": {"marker": "o", "linewidth": 2},
    "lio": {"marker": "s"},
    "lio-aio": {"marker": "^", "linestyle": "--"},
}
FIGURES = (
    ("iops", "IOPS", "bench-iops.png", "IOPS by block size"),
    (
        "cpu_us_per_io",
        "CPU µs per I/O (whole guest)",
        "bench-cpu.png",
        "CPU time per I/O by block size",
    ),
)


def _sweep(data):
    """(store, rw) -> {bs: result} for the sweep points over tcm_loop."""
    out = {}
    for r in data["results"]:
        if r.get("sweep") and r["fabric"] == "loop":
            out.setdefault((r["store"], r["rw"]), {})[r["bs"]] = r
    return out


def draw(data, outdir):
    """Write the PNGs into outdir: [(file name, caption)], none without a sweep."""
    sweep = _sweep(data)
    if not sweep:
        return []
    import matplotlib as mpl

    mpl.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        (store, rw)
        for store in ("file", "bdev")
        for rw in ("randread", "randwrite")
        if (store, rw) in sweep
    ]
    # a merged run (report.merge_data) knows each fabric's boot
    loop_date = data["meta"].get("dates", {}).get("loop", data["meta"]["date"])
    made = []
    for key, ylabel, name, title in FIGURES:
        fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), squeeze=False)
        for ax, (store, rw) in zip(axes[0], panels):
            points = sweep[(store, rw)]
            sizes = [bs for bs in SIZES if bs in points]
            for who in ("ours", "lio", "lio-aio"):
                if who not in points[sizes[0]]:
                    continue
                ax.plot(
                    range(len(sizes)),
                    [points[bs][who][key] for bs in sizes],
                    label=side_label(store, who),
                    **STYLE[who],
                )
            ax.set_xticks(range(len(sizes)))
            ax.set_xticklabels(sizes)
            ax.set_yscale("log")
            ax.set_title(f"{store} store, {rw}")
            ax.set_xlabel("block size")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        axes[0][0].set_ylabel(ylabel)
        fig.suptitle(f"{title}, queue depth 32, tcm_loop ({loop_date})", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, name), dpi=90)
        plt.close(fig)
        made.append((name, title))
    return made
