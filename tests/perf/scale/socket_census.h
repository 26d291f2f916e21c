#pragma once
// Why: the start-up bench (startup_bench.sh) reports how many sockets a rank holds after
// runrun_init; this counts them from /proc for the calling process, split by kind, so the count
// is what the kernel holds, not what the runtime believes it opened.
// Threading contract: any thread; it reads /proc only (a snapshot, racing with sockets opened or
// closed meanwhile).

namespace runrun::perf {

struct SocketCensus {
  int tcp_established = 0;  // connected TCP sockets (IPv4 and IPv6)
  int tcp_listening = 0;    // listening TCP sockets
  int tcp_other = 0;        // TCP sockets in any other state (connecting, closing)
  int other = 0;            // every other socket (Unix, UDP, netlink)
};

// Sockets among this process's open descriptors (/proc/self/fd), classified through
// /proc/self/net/tcp and tcp6 by inode.
SocketCensus count_own_sockets();

}  // namespace runrun::perf
