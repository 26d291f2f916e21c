// The elastic part of the C API (c_api.h, "elastic training"): a thin layer over the process's
// rendezvous::ElasticWorker, which exists only in builds with Gloo (elastic is Gloo only).
#include <string>

#include "common/errors.h"
#include "core/api/c_api_last_error.h"
#include "runrun/build_config.h"
#include "runrun/c_api.h"
#if RUNRUN_HAVE_GLOO
#include "rendezvous/elastic_worker.h"
#endif

namespace {

#if RUNRUN_HAVE_GLOO
runrun::rendezvous::ElasticWorker& worker() {
  auto* worker = runrun::rendezvous::ElasticWorker::of_this_process();
  if (worker == nullptr) {
    throw runrun::InvalidArgumentError(RUNRUN_WHERE,
                                       "this process is not a worker of an elastic job (start it "
                                       "with runrun --gloo --min-np N ...; docs/elastic.md)");
  }
  return *worker;
}
#endif

// Runs `body` and turns an exception into a status and this thread's last error.
template <typename Body>
runrun_status guarded_elastic(Body&& body) {
  runrun::capi::set_last_error("");
  try {
    body();
    return RUNRUN_OK;
  } catch (const runrun::Error& e) {
    runrun::capi::set_last_error(e.what());
    return static_cast<runrun_status>(e.code());
  } catch (const std::exception& e) {
    runrun::capi::set_last_error(e.what());
    return RUNRUN_INTERNAL;
  }
}

}  // namespace

extern "C" int runrun_elastic_enabled(void) {
#if RUNRUN_HAVE_GLOO
  try {
    return runrun::rendezvous::ElasticWorker::of_this_process() != nullptr ? 1 : 0;
  } catch (const std::exception&) {
    return 1;  // RUNRUN_ELASTIC_WORKER is set; the error shows at the first call that uses it
  }
#else
  return 0;
#endif
}

extern "C" runrun_status runrun_elastic_generations(uint64_t* joined, uint64_t* latest) {
  return guarded_elastic([&] {
#if RUNRUN_HAVE_GLOO
    auto& w = worker();
    if (joined != nullptr) *joined = w.joined();
    if (latest != nullptr) *latest = w.latest();
#else
    (void)joined;
    (void)latest;
    throw runrun::UnsupportedError(RUNRUN_WHERE, "elastic training needs a build with Gloo");
#endif
  });
}

extern "C" runrun_status runrun_elastic_report_failure(void) {
  return guarded_elastic([&] {
#if RUNRUN_HAVE_GLOO
    worker().report_failure();
#else
    throw runrun::UnsupportedError(RUNRUN_WHERE, "elastic training needs a build with Gloo");
#endif
  });
}
