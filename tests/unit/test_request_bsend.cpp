// The accounting of MPI_Buffer_attach's buffer (request/bsend_buffer.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "base/error.hpp"
#include "request/bsend_buffer.hpp"

using gridmpi::request::BsendBuffer;

TEST_CASE("a buffer sized as the standard computes it holds exactly those messages", "[bsend]") {
  // Three 1-byte messages need 3 * (1 + MPI_BSEND_OVERHEAD) bytes, no more.
  std::vector<std::byte> memory(3 * (1 + MPI_BSEND_OVERHEAD));
  BsendBuffer b;
  b.attach(memory.data(), memory.size());
  auto m1 = b.allocate(1), m2 = b.allocate(1), m3 = b.allocate(1);
  REQUIRE(m1);
  REQUIRE(m2);
  REQUIRE(m3);
  CHECK_FALSE(b.allocate(0));  // even an empty message costs the overhead
  // Blocks are aligned and inside the buffer, and do not overlap.
  for (auto* m : {&*m1, &*m2, &*m3}) {
    CHECK(reinterpret_cast<std::uintptr_t>(m->data.data()) % 16 == 0);
    CHECK(m->data.data() >= memory.data());
    CHECK(m->data.data() + m->data.size() <= memory.data() + memory.size());
  }
  CHECK(m1->data.data() + 1 <= m2->data.data());
  CHECK(m2->data.data() + 1 <= m3->data.data());
  b.release(m2->offset);
  CHECK(b.live_blocks() == 2);
  auto again = b.allocate(1);  // the freed gap in the middle is reused
  REQUIRE(again);
  CHECK(again->offset == m2->offset);
}

TEST_CASE("a message larger than the free space does not fit", "[bsend]") {
  std::vector<std::byte> memory(1000);
  BsendBuffer b;
  b.attach(memory.data(), memory.size());
  CHECK_FALSE(b.allocate(1000 - MPI_BSEND_OVERHEAD + 1));
  auto all = b.allocate(1000 - MPI_BSEND_OVERHEAD);
  REQUIRE(all);
  CHECK_FALSE(b.allocate(0));
  b.release(all->offset);
  CHECK(b.empty());
}

TEST_CASE("attaching twice is MPI_ERR_BUFFER; detach returns what was attached", "[bsend]") {
  std::vector<std::byte> memory(256);
  BsendBuffer b;
  b.attach(memory.data(), memory.size());
  try {
    b.attach(memory.data(), memory.size());
    FAIL("second attach accepted");
  } catch (const gridmpi::MpiError& e) {
    CHECK(e.error_class() == MPI_ERR_BUFFER);
  }
  auto [address, size] = b.detach();
  CHECK(address == memory.data());
  CHECK(size == 256);
  CHECK_FALSE(b.attached());
  CHECK_FALSE(b.allocate(1));
}
