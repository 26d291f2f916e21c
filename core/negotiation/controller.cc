#include "core/negotiation/controller.h"

#include <algorithm>
#include <sstream>

#include "core/negotiation/stall_hint.h"
#include "core/timeline/timeline_names.h"

namespace runrun {
namespace {

constexpr uint64_t kFlagUncached = 1;
constexpr uint64_t kFlagShutdown = 2;
constexpr uint64_t kFlagJoined = 4;

bool bit(const std::vector<uint64_t>& words, size_t offset, size_t i) {
  return (words[offset + i / 64] >> (i % 64)) & 1U;
}
void set_bit(std::vector<uint64_t>& words, size_t offset, size_t i) {
  words[offset + i / 64] |= uint64_t{1} << (i % 64);
}
void clear_bit(std::vector<uint64_t>& words, size_t offset, size_t i) {
  words[offset + i / 64] &= ~(uint64_t{1} << (i % 64));
}
bool cacheable(OpType op) {
  return op == OpType::kAllreduce || op == OpType::kAllgather || op == OpType::kBroadcast ||
         op == OpType::kAlltoall || op == OpType::kReducescatter;
}

}  // namespace

Controller::Controller(ControlChannel& channel, int rank, int size, const Config& config,
                       Logger logger, Timeline* timeline)
    : channel_(channel),
      rank_(rank),
      size_(size),
      config_(config),
      logger_(std::move(logger)),
      timeline_(timeline),
      cache_(config.cache_capacity),
      table_(size) {
  for (std::chrono::seconds limit : {config.stall_check_time, config.stall_shutdown_time}) {
    if (limit.count() > 0 && (cache_wait_limit_.count() == 0 || limit < cache_wait_limit_)) {
      cache_wait_limit_ = limit;
    }
  }
}

void Controller::add(std::vector<std::unique_ptr<TensorEntry>>& entries) {
  RUNRUN_CHECK_OWNER_THREAD(owner_);
  for (auto& entry : entries) {
    const HashedName name{entry->request.name, entry->name_hash};
    if (timeline_ && timeline_->active()) {
      timeline_->begin(timeline_row_name(entry->request.op, entry->request.name),
                       timeline_negotiate_phase(entry->request.op));
    }
    entry->unsent = true;
    unsent_.push_back(entry.get());
    Pending::node_type node = spare_node(name);
    node.mapped() = std::move(entry);
    Pending::insert_return_type added = pending_.insert(std::move(node));
    if (!added.inserted) {
      // Never (the queue refuses a name in flight): the new entry replaces the old one.
      if (added.position->second->unsent) std::erase(unsent_, added.position->second.get());
      pending_.erase(added.position);
      pending_.insert(std::move(added.node));
    }
  }
  entries.clear();
}

Controller::Pending::node_type Controller::spare_node(const HashedName& name) {
  if (spare_nodes_.empty()) {  // node handles come only out of a container
    Pending scratch;
    return scratch.extract(scratch.emplace(name, nullptr).first);
  }
  Pending::node_type node = std::move(spare_nodes_.back());
  spare_nodes_.pop_back();
  node.key() = name;
  return node;
}

void Controller::drop_sent() {
  std::erase_if(unsent_, [](const TensorEntry* entry) { return !entry->unsent; });
}

size_t Controller::pending_names(std::vector<std::string>& names) const {
  if (names.size() < pending_.size()) names.resize(pending_.size());
  size_t i = 0;
  for (const auto& [name, entry] : pending_) names[i++].assign(name.name);
  return i;
}

// A group takes one path on every rank: once a member goes to the coordinator (its slot went
// stale), its cached siblings follow, else they would wait on the cache path for ranks that
// sent the whole group to the coordinator.
void Controller::keep_groups_together(std::vector<Hit>& hits,
                                      std::vector<TensorEntry*>& uncached) const {
  std::vector<std::string_view> coordinated;
  for (const TensorEntry* entry : uncached) {
    if (!entry->request.group.empty()) coordinated.push_back(entry->request.group);
  }
  if (coordinated.empty()) return;
  std::sort(coordinated.begin(), coordinated.end());
  for (Hit& hit : hits) {
    if (hit.entry == nullptr) continue;
    const std::string& group = hit.entry->request.group;
    if (!group.empty() &&
        std::binary_search(coordinated.begin(), coordinated.end(), std::string_view(group))) {
      uncached.push_back(hit.entry);
      hit.entry = nullptr;
    }
  }
}

bool Controller::joined() const {
  for (const auto& [name, entry] : pending_) {
    if (entry->request.op == OpType::kJoin) return true;
  }
  return false;
}

// Sorts this rank's unsent entries into cache hits (bit set) and uncached ones (stale slots
// flagged). A group goes to the coordinator whole unless every member is a hit; caches are
// identical on every rank, so every rank decides the same for the group.
void Controller::classify(std::vector<uint64_t>& bits, size_t words) {
  hits_.clear();
  uncached_.clear();
  std::map<std::string_view, bool> group_all_hits;  // empty unless grouped ops are pending
  struct Found {
    TensorEntry* entry;
    ResponseCache::Lookup lookup;
  };
  std::vector<Found> found;
  found.reserve(unsent_.size());
  const bool limited = cache_wait_limit_.count() > 0;
  const auto waited_since = limited ? std::chrono::steady_clock::now() - cache_wait_limit_
                                    : std::chrono::steady_clock::time_point{};
  for (TensorEntry* entry : unsent_) {
    const Request& request = entry->request;
    ResponseCache::Lookup lookup = cache_.lookup(request, entry->name_hash);
    if (lookup.match == ResponseCache::Match::kHit && limited &&
        entry->enqueued_at <= waited_since) {
      lookup.match = ResponseCache::Match::kStale;  // to the coordinator, on every rank
    }
    bool hit = lookup.match == ResponseCache::Match::kHit && cacheable(request.op);
    if (!request.group.empty()) {
      auto [it, fresh] = group_all_hits.emplace(request.group, hit);
      if (!fresh) it->second = it->second && hit;
    }
    found.push_back({entry, lookup});
  }
  for (const auto& [entry, lookup] : found) {
    const Request& request = entry->request;
    bool hit = lookup.match == ResponseCache::Match::kHit && cacheable(request.op) &&
               (request.group.empty() || group_all_hits[request.group]);
    if (hit) {
      set_bit(bits, 0, lookup.slot);
      hits_.push_back({lookup.slot, entry});
    } else {
      if (lookup.match == ResponseCache::Match::kStale) clear_bit(bits, words, lookup.slot);
      uncached_.push_back(entry);
    }
  }
  // Ready cache hits run in slot order on every rank.
  std::sort(hits_.begin(), hits_.end(), [](const Hit& a, const Hit& b) { return a.slot < b.slot; });
}

Controller::Round Controller::negotiate(bool shutting_down) {
  RUNRUN_CHECK_OWNER_THREAD(owner_);
  ++negotiation_rounds_;
  // The last round's answers enter the cache only now: that round's list borrowed cache
  // entries, which a put may move or evict.
  for (const auto& [response, request] : to_cache_) cache_.put(response, request);
  to_cache_.clear();
  const size_t slots = cache_.num_slots();
  const size_t words = (slots + 63) / 64;
  // [0, words): ready bits (AND). [words, 2 words): stale bits, inverted. [2 words]: flags,
  // inverted.
  std::vector<uint64_t> bits(2 * words + 1, 0);
  std::fill(bits.begin() + static_cast<std::ptrdiff_t>(words), bits.end(), ~uint64_t{0});

  classify(bits, words);
  // The coordinator also asks for a coordinator phase when it is time to inspect stalls: tensors
  // that some ranks sent and others never will would otherwise sit in its table unseen.
  if (!uncached_.empty() || stall_inspection_due()) bits[2 * words] &= ~kFlagUncached;
  if (shutting_down) bits[2 * words] &= ~kFlagShutdown;
  if (joined()) bits[2 * words] &= ~kFlagJoined;

  channel_.round_allreduce_and(bits);

  Round round;
  round.ready.reserve(hits_.size());
  if (!(bits[2 * words] & kFlagShutdown)) {
    round.peer_shutdown = true;
    round.shutting_down = ranks_shutting_down(shutting_down);
    return round;
  }
  const bool any_stale = drop_stale_slots(bits, words, slots);
  // While any rank has joined, every op goes through the coordinator, which knows who joined.
  bool any_joined = !(bits[2 * words] & kFlagJoined);
  if (any_joined) {
    for (Hit& hit : hits_) {
      if (hit.entry != nullptr) uncached_.push_back(hit.entry);
      hit.entry = nullptr;
    }
  }
  keep_groups_together(hits_, uncached_);
  take_agreed_hits(bits, round.ready);
  bool any_uncached = !(bits[2 * words] & kFlagUncached);
  if (any_uncached || any_stale || any_joined) {
    for (Response& answer : coordinate(uncached_, round.stall_shutdown)) {
      round.ready.add_owned(std::move(answer));
    }
  }
  return round;
}

std::vector<int> Controller::ranks_shutting_down(bool shutting_down) {
  // Every rank of the set saw the flag in this round, so every one takes part in this last
  // exchange too: which ranks are shutting down (bits inverted, so AND gives OR), named in
  // the other ranks' error.
  std::vector<uint64_t> who((static_cast<size_t>(size_) + 63) / 64, ~uint64_t{0});
  if (shutting_down) clear_bit(who, 0, static_cast<size_t>(rank_));
  channel_.allreduce_and(who);
  std::vector<int> ranks;
  for (int r = 0; r < size_; ++r) {
    if (!bit(who, 0, static_cast<size_t>(r))) ranks.push_back(r);
  }
  return ranks;
}

bool Controller::drop_stale_slots(const std::vector<uint64_t>& bits, size_t words, size_t slots) {
  bool any_stale = false;
  for (size_t slot = 0; slot < slots; ++slot) {
    if (bit(bits, words, slot)) continue;  // not stale anywhere
    any_stale = true;
    cache_.erase(slot);
    auto it = std::lower_bound(hits_.begin(), hits_.end(), slot,
                               [](const Hit& hit, size_t s) { return hit.slot < s; });
    if (it != hits_.end() && it->slot == slot && it->entry != nullptr) {
      uncached_.push_back(it->entry);
      it->entry = nullptr;
    }
  }
  return any_stale;
}

void Controller::take_agreed_hits(const std::vector<uint64_t>& bits, ResponseList& ready) {
  bool agreed = false;
  for (const Hit& hit : hits_) {
    if (hit.entry == nullptr || !bit(bits, 0, hit.slot)) continue;
    ready.add_borrowed(cache_.response(hit.slot));
    cache_.touch(hit.slot);
    ++cache_hits_;
    hit.entry->unsent = false;
    agreed = true;
  }
  if (agreed) drop_sent();
}

std::vector<Response> Controller::coordinate(const std::vector<TensorEntry*>& uncached,
                                             std::string& stall_shutdown) {
  ++coordinator_rounds_;
  std::vector<Request> requests;
  requests.reserve(uncached.size());
  auto now = std::chrono::steady_clock::now();
  for (TensorEntry* entry : uncached) {
    requests.push_back(entry->request);
    requests.back().waited_us =
        std::chrono::duration_cast<std::chrono::microseconds>(now - entry->enqueued_at).count();
    entry->unsent = false;
  }
  if (!uncached.empty()) drop_sent();
  std::vector<std::string> gathered = channel_.gather(encode_requests(requests), 0);
  std::string answer;
  if (rank_ == 0) answer = coordinator_answer(gathered);
  channel_.broadcast(answer, 0);
  std::vector<Response> responses = decode_responses(answer);
  std::erase_if(responses, [&](const Response& r) {
    if (r.op == OpType::kStallShutdown) {
      stall_shutdown = r.error;
      return true;
    }
    if (r.op != OpType::kNotice) return false;
    logger_->warn("{}", r.error);  // the coordinator's notices are logged on every rank
    return true;
  });
  for (const Response& response : responses) {
    auto it = pending_.find(response.name);
    if (response.ok() && cacheable(response.op) && response.joined_ranks.empty() &&
        it != pending_.end()) {
      to_cache_.emplace_back(response, it->second->request);
    }
  }
  return responses;
}

bool Controller::stall_inspection_due() const {
  if (rank_ != 0) return false;
  if (config_.stall_check_time.count() == 0 && config_.stall_shutdown_time.count() == 0) {
    return false;
  }
  return std::chrono::steady_clock::now() - last_stall_inspection_ >= std::chrono::seconds(1) &&
         !table_.waiting().empty();
}

std::string Controller::coordinator_answer(const std::vector<std::string>& gathered) {
  table_.begin_round();
  for (size_t rank = 0; rank < gathered.size(); ++rank) {
    for (Request& request : decode_requests(gathered[rank])) {
      table_.add(static_cast<int>(rank), std::move(request));
    }
  }
  std::vector<Response> responses = table_.take_completed();
  inspect_stalls(responses);
  return encode_responses(responses);
}

// Coordinator only: warns about tensors some ranks submitted long ago and others never did, and
// fails them on every rank once RUNRUN_STALL_SHUTDOWN_TIME passed.
void Controller::inspect_stalls(std::vector<Response>& responses) {
  if (config_.stall_check_time.count() == 0 && config_.stall_shutdown_time.count() == 0) return;
  last_stall_inspection_ = std::chrono::steady_clock::now();
  const std::vector<MessageTable::Waiting> all_waiting = table_.waiting();
  for (const MessageTable::Waiting& waiting : all_waiting) {
    std::ostringstream missing;
    for (size_t i = 0; i < waiting.missing_ranks.size(); ++i) {
      missing << (i ? ", " : "") << waiting.missing_ranks[i];
    }
    if (config_.stall_shutdown_time.count() > 0 && waiting.age >= config_.stall_shutdown_time) {
      std::string message = "tensor '" + waiting.name + "' stalled: ranks [" + missing.str() +
                            "] did not submit it within RUNRUN_STALL_SHUTDOWN_TIME=" +
                            std::to_string(config_.stall_shutdown_time.count()) +
                            " s while the others did." + stall_hint(waiting, all_waiting) +
                            " Make every rank enqueue the same tensors (see "
                            "docs/troubleshooting.md).";
      for (Response& failed : table_.fail(waiting.name, ErrorCode::kTimeout, message)) {
        responses.push_back(std::move(failed));
      }
      // As in Horovod, a stall past the shutdown time shuts the runtime down on every rank
      // that takes part in this round: the stalled ranks cannot be waited for at exit either.
      Response shutdown;
      shutdown.op = OpType::kStallShutdown;
      shutdown.name = "__runrun.stall_shutdown";
      shutdown.error = "runrun shut down after a stall: " + message;
      responses.push_back(std::move(shutdown));
      continue;
    }
    if (config_.stall_check_time.count() > 0 && waiting.age >= config_.stall_check_time &&
        !stall_warned_.count(waiting.name)) {
      stall_warned_[waiting.name] = std::chrono::steady_clock::now();
      Response notice;
      notice.op = OpType::kNotice;
      notice.name = "__runrun.notice";
      notice.error =
          "stall: tensor '" + waiting.name + "' was submitted by some ranks " +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(waiting.age).count()) +
          " s ago; ranks [" + missing.str() + "] have not submitted it." +
          stall_hint(waiting, all_waiting) +
          " One rank may be waiting on a different tensor or stuck in its own code (see "
          "docs/troubleshooting.md). " +
          stall_deadline_text(config_.stall_shutdown_time, waiting.age);
      responses.push_back(std::move(notice));
    }
  }
}

std::unique_ptr<TensorEntry> Controller::take(const std::string& name) {
  RUNRUN_CHECK_OWNER_THREAD(owner_);
  auto it = pending_.find(std::string_view(name));
  if (it == pending_.end()) return nullptr;
  Pending::node_type node = pending_.extract(it);
  std::unique_ptr<TensorEntry> entry = std::move(node.mapped());
  if (timeline_ && timeline_->active()) {
    timeline_->end(timeline_row_name(entry->request.op, name),
                   timeline_negotiate_phase(entry->request.op));
  }
  if (spare_nodes_.size() < kMaxSpareNodes) spare_nodes_.push_back(std::move(node));
  if (!stall_warned_.empty()) {
    if (auto warned = stall_warned_.find(name); warned != stall_warned_.end()) {
      stall_warned_.erase(warned);
    }
  }
  // Agreed entries have left unsent_ already; one failed by the coordinator (a stall) while it
  // still waited on the cache path has not.
  if (entry->unsent) {
    entry->unsent = false;
    std::erase(unsent_, entry.get());
  }
  return entry;
}

std::vector<std::unique_ptr<TensorEntry>> Controller::take_all() {
  std::vector<std::unique_ptr<TensorEntry>> all;
  for (auto& [name, entry] : pending_) all.push_back(std::move(entry));
  pending_.clear();
  unsent_.clear();
  hits_.clear();
  uncached_.clear();
  return all;
}

}  // namespace runrun
