#include "request/matching.hpp"

namespace gridmpi::request {

void MatchQueues::PostedList::push_back(PointRequest* r) noexcept {
  r->posted_prev = tail;
  r->posted_next = nullptr;
  (tail ? tail->posted_next : head) = r;
  tail = r;
  ++size;
}

void MatchQueues::PostedList::erase(PointRequest* r) noexcept {
  (r->posted_prev ? r->posted_prev->posted_next : head) = r->posted_next;
  (r->posted_next ? r->posted_next->posted_prev : tail) = r->posted_prev;
  r->posted_prev = r->posted_next = nullptr;
  --size;
}

void MatchQueues::post(PointRequest* r) {
  queues(r->context).posted.push_back(r);
  r->posted = true;
}

bool MatchQueues::unpost(PointRequest* r) {
  if (!r->posted) return false;
  queues(r->context).posted.erase(r);
  r->posted = false;
  return true;
}

PointRequest* MatchQueues::take_posted(const frame::Envelope& env) {
  Queues* c = find_queues(env.context);
  if (!c) return nullptr;
  auto& q = c->posted;
  for (PointRequest* r = q.head; r; r = r->posted_next) {
    if (envelope_matches(r->peer, r->tag, env)) {
      q.erase(r);
      r->posted = false;
      return r;
    }
  }
  return nullptr;
}

void MatchQueues::add_unexpected(std::unique_ptr<UnexpectedMessage> m) {
  m->arrival = ++arrivals_;
  queues(m->envelope.context).unexpected.push_back(std::move(m));
}

std::unique_ptr<UnexpectedMessage> MatchQueues::take_unexpected(std::uint32_t context, int source, int tag) {
  Queues* c = find_queues(context);
  if (!c) return nullptr;
  auto& q = c->unexpected;
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (envelope_matches(source, tag, (*it)->envelope)) {
      auto m = std::move(*it);
      q.erase(it);
      return m;
    }
  }
  return nullptr;
}

std::unique_ptr<UnexpectedMessage> MatchQueues::take_unexpected_by_sender(std::uint32_t context, int sender_world,
                                                                          std::uint64_t sender_id) {
  if (context == frame::any_context) {
    Queues* where = nullptr;
    std::list<std::unique_ptr<UnexpectedMessage>>::iterator newest;
    for (auto& [ctx, q] : contexts_)
      for (auto it = q.unexpected.begin(); it != q.unexpected.end(); ++it)
        if ((*it)->peer_world == sender_world && (*it)->sender_id == sender_id &&
            (!where || (*it)->arrival > (*newest)->arrival)) {
          where = &q;
          newest = it;
        }
    if (!where || !(*newest)->data_complete) return nullptr;
    auto m = std::move(*newest);
    where->unexpected.erase(newest);
    return m;
  }
  auto c = contexts_.find(context);
  if (c == contexts_.end()) return nullptr;
  auto& q = c->second.unexpected;
  for (auto it = q.begin(); it != q.end(); ++it) {
    if ((*it)->peer_world != sender_world || (*it)->sender_id != sender_id) continue;
    if (!(*it)->data_complete) return nullptr;
    auto m = std::move(*it);
    q.erase(it);
    return m;
  }
  return nullptr;
}

const UnexpectedMessage* MatchQueues::find_unexpected(std::uint32_t context, int source, int tag) const {
  auto c = contexts_.find(context);
  if (c == contexts_.end()) return nullptr;
  for (const auto& m : c->second.unexpected)
    if (envelope_matches(source, tag, m->envelope)) return m.get();
  return nullptr;
}

std::size_t MatchQueues::posted_count() const noexcept {
  std::size_t n = 0;
  for (const auto& [ctx, q] : contexts_) n += q.posted.size;
  return n;
}

std::size_t MatchQueues::unexpected_count() const noexcept {
  std::size_t n = 0;
  for (const auto& [ctx, q] : contexts_) n += q.unexpected.size();
  return n;
}

}  // namespace gridmpi::request
