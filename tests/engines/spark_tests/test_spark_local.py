"""runrun.spark on local[2] (the tasks are Python workers of this machine's driver JVM)."""

import pytest
import spark_cases

import runrun.spark


@pytest.fixture(scope="module", autouse=True)
def context():
    sc = spark_cases.new_context("local[2]")
    yield sc
    sc.stop()


def test_training_matches_one_process_on_the_global_batch():
    spark_cases.check_training()


@pytest.mark.parametrize("how", ["raise", "kill"])
def test_a_failed_rank_fails_the_call_naming_it(tmp_path, how):
    spark_cases.check_failed_rank(tmp_path, how)


def test_too_few_slots_fail_within_start_timeout_saying_how_many():
    with pytest.raises(TimeoutError, match="only 2 of the cluster's 2 were free after 1 s"):
        runrun.spark.run(lambda: 0, num_proc=3, start_timeout=1)


def test_runner_returns_rank_0s_value_on_tasks_and_on_the_driver():
    def main(base):
        import runrun.torch as hvd

        hvd.init()
        return base + 10 * hvd.rank() + hvd.size()

    assert runrun.spark.Runner(np=2).run(main, base=1) == 3
    assert runrun.spark.Runner(np=-2).run(main, base=1) == 3
    with pytest.raises(ValueError, match="np > 0"):
        runrun.spark.Runner(np=0)


def test_run_elastic_is_refused_with_the_reason():
    with pytest.raises(NotImplementedError, match="gang-scheduled"):
        runrun.spark.run_elastic(lambda: 0, num_proc=2, min_num_proc=1)
