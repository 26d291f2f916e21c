#pragma once
// Why: some of what mpirun itself prints is not the story of the job but a consequence of it,
// and reading it lets the launcher tell the real one (issue 36, point 5): after a cut link
// mpirun says which daemon it lost ("ORTE has lost communication with a remote daemon ...
// Remote daemon: [[J,0],2] on node ns2"), and Open MPI 4.1's mpirun then often crashes in
// PMIx_Finalize while shutting down, printing a signal report ("[host:pid] *** Process
// received signal *** ... *** End of error message ***") that would otherwise read as the
// cause. These recognize both; the output router holds them back and the supervisor decides.
// Thread-safety: pure functions.

#include <optional>
#include <string>
#include <vector>

namespace runrun::launcher {

// "[vm:15935] *** Process received signal ***": the first line of a signal report.
bool starts_crash_report(const std::string& line);
// "[vm:15935] *** End of error message ***": its last line.
bool ends_crash_report(const std::string& line);
// The signal a report names ("Segmentation fault (11)"), or "a signal".
std::string crash_signal(const std::vector<std::string>& report);

// The node whose daemon mpirun lost, when `box` (mpirun's lines between rules) says so.
std::optional<std::string> lost_daemon_node(const std::vector<std::string>& box);

// The index of `node` among `host_labels` (exact, or the same short name: "ns2" and
// "ns2.example.com"), or -1.
int host_index_of_node(const std::string& node, const std::vector<std::string>& host_labels);

}  // namespace runrun::launcher
