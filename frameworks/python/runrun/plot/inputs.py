"""Reading the JSON lines runrun.plot draws, with errors that say which file, which line and
what was expected (a plot of half-understood input would mislead). Thread-safety: pure."""

import json


class PlotInputError(ValueError):
    """An input file runrun.plot cannot draw: the message names the file, the line and why."""


BENCH_FIELDS = ("op", "bytes", "busbw", "raw_busbw")
STEP_FIELDS = ("step", "compute_s", "hidden_s", "exposed_s", "optimizer_s", "step_s")


def _records(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as error:
        raise PlotInputError(f"{path}: cannot read it: {error.strerror}") from None
    records = []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        if text.startswith("[") and ">:" in text:  # a launcher-tagged line: [0]<stdout>:{...}
            text = text.split(">:", 1)[1]
        try:
            record = json.loads(text)
        except json.JSONDecodeError as error:
            raise PlotInputError(f"{path}:{number}: not a JSON object ({error.msg}): "
                                 f"{text[:80]!r}") from None
        if not isinstance(record, dict):
            raise PlotInputError(f"{path}:{number}: a JSON line must be an object, got "
                                 f"{type(record).__name__}")
        records.append((number, record))
    if not records:
        raise PlotInputError(f"{path}: no JSON lines in it (expected runrun_bench --json output "
                             "or a runrun --profile-output file)")
    return records


def kind_of(path):
    """"bench" or "profile", by the records in the file."""
    records = _records(path)
    if any(r.get("type") in ("step", "summary") for _, r in records):
        return "profile"
    if any("busbw" in r and "op" in r for _, r in records):
        return "bench"
    raise PlotInputError(f"{path}: neither runrun_bench --json rows (op, bytes, busbw, ...) nor "
                         "runrun --profile records (type step/summary)")


def _check(path, number, record, fields):
    missing = [f for f in fields if f not in record]
    if missing:
        raise PlotInputError(f"{path}:{number}: missing {', '.join(missing)} in {record}")


def read_bench(path):
    """{op: [(bytes, busbw, raw_busbw)] sorted by bytes} from runrun_bench --json lines (GB/s)."""
    rows = {}
    for number, record in _records(path):
        if record.get("op") == "run":
            continue
        _check(path, number, record, BENCH_FIELDS)
        rows.setdefault(record["op"], []).append(
            (int(record["bytes"]), float(record["busbw"]), float(record["raw_busbw"])))
    if not rows:
        raise PlotInputError(f"{path}: no benchmark rows (only 'run' lines?)")
    return {op: sorted(values) for op, values in rows.items()}


def read_profile(path):
    """(step records, last summary or None) from a runrun --profile-output file."""
    steps, summary = [], None
    for number, record in _records(path):
        if record.get("type") == "step":
            _check(path, number, record, STEP_FIELDS)
            steps.append(record)
        elif record.get("type") == "summary":
            summary = record
    if not steps:
        raise PlotInputError(f"{path}: no step records (type \"step\"): was the job run with "
                             "runrun --profile --profile-output FILE and did it take a step?")
    return steps, summary
