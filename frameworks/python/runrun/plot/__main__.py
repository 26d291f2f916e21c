"""python -m runrun.plot FILE... [--out-dir DIR]: one PNG per input (docs/profiling.md).

A runrun_bench --json file gives DIR/<name>-bandwidth.png; a runrun --profile-output file gives
DIR/<name>-steps.png. Prints the path of each PNG written; exits 2 with a message naming the
file and line for input it cannot draw.
"""

import argparse
import os
import sys

from runrun.plot.inputs import PlotInputError, kind_of, read_bench, read_profile


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m runrun.plot",
        description="PNG plots of runrun_bench --json output (bandwidth vs size against the "
                    "raw transport) and runrun --profile-output files (per-step time split)")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--out-dir", default=".", help="where the PNGs go (default: here)")
    args = parser.parse_args(argv)
    try:
        jobs = [(path, kind_of(path)) for path in args.files]
        loaded = [(path, kind, read_bench(path) if kind == "bench" else read_profile(path))
                  for path, kind in jobs]
    except PlotInputError as error:
        print(f"runrun.plot: error: {error}", file=sys.stderr)
        return 2
    from runrun.plot import figures  # matplotlib only once the input is known to be good
    os.makedirs(args.out_dir, exist_ok=True)
    for path, kind, data in loaded:
        name = os.path.splitext(os.path.basename(path))[0]
        if kind == "bench":
            out = os.path.join(args.out_dir, f"{name}-bandwidth.png")
            figures.bandwidth_vs_size(data, f"runrun_bench: {name}", out)
        else:
            out = os.path.join(args.out_dir, f"{name}-steps.png")
            figures.step_split(data[0], data[1], f"runrun --profile: {name} (rank 0)", out)
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
