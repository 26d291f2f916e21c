"""runrun.spark on local-cluster[2,1,1024]: two real executor JVMs of one core each, so each
rank runs in another executor; no executor is left when the context stops."""

import time

import pytest
import spark_cases


@pytest.fixture(scope="module")
def context():
    sc = spark_cases.new_context("local-cluster[2,1,1024]")
    yield sc
    sc.stop()


def test_training_matches_one_process_on_the_global_batch(context):
    spark_cases.check_training()


def test_a_killed_rank_fails_the_call_naming_it(context, tmp_path):
    spark_cases.check_failed_rank(tmp_path, "kill")


def test_stopping_the_context_leaves_no_executor(context):
    app = context.applicationId
    assert len(spark_cases.executor_pids(app)) == 2
    context.stop()
    deadline = time.monotonic() + 60
    while spark_cases.executor_pids(app) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert spark_cases.executor_pids(app) == []
