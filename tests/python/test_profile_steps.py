"""runrun.common.profile's step records from the hooks, on a fake clock (docs/profiling.md):
a plain step, and double-buffered steps whose communication was enqueued in the previous step
(carry) and the flush() that waits for one outside any step (drop_carried); the summary's
slowest rank from the runtime's per-rank lateness in negotiation. No runtime call: the reads
of the runtime's lateness are pushed past the steps taken."""

from runrun.common.profile import StepProfiler
from runrun.common.profile_report import format_table, summarize


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def profiler():
    clock = Clock()
    p = StepProfiler(interval=0, clock=clock)
    p._lateness_every = 10 ** 9
    return p, clock


def at(clock, t, hook, *args):
    clock.now = t
    hook(*args)


def parts(record):
    return {k: round(record[k], 9) for k in ("step_s", "compute_s", "communication_s",
                                             "hidden_s", "exposed_s", "optimizer_s", "bytes")}


def test_plain_step():
    p, c = profiler()
    at(c, 2.0, p.gradient_ready, 100)
    at(c, 3.0, p.gradient_ready, 50)
    at(c, 5.0, p.wait_begin)
    at(c, 6.0, p.wait_end)
    at(c, 6.5, p.step_end)
    assert parts(p._steps[0]) == {"step_s": 6.5, "compute_s": 2.0, "communication_s": 4.0,
                                  "hidden_s": 3.0, "exposed_s": 1.0, "optimizer_s": 0.5,
                                  "bytes": 150}


def test_double_buffered_steps_report_the_allreduce_they_wait_for():
    p, c = profiler()
    # step 1: nothing to wait for; enqueues its gradients (carry) at 1.5
    at(c, 1.0, p.wait_begin)
    at(c, 1.0, p.wait_end)
    at(c, 1.5, p.carry, 60)
    at(c, 1.5, p.carry, 40)
    at(c, 2.0, p.step_end)
    # step 2: forward/backward until 5, waits for step 1's allreduce until 5.5, enqueues its own
    at(c, 5.0, p.wait_begin)
    at(c, 5.5, p.wait_end)
    at(c, 5.6, p.carry, 100)
    at(c, 6.0, p.step_end)
    # flush() after the last step: waits for step 2's allreduce outside any step
    at(c, 6.5, p.drop_carried)
    # a step after the flush: nothing carried
    at(c, 8.0, p.wait_begin)
    at(c, 8.0, p.wait_end)
    at(c, 9.0, p.step_end)
    first, second, third = (parts(r) for r in p._steps)
    assert first == {"step_s": 2.0, "compute_s": 2.0, "communication_s": 0.0, "hidden_s": 0.0,
                     "exposed_s": 0.0, "optimizer_s": 0.0, "bytes": 0}
    assert second == {"step_s": 4.0, "compute_s": 3.0, "communication_s": 4.0, "hidden_s": 3.5,
                      "exposed_s": 0.5, "optimizer_s": 0.5, "bytes": 100}
    assert third["bytes"] == 0 and third["communication_s"] == 0.0, third
    assert third["compute_s"] == 3.0 and third["step_s"] == 3.0, third


def test_slowest_rank_is_the_latest_in_negotiation():
    p, c = profiler()
    at(c, 1.0, p.gradient_ready, 8)
    at(c, 1.0, p.wait_begin)
    at(c, 1.2, p.wait_end)
    at(c, 1.3, p.step_end)
    # Rank 2's readiness reached the negotiation 0.15 s after the earliest rank's (median).
    lateness = [{"median_s": 0.0, "mean_s": 0.001, "samples": 40},
                {"median_s": 0.01, "mean_s": 0.01, "samples": 40},
                {"median_s": 0.15, "mean_s": 0.14, "samples": 40}]
    summary = summarize(p._steps, 3, None, lateness)
    assert summary.slowest_rank == 2 and summary.lateness_s == 0.15
    assert summary.as_json()["rank_lateness_s"] == [0.0, 0.01, 0.15]
    assert "slowest rank: 2, late by 150.00 ms" in format_table(summary, True)
    assert summary.verdict().startswith("waiting for a late rank: rank 2 is 150.0 ms late")
    # Nothing measured yet (no gather at rank 0 so far): not known, not a guess.
    unknown = summarize(p._steps, 3, None, [dict(r, samples=0) for r in lateness])
    assert unknown.slowest_rank is None and "not known yet" in format_table(unknown, True)
