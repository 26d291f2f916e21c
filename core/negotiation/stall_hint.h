#pragma once
// Why: a stall is most often one tensor known under two names, e.g. a name built from a
// per-process counter ('dense_1' on the rank that built one more layer). The coordinator's
// table holds both halves: the tensor some ranks wait on, and the one the missing ranks
// submitted instead. This pairs them so the stall warning and error can say so.
// Thread-safety: pure functions over the caller's copy of the table's waiting rows.

#include <chrono>
#include <string>
#include <vector>

#include "core/negotiation/message_table.h"

namespace runrun {

// A sentence to append to the stall message about `stalled` (starting with a space), or ""
// when no waiting tensor was submitted by all of its missing ranks. Names the best match (the
// longest common prefix with `stalled`'s name), how many others there are, and, when the two
// names differ only in their numbers, that a per-process counter is the likely cause.
std::string stall_hint(const MessageTable::Waiting& stalled,
                       const std::vector<MessageTable::Waiting>& waiting);

// The sentence that ends a stall warning: when the stalled ops will fail on every rank (the
// stall shutdown time less `age`, the stall's age now) and how to change that, or that they
// wait for ever when the shutdown time is 0.
std::string stall_deadline_text(std::chrono::seconds shutdown_time,
                                std::chrono::steady_clock::duration age);

// True when `a` and `b` differ, but only in their numbers: runs of digits, each with the '_'
// right before it ("dense/kernel", "dense_1/kernel" and "dense_12/kernel"; "noname.3" and
// "noname.4"), the way names made from a per-process counter differ.
bool names_differ_only_in_numbers(const std::string& a, const std::string& b);

}  // namespace runrun
