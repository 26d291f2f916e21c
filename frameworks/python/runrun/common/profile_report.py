"""The table `runrun --profile` prints (docs/profiling.md): per-step records (runrun.common.
profile) summarized into medians and p90s, the scaling efficiency estimate, busbw against the
link bandwidth measured for the job, the slowest rank and a one-line verdict.

Why apart from the hooks: a pure function of plain records, so it is tested without a job and
the plotting module (runrun.plot) reads the same JSON it writes. Thread-safety: pure functions.
"""

import dataclasses

PARTS = ("step", "compute", "communication", "hidden", "exposed", "optimizer")
# The verdict calls a step communication-bound when its exposed wait is at least this share.
COMMUNICATION_BOUND = 0.3
# ... and names a late rank when its lateness is at least this share of a step.
LATE_RANK = 0.1


def _percentile(values, q):
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))
    return ordered[index]


def _median(values):
    if not values:
        return 0.0
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


@dataclasses.dataclass
class Summary:
    steps: int
    size: int
    median: dict            # part -> seconds
    p90: dict               # part -> seconds
    bytes: int              # median bytes reduced per step
    algbw_gbit: float       # median
    busbw_gbit: float       # median
    link_gbit: float = None  # measured for this job (launcher), None when not measured
    slowest_rank: int = None
    lateness_s: float = None
    rank_lateness_s: list = None  # every rank's median lateness in negotiation, or None
    step_median: float = 0.0
    exposed_median: float = 0.0

    @property
    def efficiency(self):
        """Scaling efficiency estimate: the share of the step that is not exposed wait."""
        step = self.median["step"]
        return (step - self.median["exposed"]) / step if step > 0 else 1.0

    @property
    def busbw_share(self):
        return self.busbw_gbit / self.link_gbit if self.link_gbit else None

    def verdict(self):
        step = self.median["step"]
        if step <= 0:
            return "no step measured"
        exposed = self.median["exposed"] / step
        link = (f" of {self.link_gbit:.1f} Gbit/s measured" if self.link_gbit
                else " (link bandwidth not measured: one host)")
        late = self.lateness_s is not None and self.lateness_s >= LATE_RANK * step
        # A late rank explains the exposed wait when it is most of it: name the rank, not the
        # network.
        if late and self.lateness_s >= 0.5 * self.median["exposed"]:
            share = min(1.0, self.lateness_s / step)
            return (f"waiting for a late rank: rank {self.slowest_rank} is "
                    f"{self.lateness_s * 1e3:.1f} ms late per step, {share * 100:.0f} % of the "
                    "step is the others waiting for it (load imbalance, a slower host or its "
                    "data loading)")
        if exposed >= COMMUNICATION_BOUND:
            return (f"communication-bound: {exposed * 100:.0f} % of the step is exposed "
                    f"allreduce at {self.busbw_gbit:.1f} Gbit/s busbw{link}")
        communication = self.median["communication"]
        hidden = self.median["hidden"] / communication * 100 if communication > 0 else 100.0
        return (f"compute-bound: {self.efficiency * 100:.0f} % of the step is compute; "
                f"{hidden:.0f} % of the communication is hidden behind backward")

    def as_json(self):
        return {
            "steps": self.steps, "size": self.size,
            "median": self.median, "p90": self.p90, "bytes": self.bytes,
            "algbw_gbit": self.algbw_gbit, "busbw_gbit": self.busbw_gbit,
            "link_gbit": self.link_gbit, "busbw_share": self.busbw_share,
            "efficiency": self.efficiency, "slowest_rank": self.slowest_rank,
            "lateness_s": self.lateness_s, "rank_lateness_s": self.rank_lateness_s,
            "verdict": self.verdict(),
        }


def summarize(steps, size, link_gbit, lateness=None):
    """A Summary of step records; `lateness`: the runtime's per-rank lateness in negotiation
    ([{"median_s", "mean_s", "samples"}] in rank order, runrun._core.Runtime.rank_lateness()),
    or None."""
    median = {part: _median([s[part + "_s"] for s in steps]) for part in PARTS}
    p90 = {part: _percentile([s[part + "_s"] for s in steps], 0.9) for part in PARTS}
    summary = Summary(
        steps=len(steps), size=size, median=median, p90=p90,
        bytes=int(_median([s["bytes"] for s in steps])),
        algbw_gbit=_median([s["algbw_gbit"] for s in steps]),
        busbw_gbit=_median([s["busbw_gbit"] for s in steps]), link_gbit=link_gbit,
        step_median=median["step"], exposed_median=median["exposed"])
    if lateness and len(lateness) > 1 and any(r["samples"] for r in lateness):
        # The slowest rank is the one whose readiness arrives latest: the others wait for it.
        slowest = max(range(len(lateness)),
                      key=lambda r: (lateness[r]["median_s"], lateness[r]["mean_s"]))
        summary.slowest_rank = slowest
        summary.lateness_s = lateness[slowest]["median_s"]
        summary.rank_lateness_s = [r["median_s"] for r in lateness]
    return summary


def _ms(seconds):
    return f"{seconds * 1e3:9.2f}"


def format_table(summary, final):
    """The table rank 0 prints (stderr), as in docs/profiling.md."""
    title = "final" if final else "so far"
    lines = [f"runrun profile ({title}): {summary.steps} steps, {summary.size} ranks, per step "
             "(ms):",
             f"  {'part':<28}{'median':>9}{'p90':>9}"]
    labels = {
        "step": "step",
        "compute": "compute before 1st gradient",
        "communication": "communication (in flight)",
        "hidden": "  hidden behind backward",
        "exposed": "  exposed wait in step",
        "optimizer": "optimizer",
    }
    for part in PARTS:
        lines.append(f"  {labels[part]:<28}{_ms(summary.median[part])}{_ms(summary.p90[part])}")
    lines.append(f"  bytes reduced per step: {summary.bytes / 2**20:.2f} MiB; algbw "
                 f"{summary.algbw_gbit:.2f} Gbit/s, busbw {summary.busbw_gbit:.2f} Gbit/s")
    share = summary.busbw_share
    lines.append("  link bandwidth measured for this job: " +
                 (f"{summary.link_gbit:.2f} Gbit/s (busbw is {share * 100:.0f} % of it)"
                  if share is not None else "not measured (one host)"))
    lines.append(f"  scaling efficiency estimate (1 - exposed/step): "
                 f"{summary.efficiency * 100:.0f} %")
    if summary.slowest_rank is not None:
        lines.append(f"  slowest rank: {summary.slowest_rank}, late by "
                     f"{summary.lateness_s * 1e3:.2f} ms (median over its tensors)")
    elif summary.size > 1:
        lines.append("  slowest rank: not known yet (measured in negotiation; rank 0 reads it "
                     "every 10 steps)")
    lines.append(f"  verdict: {summary.verdict()}")
    return "\n".join(lines)
