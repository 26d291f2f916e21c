#pragma once
// Why: the whole `runrun` program (parse, preflight, build the mpirun command, supervise, or act
// as the rank shim) as one function, so main.cc stays a one-liner and the flow reads top-down.
// Thread-safety: it is the process's main flow.

namespace runrun::launcher {

// Returns the process exit status (see docs/launcher.md, "Exit status").
int launcher_main(int argc, char** argv);

}  // namespace runrun::launcher
