"""The job store bindings (runrun._core.JobStoreServer / JobStoreClient, frameworks/csrc/
job_store.h) that runrun.ray's elastic driver serves the job's rendezvous store with: the C++
server and client, authenticated by the job's secret. One process, no collective:
rank-independent."""

import secrets
import threading
import time

import pytest

from runrun.common import loader
from runrun.common.exceptions import InvalidArgumentError


@pytest.fixture
def store():
    core = loader.core()
    secret = secrets.token_hex(32)
    server = core.JobStoreServer("127.0.0.1", 0, secret)
    client = core.JobStoreClient("127.0.0.1", server.port, secret, 10.0, "the test")
    yield core, server, client, secret
    client.close()
    server.stop()


def test_set_get_check_add_per_generation(store):
    _, _, client, _ = store
    client.set(3, "elastic/assign/0", b"0 2 0")
    assert client.get(3, "elastic/assign/0") == b"0 2 0"
    assert client.get(2, "elastic/assign/0") is None  # generations are separate key spaces
    assert client.check(3, "elastic/assign/0") and not client.check(3, "elastic/assign/1")
    assert [client.add(0, "elastic/failed/3", 1) for _ in range(3)] == [1, 2, 3]


def test_a_wrong_secret_is_refused_and_counted(store):
    core, server, _, _ = store
    with pytest.raises(InvalidArgumentError, match="wrong job secret"):
        core.JobStoreClient("127.0.0.1", server.port, secrets.token_hex(32), 5.0, "intruder")
    # The server's thread counts the refusal after answering it: the client may hear "wrong
    # job secret" first. A bounded wait, not a timing assertion.
    deadline = time.monotonic() + 10
    while server.refused == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.refused == 1
    with pytest.raises(InvalidArgumentError, match="malformed") as raised:
        core.JobStoreServer("127.0.0.1", 0, "not-a-secret")
    assert "not-a-secret" not in str(raised.value)


def test_a_blocking_call_releases_the_gil():
    """A connection that waits for a server that is not there (retries for 1.5 s) lets another
    thread run meanwhile: its ticks never stop for long."""
    import socket
    import time

    core = loader.core()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nobody listens there once the probe is closed
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    thread = threading.Thread(target=tick)
    thread.start()
    started = time.monotonic()
    try:
        with pytest.raises(Exception, match="127.0.0.1"):
            core.JobStoreClient("127.0.0.1", port, secrets.token_hex(32), 1.5, "the test")
    finally:
        stop.set()
        thread.join()
    assert time.monotonic() - started >= 1.0
    during = [t for t in ticks if t >= started]
    gaps = [b - a for a, b in zip(during, during[1:])]
    assert len(during) > 20 and max(gaps) < 0.5, (len(during), max(gaps, default=None))


def test_a_closed_client_and_a_stopped_server(store):
    core, server, client, secret = store
    client.close()
    with pytest.raises(InvalidArgumentError, match="closed"):
        client.get(0, "x")
    server.stop()
    server.stop()  # idempotent
