#include "launcher/output.hpp"

namespace gridmpi::launcher {

std::string LineBuffer::feed(std::string_view bytes) {
  std::string out;
  while (!bytes.empty()) {
    auto newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      partial_.append(bytes);
      bytes = {};
    } else {
      partial_.append(bytes.substr(0, newline + 1));
      bytes.remove_prefix(newline + 1);
      out += prefix_;
      out += partial_;
      partial_.clear();
    }
    while (partial_.size() >= max_line_) {
      out += prefix_;
      out.append(partial_, 0, max_line_);
      out += '\n';
      partial_.erase(0, max_line_);
    }
  }
  return out;
}

std::string LineBuffer::finish(bool add_newline) {
  if (partial_.empty()) return {};
  std::string out = prefix_ + partial_;
  partial_.clear();
  if (add_newline) out += '\n';
  return out;
}

}  // namespace gridmpi::launcher
