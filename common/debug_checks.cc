#include "common/debug_checks.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

namespace runrun {

void debug_check_failed(const char* file, int line, const char* what, const char* detail) {
  std::fprintf(stderr,
               "runrun: debug check failed at %s:%d: %s (%s); pid %d. A bug in runrun: "
               "please report it\n",
               file, line, what, detail, static_cast<int>(::getpid()));
  std::fflush(stderr);
  std::abort();
}

void owner_thread_violated(const char* file, int line, const char* owner_name,
                           const OwnerThread& owner) {
  std::ostringstream detail;
  detail << "called on thread " << std::this_thread::get_id() << ", but " << owner_name
         << " belongs to thread " << owner.owner()
         << ": the header's threading contract says which thread may call this";
  const std::string text = detail.str();
  debug_check_failed(file, line, "owner-thread contract", text.c_str());
}

}  // namespace runrun
