#include "core/timeline/timeline_names.h"

#include <cctype>

namespace runrun {
namespace {

std::string upper(std::string_view text) {
  std::string s(text);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string timeline_row_name(OpType op, std::string_view tensor) {
  std::string_view prefix = op_type_name(op);
  if (tensor.size() > prefix.size() && tensor.substr(0, prefix.size()) == prefix &&
      tensor[prefix.size()] == '.') {
    return std::string(tensor);
  }
  std::string row;
  row.reserve(prefix.size() + 1 + tensor.size());
  row.append(prefix).push_back('.');
  row.append(tensor);
  return row;
}

std::string timeline_op_phase(OpType op) { return upper(op_type_name(op)); }

std::string timeline_negotiate_phase(OpType op) { return "NEGOTIATE_" + timeline_op_phase(op); }

std::string timeline_activity(std::string_view backend, OpType op) {
  return upper(backend) + "_" + timeline_op_phase(op);
}

}  // namespace runrun
