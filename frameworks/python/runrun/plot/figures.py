"""The two figures of runrun.plot, drawn with matplotlib's Agg backend (no display needed).
Thread-safety: matplotlib's pyplot state; one thread."""

import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _size_label(nbytes):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def bandwidth_vs_size(rows, title, path):
    """busbw against message size for each op: runrun (solid) and the raw transport (dashed)."""
    ops = list(rows)
    fig, axes = plt.subplots(1, len(ops), figsize=(5 * len(ops), 4), squeeze=False)
    for ax, op in zip(axes[0], ops):
        sizes = [b for b, _, _ in rows[op]]
        ax.plot(sizes, [r for _, r, _ in rows[op]], "o-", label="runrun")
        ax.plot(sizes, [w for _, _, w in rows[op]], "s--", label="raw transport")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [_size_label(b) for b in sizes], rotation=45, fontsize=8)
        ax.set_xlabel("message size")
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(op)
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


PARTS = (("compute_s", "compute before 1st gradient"),
         ("backward_rest_s", "rest of backward (comm. hidden)"),
         ("exposed_s", "exposed wait"),
         ("optimizer_s", "optimizer"))


def step_split(steps, summary, title, path):
    """One stacked bar per step: compute, the rest of backward (the hidden communication),
    exposed wait, optimizer (ms); the verdict of the last summary below."""
    numbers = [s["step"] for s in steps]
    values = {
        "compute_s": [s["compute_s"] for s in steps],
        "exposed_s": [s["exposed_s"] for s in steps],
        "optimizer_s": [s["optimizer_s"] for s in steps],
    }
    values["backward_rest_s"] = [
        max(0.0, s["step_s"] - s["compute_s"] - s["exposed_s"] - s["optimizer_s"]) for s in steps]
    fig, ax = plt.subplots(figsize=(max(8, len(steps) * 0.12 + 5), 4.5))
    bottom = [0.0] * len(steps)
    for key, label in PARTS:
        heights = [v * 1e3 for v in values[key]]
        ax.bar(numbers, heights, bottom=bottom, label=label, width=0.9)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xlabel("step")
    ax.set_ylabel("time (ms)")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.grid(True, axis="y", alpha=0.3)
    if summary and summary.get("verdict"):
        fig.text(0.01, 0.01, textwrap.fill("verdict: " + summary["verdict"], 120), fontsize=8)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)
