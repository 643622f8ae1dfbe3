#include "rpim/method.hpp"

#include <stdexcept>

namespace gridmpi::rpim {

std::string Method::name() const {
  if (kind == Kind::fork) return "fork";
  return shell.empty() ? "?" : shell.front();
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        current += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
    } else {
      current += c;
      in_word = true;
    }
  }
  if (quote) throw std::invalid_argument("unbalanced quote in '" + text + "'");
  if (in_word) words.push_back(std::move(current));
  return words;
}

Method choose_method(const std::string& rsh_setting, bool host_is_local) {
  std::string setting = rsh_setting;
  while (!setting.empty() && (setting.back() == ' ' || setting.back() == '\t')) setting.pop_back();
  while (!setting.empty() && (setting.front() == ' ' || setting.front() == '\t')) setting.erase(0, 1);
  if (setting == "#" || host_is_local) return Method{Kind::fork, {}};
  Method m{Kind::remote_shell, split_words(setting.empty() ? default_remote_shell : setting)};
  if (m.shell.empty()) m.shell = split_words(default_remote_shell);
  return m;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-+=/.,:@%") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

std::vector<std::string> remote_shell_argv(const Method& method, const std::string& host,
                                           const std::vector<std::string>& remote_argv) {
  std::vector<std::string> argv = method.shell;
  argv.push_back(host);
  // ssh and rsh join their arguments with spaces and hand the result to the
  // remote login shell: pass one pre-quoted string so that arguments with
  // spaces or quotes arrive intact.
  argv.push_back(shell_join(remote_argv));
  return argv;
}

}  // namespace gridmpi::rpim
