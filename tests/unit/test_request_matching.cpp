// MPI matching rules on the queues alone (request/matching.hpp).
#include <catch2/catch.hpp>

#include "request/matching.hpp"

using namespace gridmpi::request;

namespace {

std::unique_ptr<PointRequest> receive(std::uint32_t context, int source, int tag) {
  auto r = std::make_unique<PointRequest>();
  r->role = PointRole::recv;
  r->context = context;
  r->peer = source;
  r->tag = tag;
  return r;
}

std::unique_ptr<UnexpectedMessage> message(std::uint32_t context, int source, int tag, std::uint64_t id) {
  auto m = std::make_unique<UnexpectedMessage>();
  m->envelope = {context, source, tag};
  m->sender_id = id;
  return m;
}

}  // namespace

TEST_CASE("an arriving message takes the earliest-posted matching receive", "[matching]") {
  MatchQueues q;
  auto specific_later = receive(1, 3, 5);
  auto wildcard_first = receive(1, MPI_ANY_SOURCE, MPI_ANY_TAG);
  q.post(wildcard_first.get());
  q.post(specific_later.get());
  CHECK(q.take_posted({1, 3, 5}) == wildcard_first.get());
  CHECK(q.take_posted({1, 3, 5}) == specific_later.get());
  CHECK(q.take_posted({1, 3, 5}) == nullptr);
}

TEST_CASE("receives match on context, source and tag", "[matching]") {
  MatchQueues q;
  auto by_tag = receive(1, MPI_ANY_SOURCE, 9);
  auto by_source = receive(1, 2, MPI_ANY_TAG);
  q.post(by_tag.get());
  q.post(by_source.get());
  CHECK(q.take_posted({2, 2, 9}) == nullptr);  // other context: nothing
  CHECK(q.take_posted({1, 4, 8}) == nullptr);  // neither source 2 nor tag 9
  CHECK(q.take_posted({1, 2, 8}) == by_source.get());
  CHECK(q.take_posted({1, 7, 9}) == by_tag.get());
  CHECK(q.posted_count() == 0);
}

TEST_CASE("a new receive takes the earliest-arrived matching message", "[matching]") {
  MatchQueues q;
  q.add_unexpected(message(1, 0, 7, 100));
  q.add_unexpected(message(1, 1, 7, 101));
  q.add_unexpected(message(1, 0, 8, 102));
  q.add_unexpected(message(1, 0, 7, 103));
  CHECK(q.find_unexpected(1, 0, 8)->sender_id == 102);
  CHECK(q.take_unexpected(1, 0, MPI_ANY_TAG)->sender_id == 100);
  CHECK(q.take_unexpected(1, MPI_ANY_SOURCE, 7)->sender_id == 101);
  CHECK(q.take_unexpected(1, 0, 7)->sender_id == 103);
  CHECK(q.take_unexpected(1, 0, 7) == nullptr);
  CHECK(q.take_unexpected(2, MPI_ANY_SOURCE, MPI_ANY_TAG) == nullptr);
  CHECK(q.unexpected_count() == 1);
}

TEST_CASE("a cancelled receive leaves the queue and is not matched", "[matching]") {
  MatchQueues q;
  auto a = receive(1, MPI_ANY_SOURCE, 1);
  auto b = receive(1, MPI_ANY_SOURCE, 1);
  q.post(a.get());
  q.post(b.get());
  CHECK(q.unpost(a.get()));
  CHECK_FALSE(q.unpost(a.get()));
  CHECK(q.take_posted({1, 0, 1}) == b.get());
}

TEST_CASE("wildcards match any source and any valid tag, specific values only themselves", "[matching]") {
  CHECK(envelope_matches(MPI_ANY_SOURCE, MPI_ANY_TAG, {1, 0, 0}));
  CHECK(envelope_matches(MPI_ANY_SOURCE, MPI_ANY_TAG, {1, 0, 0x7fffffff}));
  CHECK_FALSE(envelope_matches(3, MPI_ANY_TAG, {1, 2, 0}));
}

TEST_CASE("a cancelled send's message is found by its sender and id only", "[matching]") {
  MatchQueues q;
  auto from = [](std::unique_ptr<UnexpectedMessage> m, int world, bool complete) {
    m->peer_world = world;
    m->data_complete = complete;
    return m;
  };
  q.add_unexpected(from(message(1, 0, 7, 100), 4, true));
  q.add_unexpected(from(message(1, 0, 7, 101), 4, true));
  q.add_unexpected(from(message(1, 0, 7, 100), 5, true));   // same id, another sender
  q.add_unexpected(from(message(1, 0, 7, 102), 4, false));  // payload still arriving
  CHECK(q.take_unexpected_by_sender(2, 4, 100) == nullptr);  // other context
  CHECK(q.take_unexpected_by_sender(1, 4, 102) == nullptr);
  auto m = q.take_unexpected_by_sender(1, 5, 100);
  REQUIRE(m != nullptr);
  CHECK(m->peer_world == 5);
  CHECK(q.take_unexpected_by_sender(1, 5, 100) == nullptr);  // gone
  CHECK(q.unexpected_count() == 3);
  CHECK(q.take_unexpected(1, 0, 7)->sender_id == 100);  // the others keep their order
  CHECK(q.take_unexpected(1, 0, 7)->sender_id == 101);
}
