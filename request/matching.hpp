// Matching: per context, the posted-receive queue (in posting order) and the
// unexpected-message queue (in arrival order).  Socket-free; tested in
// tests/unit/test_request_matching.cpp.
//
// MPI's ordering rules fall out of the two orders: an arriving message takes
// the earliest-posted receive that matches it (so a wildcard receive posted
// before a specific one wins), and a new receive takes the earliest-arrived
// message that matches it.  Frames from one peer arrive in order (a
// transport guarantee), which gives non-overtaking per pair.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>

#include "request/request_types.hpp"

namespace gridmpi::request {

inline bool envelope_matches(int want_source, int want_tag, const frame::Envelope& env) noexcept {
  return (want_source == MPI_ANY_SOURCE || want_source == env.source) &&
         (want_tag == MPI_ANY_TAG || want_tag == env.tag);
}

class MatchQueues {
 public:
  MatchQueues() = default;
  MatchQueues(const MatchQueues&) = delete;  // the cached pointer
  MatchQueues& operator=(const MatchQueues&) = delete;
  // Appends to the posted queue of r->context (r->tag, r->peer are the wanted tag and comm rank).
  void post(PointRequest* r);
  // Removes a posted receive (cancel); false when it is not posted any more.
  bool unpost(PointRequest* r);
  // The earliest posted receive matching env, removed from the queue; nullptr if none.
  PointRequest* take_posted(const frame::Envelope& env);

  void add_unexpected(std::unique_ptr<UnexpectedMessage> m);
  // The earliest unexpected message matching (source, tag) in context, removed; null if none.
  std::unique_ptr<UnexpectedMessage> take_unexpected(std::uint32_t context, int source, int tag);
  // The unexpected message of context that sender_world sent as sender_id,
  // removed (MPI_Cancel of that send); null when it is not there any more (a
  // receive or a matched probe took it) or its payload is still arriving.
  // context frame::any_context: the newest such message of any context.
  std::unique_ptr<UnexpectedMessage> take_unexpected_by_sender(std::uint32_t context, int sender_world,
                                                               std::uint64_t sender_id);
  // The same without removing it (probe).
  const UnexpectedMessage* find_unexpected(std::uint32_t context, int source, int tag) const;

  // f(r) for every posted receive, context by context, in posting order
  // within each (f must not post or unpost).
  template <class F>
  void for_each_posted(F&& f) const {
    for (const auto& [context, q] : contexts_)
      for (PointRequest* r = q.posted.head; r != nullptr; r = r->posted_next) f(r);
  }

  std::size_t posted_count() const noexcept;
  std::size_t unexpected_count() const noexcept;

 private:
  // The posted queue is intrusive (PointRequest::posted_prev/next): posting
  // a receive allocates nothing.
  struct PostedList {
    PointRequest* head = nullptr;
    PointRequest* tail = nullptr;
    std::size_t size = 0;
    void push_back(PointRequest* r) noexcept;
    void erase(PointRequest* r) noexcept;
  };
  struct Queues {
    PostedList posted;
    std::list<std::unique_ptr<UnexpectedMessage>> unexpected;
  };
  // The queues of a context (created on first use; never erased, so the
  // pointers stay valid).  One entry is cached: a run of messages on one
  // communicator skips the hash.
  Queues& queues(std::uint32_t context) {
    if (cached_ && context == cached_context_) return *cached_;
    Queues& q = contexts_[context];  // may throw: the cache changes after it
    cached_ = &q;
    cached_context_ = context;
    return q;
  }
  Queues* find_queues(std::uint32_t context) noexcept {
    if (cached_ && context == cached_context_) return cached_;
    auto c = contexts_.find(context);
    if (c == contexts_.end()) return nullptr;
    cached_context_ = context;
    return cached_ = &c->second;
  }
  std::unordered_map<std::uint32_t, Queues> contexts_;
  Queues* cached_ = nullptr;
  std::uint32_t cached_context_ = 0;
  std::uint64_t arrivals_ = 0;
};

}  // namespace gridmpi::request
