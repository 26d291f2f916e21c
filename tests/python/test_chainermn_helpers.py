"""The framework-neutral halves of issue 15's features (runrun.common), without a runtime."""

import pytest

from runrun.common import checkpoint_file, data_shares, metric_weights
from runrun.common.exceptions import InvalidArgumentError


@pytest.mark.parametrize("count,size", [(10, 4), (8, 4), (3, 4), (1, 2), (1001, 3)])
def test_padded_plan_gives_equal_covering_shares(count, size):
    plan = data_shares.plan_shares(count, size)
    assert {len(s) for s in plan} == {-(-count // size)}
    assert set().union(*(set(s.tolist()) for s in plan)) == set(range(count))


def test_drop_remainder_plan_and_its_refusal():
    plan = data_shares.plan_shares(11, 4, drop_remainder=True)
    assert [s.tolist() for s in plan] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    with pytest.raises(InvalidArgumentError, match="3 samples for 4 ranks"):
        data_shares.plan_shares(3, 4, drop_remainder=True)
    with pytest.raises(InvalidArgumentError, match="empty"):
        data_shares.plan_shares(0, 2)


def test_rounds_cover_every_byte_once():
    lengths, chunk = [0, 10, 25, 7], 8
    rounds = data_shares.round_count(lengths, chunk)
    assert rounds == 4
    per_rank = [sum(col) for col in zip(*(data_shares.round_sizes(lengths, chunk, r)
                                          for r in range(rounds)))]
    assert per_rank == lengths


def test_combine_metrics_weights_means_and_adds_sums():
    reports = [metric_weights.local_report({"m": 1.0, "c": 2}, 1, {"c"}),
               metric_weights.local_report({"m": 4.0, "c": 5}, 3, {"c"}),
               metric_weights.local_report({"m": float("nan"), "c": 0}, 0, {"c"})]
    got = metric_weights.combine_metrics(reports, {"c"}, [0, 1, 2])
    assert got == {"m": pytest.approx((1.0 + 12.0) / 4), "c": 7.0}
    with pytest.raises(InvalidArgumentError, match="not a number"):
        metric_weights.local_report({"m": "high"}, 1, ())
    with pytest.raises(InvalidArgumentError, match="not in the metrics"):
        metric_weights.local_report({"m": 1.0}, 1, ("c",))


def test_lr_scale_and_resume_state():
    assert checkpoint_file.lr_scale(4, 2) == 0.5
    state = checkpoint_file.ResumeState({"step": 3}, checkpoint_file.topology_record(
        4, 4, 1, [0, 1, 2, 3]), 2)
    assert dict(state) == {"step": 3} and state.saved_size == 4 and state.size_changed
