"""Checks a runrun --profile-output file of a job that ran STEPS optimizer steps reducing BYTES
of gradients per step (profile_plot.sh, profile_frameworks.sh): one "step" record per step, in
order, from rank 0, each with positive step, compute and communication times, the parts adding
up, the gradients' bytes and a bandwidth. --double-buffering: step 1 waits for nothing (bytes 0,
all compute); every later step reports the previous step's allreduce.
Usage: check_steps.py FILE STEPS BYTES [--double-buffering]. Exit 1 with the record at fault."""

import json
import sys


def check(path, steps, grad_bytes, double_buffering):
    records = [json.loads(line) for line in open(path, encoding="utf-8")]
    found = [r for r in records if r["type"] == "step"]
    assert [r["step"] for r in found] == list(range(1, steps + 1)), [r["step"] for r in found]
    assert records[-1]["type"] == "summary" and records[-1]["final"], records[-1]
    for r in found:
        assert r["rank"] == 0 and r["step_s"] > 0, r
        assert min(r[k] for k in r if k.endswith("_s")) >= 0, r
        parts = r["compute_s"] + r["exposed_s"] + r["optimizer_s"]
        assert parts <= r["step_s"] + 1e-9, r
        if double_buffering and r["step"] == 1:
            assert r["bytes"] == 0 and r["communication_s"] == 0, r
            continue
        assert r["bytes"] == grad_bytes, (r, grad_bytes)
        assert r["compute_s"] > 0 and r["communication_s"] > 0 and r["busbw_gbit"] > 0, r
        assert r["communication_s"] >= r["exposed_s"] - 1e-9, r
        assert abs(r["hidden_s"] + r["exposed_s"] - r["communication_s"]) < 1e-9, r
        if double_buffering:  # enqueued in the previous step: hidden covers all of compute
            assert r["hidden_s"] >= r["compute_s"] - 1e-9, r


if __name__ == "__main__":
    try:
        check(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), "--double-buffering" in sys.argv)
    except (AssertionError, OSError, ValueError, KeyError) as error:
        print(f"check_steps: {sys.argv[1]}: {error}")
        sys.exit(1)
