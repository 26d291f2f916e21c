#pragma once
// Why: the agreed responses of one negotiation round, in execution order, without copying them.
// Cache hits (nearly every tensor in steady state) point into the response cache, which stays
// unchanged until the next round is negotiated, after this one ran; the coordinator's answers
// and responses changed on their way (device staging) are owned by the list. Copying each cached
// Response (its name and shape on the heap) cost more than the rest of a hit's negotiation.
// Thread-safety: a value of the background thread. Move-only: borrowed elements stay where they
// are and owned ones keep their addresses when the list moves.

#include <cstddef>
#include <deque>
#include <iterator>
#include <vector>

#include "core/negotiation/message.h"

namespace runrun {

class ResponseList {
 public:
  // A forward iterator over the responses (not the pointers): range-for and index loops alike.
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Response;
    using difference_type = std::ptrdiff_t;
    using pointer = const Response*;
    using reference = const Response&;

    Iterator() = default;
    explicit Iterator(const Response* const* at) : at_(at) {}
    reference operator*() const { return **at_; }
    pointer operator->() const { return *at_; }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++at_;
      return before;
    }
    bool operator==(const Iterator& other) const { return at_ == other.at_; }
    bool operator!=(const Iterator& other) const { return at_ != other.at_; }

   private:
    const Response* const* at_ = nullptr;
  };

  ResponseList() = default;
  // Borrows every element of `responses`, which must outlive the list (a vector of responses
  // passes where a list is taken).
  ResponseList(const std::vector<Response>& responses);  // NOLINT(google-explicit-constructor)
  ResponseList(ResponseList&&) = default;
  ResponseList& operator=(ResponseList&&) = default;
  ResponseList(const ResponseList&) = delete;
  ResponseList& operator=(const ResponseList&) = delete;

  void reserve(size_t n) { items_.reserve(n); }
  // Appends `response` by address: it must outlive the list and stay unchanged.
  void add_borrowed(const Response& response) { items_.push_back(&response); }
  // Appends a response the list keeps.
  void add_owned(Response response);

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const Response& operator[](size_t i) const { return *items_[i]; }
  Iterator begin() const { return Iterator(items_.data()); }
  Iterator end() const { return Iterator(items_.data() + items_.size()); }

 private:
  std::vector<const Response*> items_;
  std::deque<Response> owned_;  // a deque: appending never moves the elements items_ points to
};

}  // namespace runrun
