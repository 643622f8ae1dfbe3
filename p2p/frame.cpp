#include "p2p/frame.hpp"

#include <fmt/format.h>

#include "base/error.hpp"

namespace gridmpi::p2p::frame {

void bad_frame_header(std::span<const std::byte> header) {
  if (header.size() < 4) throw MpiError(MPI_ERR_INTERN, fmt::format("frame header of {} bytes", header.size()));
  throw MpiError(MPI_ERR_INTERN, fmt::format("unknown frame kind {}", static_cast<std::uint8_t>(header[0])));
}

std::string kind_name(Kind kind) {
  switch (kind) {
    case Kind::eager: return "eager";
    case Kind::sync_eager: return "sync-eager";
    case Kind::rts: return "request-to-send";
    case Kind::cts: return "clear-to-send";
    case Kind::data: return "data";
    case Kind::sync_ack: return "sync-ack";
    case Kind::cancel_request: return "cancel-request";
    case Kind::cancel_reply: return "cancel-reply";
    case Kind::credit: return "credit";
  }
  return fmt::format("kind {}", static_cast<int>(kind));
}

void header_buffer_too_small(std::size_t have, std::size_t need) {
  throw MpiError(MPI_ERR_INTERN, fmt::format("header buffer of {} bytes, need {}", have, need));
}

void short_header(Kind kind, std::size_t have, std::size_t need) {
  throw MpiError(MPI_ERR_INTERN, fmt::format("{} header of {} bytes, expected {}", kind_name(kind), have, need));
}

void bad_cancelled(std::uint32_t value) {
  throw MpiError(MPI_ERR_INTERN, fmt::format("cancel-reply header with cancelled = {} (0 or 1 expected)", value));
}

}  // namespace gridmpi::p2p::frame
