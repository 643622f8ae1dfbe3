// Host-file parsing.  Accepted line forms (whitespace-separated):
//   node1          node1 4          node1:4          node1 slots=4
//   10.0.0.7:2     fe80::1 (IPv6 without slots)      [fe80::1]:2
// '#' starts a comment anywhere on a line.
#include "conf/hostfile.hpp"

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "conf/registry.hpp"

namespace gridmpi::conf {

namespace {

const char* const accepted_forms = "expected \"HOST\", \"HOST N\", \"HOST:N\" or \"HOST slots=N\"";

struct LineContext {
  const std::string& path;
  int line;
  std::string_view text;  // the line without its comment, for messages
};

[[noreturn]] void fail(const LineContext& where, const std::string& problem) {
  throw ConfigError("host file " + where.path + ":" + std::to_string(where.line) + ": " + problem + " in \"" +
                    std::string(where.text) + "\"");
}

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t position = 0;
  while (position < text.size()) {
    while (position < text.size() && (text[position] == ' ' || text[position] == '\t')) ++position;
    const std::size_t start = position;
    while (position < text.size() && text[position] != ' ' && text[position] != '\t') ++position;
    if (position > start) words.push_back(text.substr(start, position - start));
  }
  return words;
}

int parse_slots(const LineContext& where, std::string_view text) {
  long long slots = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), slots);
  if (text.empty() || end != text.data() + text.size() || error == std::errc::invalid_argument)
    fail(where, "bad slot count \"" + std::string(text) + "\" (expected a positive integer)");
  if (error == std::errc::result_out_of_range || slots > INT_MAX)
    fail(where, "slot count " + std::string(text) + " is too large");
  if (slots <= 0) fail(where, "slot count " + std::string(text) + " is not positive");
  return static_cast<int>(slots);
}

bool valid_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_';
}

void check_host(const LineContext& where, std::string_view host, bool ipv6) {
  if (host.empty()) fail(where, "missing host name");
  for (char c : host) {
    if (valid_host_char(c) || (ipv6 && (c == ':' || c == '%'))) continue;
    fail(where, "bad host name \"" + std::string(host) + "\"");
  }
}

// Splits "host", "host:N", "[v6]", "[v6]:N" or a bare IPv6 address.
HostEntry parse_host_word(const LineContext& where, std::string_view word, bool& has_slots) {
  HostEntry entry;
  entry.line = where.line;
  has_slots = false;
  if (word.front() == '[') {
    const auto close = word.find(']');
    if (close == std::string_view::npos) fail(where, "missing \"]\" after the IPv6 address");
    check_host(where, word.substr(1, close - 1), true);
    entry.host = std::string(word.substr(1, close - 1));
    const std::string_view rest = word.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') fail(where, "unexpected \"" + std::string(rest) + "\" after the host; " + accepted_forms);
      entry.slots = parse_slots(where, rest.substr(1));
      has_slots = true;
    }
    return entry;
  }
  const auto first_colon = word.find(':');
  if (first_colon != std::string_view::npos && word.find(':', first_colon + 1) != std::string_view::npos) {
    check_host(where, word, true);  // several colons: an IPv6 address, no slot count
    entry.host = std::string(word);
    return entry;
  }
  if (first_colon != std::string_view::npos) {
    check_host(where, word.substr(0, first_colon), false);
    entry.host = std::string(word.substr(0, first_colon));
    entry.slots = parse_slots(where, word.substr(first_colon + 1));
    has_slots = true;
    return entry;
  }
  check_host(where, word, false);
  entry.host = std::string(word);
  return entry;
}

}  // namespace

std::vector<HostEntry> parse_hostfile_text(const std::string& text, const std::string& path_for_messages) {
  std::vector<HostEntry> hosts;
  std::istringstream stream(text);
  std::string raw;
  int line_number = 0;
  while (std::getline(stream, raw)) {
    ++line_number;
    std::string_view line(raw);
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty()) continue;
    const LineContext where{path_for_messages, line_number, line};
    const std::vector<std::string_view> words = split_words(line);
    bool has_slots = false;
    HostEntry entry = parse_host_word(where, words[0], has_slots);
    if (words.size() >= 2) {
      if (has_slots)
        fail(where, "unexpected \"" + std::string(words[1]) + "\" after the slot count; " + accepted_forms);
      std::string_view count = words[1];
      if (count.starts_with("slots=")) {
        count.remove_prefix(6);
      } else if (count.find('=') != std::string_view::npos ||
                 (!count.empty() && !(count.front() >= '0' && count.front() <= '9') && count.front() != '-' &&
                  count.front() != '+')) {
        fail(where, "unexpected \"" + std::string(words[1]) + "\" after the host; " + accepted_forms);
      }
      entry.slots = parse_slots(where, count);
    }
    if (words.size() >= 3)
      fail(where, "unexpected \"" + std::string(words[2]) + "\" after the slot count; " + accepted_forms);
    hosts.push_back(std::move(entry));
  }
  if (hosts.empty()) throw ConfigError("host file " + path_for_messages + " lists no hosts");
  return hosts;
}

std::vector<HostEntry> parse_hostfile(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    const int error = errno;
    throw ConfigError("cannot read host file " + path + ": " + std::strerror(error));
  }
  std::ostringstream contents;
  contents << stream.rdbuf();
  if (stream.bad()) throw ConfigError("cannot read host file " + path + ": read error");
  return parse_hostfile_text(contents.str(), path);
}

}  // namespace gridmpi::conf
