// Byte images written as hex in the IMPI unit tests: "434f4c4c 00000010"
// (whitespace and '|' separators ignored).  Header-only, for tests/unit.
#pragma once
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gridmpi::test {

inline std::vector<std::byte> hex_bytes(std::string_view text) {
  std::string digits;
  for (char ch : text)
    if (ch != ' ' && ch != '|' && ch != '\n' && ch != '\t') digits += ch;
  REQUIRE(digits.size() % 2 == 0);
  std::vector<std::byte> out;
  for (std::size_t i = 0; i < digits.size(); i += 2)
    out.push_back(static_cast<std::byte>(std::stoul(digits.substr(i, 2), nullptr, 16)));
  return out;
}

}  // namespace gridmpi::test
