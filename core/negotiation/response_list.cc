#include "core/negotiation/response_list.h"

#include <utility>

namespace runrun {

ResponseList::ResponseList(const std::vector<Response>& responses) {
  items_.reserve(responses.size());
  for (const Response& response : responses) items_.push_back(&response);
}

void ResponseList::add_owned(Response response) {
  owned_.push_back(std::move(response));
  items_.push_back(&owned_.back());
}

}  // namespace runrun
