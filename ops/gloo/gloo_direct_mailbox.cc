#include "ops/gloo/gloo_direct_mailbox.h"

#include <algorithm>

namespace runrun::gloo_backend {

void DirectMailbox::post(Guard* guard, const char* op, size_t capacity) {
  const int size = mesh_.size();
  slot_ = mesh_.next_preposted_slot();
  capacity_ = capacity;
  frames_.resize(static_cast<size_t>(size));
  receives_.resize(static_cast<size_t>(size));
  for (int peer = 0; peer < size; ++peer) {
    auto& receive = receives_[static_cast<size_t>(peer)];
    // An abandoned receive is still posted, but no peer sends to its slot, and gloo holds
    // posted buffers by weak pointer: destroying it is safe.
    receive.reset();
    if (peer == mesh_.rank()) continue;
    auto& frame = frames_[static_cast<size_t>(peer)];
    frame.resize(capacity + 1);  // +1: data() is never null
    receive = mesh_.context()->createUnboundBuffer(frame.data(), capacity);
    try {
      receive->recv(peer, slot_);
    } catch (const std::exception& e) {
      if (guard != nullptr) guard->fail(op, peer, e);
      post_failure_ = std::current_exception();
      post_failure_peer_ = peer;
      return;
    }
  }
}

void DirectMailbox::exchange(Guard& guard, const char* op, Guard::Clock::time_point deadline,
                             const void* data, size_t bytes,
                             const std::function<void(int peer, const void* bytes)>& take) {
  guard.check_usable(op);
  const int size = mesh_.size();
  if (size == 1 || bytes == 0) return;  // the same decision on every rank
  if (post_failure_) {  // a pair failed after the last exchange: this one cannot take place
    try {
      std::rethrow_exception(post_failure_);
    } catch (const std::exception& e) {
      guard.fail(op, post_failure_peer_, e);
    }
  }
  if (capacity_ != 0 && bytes <= capacity_) {
    ++exchanges_preposted_;
  } else {
    if (capacity_ != 0) ++posts_abandoned_;
    post(&guard, op, std::max({bytes, initial_capacity_, 2 * capacity_}));
  }
  std::vector<std::unique_ptr<::gloo::transport::UnboundBuffer>> sends;
  sends.reserve(static_cast<size_t>(size));
  for (int peer = 0; peer < size; ++peer) {
    if (peer == mesh_.rank()) continue;
    sends.push_back(mesh_.context()->createUnboundBuffer(const_cast<void*>(data), bytes));
    try {
      sends.back()->send(peer, slot_, 0, bytes);
    } catch (const std::exception& e) {
      guard.fail(op, peer, e);
    }
  }
  for (int peer = 0; peer < size; ++peer) {
    if (peer == mesh_.rank()) continue;
    guard.wait_recv(op, *receives_[static_cast<size_t>(peer)], peer, deadline);
    take(peer, frames_[static_cast<size_t>(peer)].data());
  }
  size_t index = 0;
  for (int peer = 0; peer < size; ++peer) {
    if (peer != mesh_.rank()) guard.wait_send(op, *sends[index++], peer, deadline);
  }
  // The next exchange's receives. A peer gone by now (it left after this exchange: a shutdown)
  // is not this exchange's failure and must not break the mesh: the next exchange, if there is
  // one, reports it (every rank keeps drawing the same slots).
  post(nullptr, op, capacity_);
}

}  // namespace runrun::gloo_backend
