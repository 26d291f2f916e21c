#include "ops/gloo/gloo_exchange.h"

#include <exception>
#include <string>

#include "common/errors.h"

namespace runrun::gloo_backend {

PostedExchange::PostedExchange(Mesh& mesh, Guard& guard, const char* op,
                               Guard::Clock::time_point deadline,
                               const std::vector<Transfer>& sends,
                               const std::vector<Transfer>& receives)
    : guard_(guard), op_(op), deadline_(deadline) {
  const uint64_t slot = mesh.next_slot();
  guard.check_usable(op);
  const auto post = [&](const Transfer& transfer, bool is_send) {
    Posted posted{nullptr, transfer.peer};
    if (transfer.bytes > 0) {
      RUNRUN_ENFORCE(transfer.lane < kLanes, InternalError,
                     std::string(op) + ": transfer lane " + std::to_string(transfer.lane) +
                         " is not below " + std::to_string(kLanes) + " (a runrun bug)");
      posted.buffer = mesh.context()->createUnboundBuffer(transfer.data, transfer.bytes);
      try {
        if (is_send) {
          posted.buffer->send(transfer.peer, slot + transfer.lane);
        } else {
          posted.buffer->recv(transfer.peer, slot + transfer.lane);
        }
      } catch (const std::exception& e) {
        guard.fail(op, transfer.peer, e);
      }
    }
    (is_send ? sends_ : receives_).push_back(std::move(posted));
  };
  receives_.reserve(receives.size());
  sends_.reserve(sends.size());
  for (const auto& transfer : receives) post(transfer, false);
  for (const auto& transfer : sends) post(transfer, true);
}

void PostedExchange::wait_receive(size_t index) {
  Posted& receive = receives_.at(index);
  if (receive.done) return;
  receive.done = true;
  if (receive.buffer) guard_.wait_recv(op_, *receive.buffer, receive.peer, deadline_);
}

void PostedExchange::finish() {
  for (size_t i = 0; i < receives_.size(); ++i) wait_receive(i);
  for (auto& send : sends_) {
    if (send.done) continue;
    send.done = true;
    if (send.buffer) guard_.wait_send(op_, *send.buffer, send.peer, deadline_);
  }
}

void exchange(Mesh& mesh, Guard& guard, const char* op, Guard::Clock::time_point deadline,
              const std::vector<Transfer>& sends, const std::vector<Transfer>& receives) {
  PostedExchange(mesh, guard, op, deadline, sends, receives).finish();
}

}  // namespace runrun::gloo_backend
