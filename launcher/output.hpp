// Line-by-line output forwarding: bytes from a rank's stdout or stderr come
// in any pieces; only whole lines go out, so lines of different ranks never
// mix inside a line.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace gridmpi::launcher {

class LineBuffer {
 public:
  // prefix: put in front of every line ("[3] "), may be empty.
  explicit LineBuffer(std::string prefix, std::size_t max_line = 65536)
      : prefix_(std::move(prefix)), max_line_(max_line) {}

  // Returns the complete lines (with prefixes) now ready to write.  A line
  // longer than max_line is cut and its pieces written as separate lines.
  std::string feed(std::string_view bytes);
  // At end of stream: the unterminated last line, if any, with its prefix;
  // a newline is added when add_newline (several ranks share the terminal).
  std::string finish(bool add_newline);

 private:
  std::string prefix_;
  std::size_t max_line_;
  std::string partial_;
};

}  // namespace gridmpi::launcher
