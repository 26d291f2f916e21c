#include "ops/gloo/gloo_exchange.h"

#include <exception>
#include <memory>

#include <gloo/transport/unbound_buffer.h>

namespace runrun::gloo_backend {
namespace {

struct Posted {
  std::unique_ptr<::gloo::transport::UnboundBuffer> buffer;
  int peer;
};

}  // namespace

void exchange(Mesh& mesh, Guard& guard, const char* op, Guard::Clock::time_point deadline,
              const std::vector<Transfer>& sends, const std::vector<Transfer>& receives) {
  const uint64_t slot = mesh.next_slot();
  guard.check_usable(op);
  std::vector<Posted> posted_receives;
  std::vector<Posted> posted_sends;
  const auto post = [&](const Transfer& transfer, bool is_send) {
    if (transfer.bytes == 0) return;
    auto buffer = mesh.context()->createUnboundBuffer(transfer.data, transfer.bytes);
    try {
      if (is_send) {
        buffer->send(transfer.peer, slot);
      } else {
        buffer->recv(transfer.peer, slot);
      }
    } catch (const std::exception& e) {
      guard.fail(op, transfer.peer, e);
    }
    (is_send ? posted_sends : posted_receives).push_back({std::move(buffer), transfer.peer});
  };
  for (const auto& transfer : receives) post(transfer, false);
  for (const auto& transfer : sends) post(transfer, true);
  for (auto& receive : posted_receives) guard.wait_recv(op, *receive.buffer, receive.peer, deadline);
  for (auto& send : posted_sends) guard.wait_send(op, *send.buffer, send.peer, deadline);
}

}  // namespace runrun::gloo_backend
