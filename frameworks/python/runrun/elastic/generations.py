"""This process's place in the generations of an elastic job, as the core knows it (the
launcher's driver publishes generations through the rendezvous store; c_api.h, "elastic")."""

import os

from runrun.common import loader


def is_elastic():
    """True when this process is a worker of an elastic job (runrun --min-np/--max-np/...)."""
    if "RUNRUN_ELASTIC_WORKER" not in os.environ:
        return False
    return bool(loader.core().elastic_enabled())


def hosts_updated():
    """True when the launcher published a generation newer than the one this process joined
    (one round trip to the launcher's store). False outside an elastic job."""
    if not is_elastic():
        return False
    joined, latest = loader.core().elastic_generations()
    return joined > 0 and latest > joined


def generation():
    """The generation this process joined last (0 before the first init or outside elastic)."""
    if not is_elastic():
        return 0
    return loader.core().elastic_generations()[0]


def report_failure():
    """Tells the launcher that a collective failed in this rank's generation, so that it
    starts a new one even when no process died (a stalled peer, a network failure). Never
    raises: the launcher may be gone too, which the next init reports."""
    if not is_elastic():
        return
    try:
        loader.core().elastic_report_failure()
    except Exception:  # noqa: BLE001 - best effort; init() says what is wrong
        pass
