"""horovod.spark.run and Databricks' HorovodRunner on runrun: only the imports changed.

    python3 examples/spark/spark_run.py            # local[2]
    spark-submit examples/spark/spark_run.py       # on a cluster (2 free task slots)
docs/spark.md.
"""

from pyspark.sql import SparkSession

import runrun.spark
from runrun.spark import Runner  # was: from sparkdl import HorovodRunner


def train(steps=20):
    import torch

    import runrun.torch as hvd

    hvd.init()
    torch.manual_seed(0)
    model = torch.nn.Linear(10, 1)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                         named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    for _ in range(steps):
        x = torch.randn(32, 10)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return hvd.rank(), loss.item()


def main():
    spark = SparkSession.builder.master("local[2]").appName("runrun-spark").getOrCreate()
    try:
        print("horovod.spark.run style:", runrun.spark.run(train, num_proc=2))
        print("HorovodRunner style, rank 0:", Runner(np=2).run(train, steps=10))
        print("HorovodRunner on the driver:", Runner(np=-2).run(train, steps=10))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
