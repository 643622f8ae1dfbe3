// Fuzz target: the decoders of impi/wire.hpp on arbitrary bytes.
//  * PacketHeader::decode: WireError (fewer than 128 bytes, pk_type > 7) or
//    a header that encodes back to exactly the same 128 bytes;
//  * the input read as a host-connection stream the way the IMPI transport
//    frames it (128-byte header, then pk_len payload bytes for DATA and
//    DATASYNC only, nothing for control packets whatever their pk_len);
//  * the input read as a client <-> server command stream (8-byte header,
//    payload), with the names and label lookups a parser prints in its
//    messages, and every command re-encoded by the encode_* functions;
//  * host ids: ipv4_from_host_id / to_string / host_id_from_ipv4.
// Only WireError may leave a decoder; anything else is a crash here.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "impi/wire.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gridmpi::impi;
using gridmpi::fuzz::Bytes;
using gridmpi::fuzz::hex;

namespace {

void packet_header(std::span<const std::byte> in) {
  auto shown = in.first(std::min<std::size_t>(in.size(), PacketHeader::size));
  PacketHeader h;
  try {
    h = PacketHeader::decode(in);
  } catch (const WireError&) {
    std::uint32_t type = in.size() >= 4 ? get_u32(in.data()) : 0;
    FUZZ_CHECK(in.size() < PacketHeader::size || type > 7, "a valid packet header refused: " + hex(shown));
    return;
  }
  FUZZ_CHECK(in.size() >= PacketHeader::size, "a packet header decoded from fewer than 128 bytes");
  std::array<std::byte, PacketHeader::size> again{};
  h.encode(again.data());
  FUZZ_CHECK(std::equal(again.begin(), again.end(), in.begin()), "packet header round trip: " + hex(shown));
  FUZZ_CHECK(PacketHeader::decode(again) == h, "packet header decode(encode(h)) != h");
  FUZZ_CHECK(std::string(packet_type_name(h.type)) != "unknown", "a decoded type without a name");
  (void)to_string(h.src.host);
  (void)to_string(h.dest.host);
}

void packet_stream(std::span<const std::byte> in) {
  while (in.size() >= PacketHeader::size) {
    PacketHeader h;
    try {
      h = PacketHeader::decode(in.first(PacketHeader::size));
    } catch (const WireError&) {
      return;  // the transport ends the connection here
    }
    in = in.subspan(PacketHeader::size);
    (void)counts_for_flow_control(h.type);
    if (!carries_payload(h.type)) continue;
    if (in.size() < h.len) return;
    in = in.subspan(h.len);
  }
}

void command_stream(std::span<const std::byte> in) {
  try {
    (void)CommandHeader::decode(in.first(std::min<std::size_t>(in.size(), 7)));
    FUZZ_CHECK(false, "a command header decoded from fewer than 8 bytes");
  } catch (const WireError&) {
  }
  while (in.size() >= CommandHeader::size) {
    CommandHeader h = CommandHeader::decode(in);
    Bytes again(CommandHeader::size);
    h.encode(again.data());
    FUZZ_CHECK(std::equal(again.begin(), again.end(), in.begin()), "command header round trip");
    std::string name = command_name(h.command);
    FUZZ_CHECK(name.size() == 4 || name.size() == 10, "command name '" + name + "'");
    FUZZ_CHECK(is_known_command(h.command) == (name.size() == 4), "command name and is_known_command disagree");
    in = in.subspan(CommandHeader::size);
    if (in.size() < h.length) return;
    auto payload = in.first(h.length);
    in = in.subspan(h.length);
    if (!is_known_command(h.command)) continue;
    Bytes whole(again);
    whole.insert(whole.end(), payload.begin(), payload.end());
    Bytes encoded;
    switch (static_cast<Command>(h.command)) {
      case Command::auth:
        if (h.length != 4) continue;
        encoded = encode_auth(get_u32(payload.data()));
        break;
      case Command::impi:
        if (h.length != 4) continue;
        encoded = encode_impi(static_cast<std::int32_t>(get_u32(payload.data())));
        break;
      case Command::coll: {
        if (h.length < 4) continue;
        auto label = static_cast<std::int32_t>(get_u32(payload.data()));
        int index = label_index(label);
        std::string name = label_name(label);
        FUZZ_CHECK(index < 0 || name == known_labels()[static_cast<std::size_t>(index)].name, "label name");
        encoded = encode_coll_contribution(label, payload.subspan(4));
        if (h.length >= 8) {
          auto as_result = encode_coll_result(label, get_u32(payload.data() + 4), payload.subspan(8));
          FUZZ_CHECK(as_result == whole, "COLL result round trip");
        }
        if (payload.size() >= 4 + 16) {
          HostId id;
          std::copy_n(payload.begin() + 4, 16, id.begin());
          std::string text = to_string(id);
          if (auto v4 = ipv4_from_host_id(id)) {
            FUZZ_CHECK(text.find('.') != std::string::npos, "an IPv4 id printed without dots");
            HostId back = host_id_from_ipv4(*v4);
            FUZZ_CHECK(ipv4_from_host_id(back) == v4, "host_id_from_ipv4 / ipv4_from_host_id");
          } else {
            FUZZ_CHECK(text.size() == 32, "a non-IPv4 id not printed as 32 hex digits");
          }
        }
        break;
      }
      case Command::done:
        if (h.length != 0) continue;
        encoded = encode_done();
        break;
      case Command::fini:
        if (h.length != 0) continue;
        encoded = encode_fini();
        break;
    }
    FUZZ_CHECK(encoded == whole, "command round trip: " + hex(whole));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  packet_header(in);
  packet_stream(in);
  command_stream(in);
  if (size >= 8) {
    Bytes choice = encode_auth_choice(static_cast<std::int32_t>(get_u32(in.data())));
    FUZZ_CHECK(get_u32(choice.data()) == get_u32(in.data()) && get_u32(choice.data() + 4) == 0, "AUTH choice");
    Bytes key = encode_auth_key(get_u64(in.data()));
    FUZZ_CHECK(std::equal(key.begin(), key.end(), in.begin()), "AUTH key");
  }
  return 0;
}
