#include "launcher/processes/mpirun_aftermath.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "launcher/processes/mpirun_reports.h"
#include "launcher/processes/partition_verdict.h"

namespace runrun::launcher {

std::string lost_daemon_summary(const std::string& node,
                                const std::vector<std::string>& host_labels,
                                const std::vector<int>& layout) {
  const int host = host_index_of_node(node, host_labels);
  std::string where = "host " + node;
  if (host >= 0 && host < static_cast<int>(layout.size())) {
    int first = 0;
    for (int i = 0; i < host; ++i) first += layout[static_cast<std::size_t>(i)];
    std::vector<int> ranks;
    for (int r = 0; r < layout[static_cast<std::size_t>(host)]; ++r) ranks.push_back(first + r);
    where =
        "host " + host_labels[static_cast<std::size_t>(host)] + " (" + describe_ranks(ranks) + ")";
  }
  return "the network link to " + where +
         " was lost (a network partition, or the host went down): mpirun lost its connection "
         "to Open MPI's daemon there (its TCP keepalive, set from RUNRUN_PEER_TIMEOUT, went "
         "unanswered); no rank caused the failure, and the ranks were stopped. Check the "
         "network between this host and " +
         node;
}

void report_mpirun_crash(OutputRouter& router, bool after_verdict) {
  const std::vector<std::string>& report = router.crash_report();
  if (report.empty()) return;
  if (!after_verdict) {
    router.release_crash_report();
    return;
  }
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/runrun-mpirun-crash-XXXXXX";
  const int fd = mkstemp(path.data());
  std::FILE* file = fd >= 0 ? fdopen(fd, "w") : nullptr;
  bool kept = file != nullptr;
  for (const auto& line : report) {
    if (kept) kept = std::fprintf(file, "%s\n", line.c_str()) >= 0;
  }
  if (file != nullptr && std::fclose(file) != 0) kept = false;
  if (!kept) {
    std::fprintf(stderr,
                 "runrun: mpirun crashed while shutting down after the job had failed "
                 "(its report follows; it is not the cause)\n");
    router.release_crash_report();
    return;
  }
  std::fprintf(stderr,
               "runrun: mpirun crashed while shutting down (%s) after the job had "
               "failed, as Open MPI 4.1's does after losing a daemon; it is not the "
               "cause. Its report is in %s\n",
               crash_signal(report).c_str(), path.c_str());
}

}  // namespace runrun::launcher
