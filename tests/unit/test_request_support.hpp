// Helpers for the request-layer and transport tests: datatypes and
// communicators without MPI_Init, and pairs of engines in one process that
// the test pumps by hand (each engine only progresses itself, so nothing here
// may call a blocking wait while the other side has work to do).
#pragma once
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "core/datatype.hpp"
#include "core/group.hpp"
#include "p2p/self/self_transport.hpp"
#include "p2p/tcp/tcp_transport.hpp"
#include "p2p/template/template_transport.hpp"
#include "request/engine.hpp"

namespace gridmpi::test {

// MPI_BYTE (and MPI_INT) in the datatype table, whoever owns it: the real
// table has them already; the link stubs have an empty one.
inline void ensure_basic_datatypes() {
  auto& table = core::datatype_table();
  auto add = [&](MPI_Datatype h, std::size_t size) {
    if (table.find(h)) return;
    auto t = std::make_unique<core::Datatype>();
    t->handle = h;
    t->size = size;
    t->ub = t->true_ub = static_cast<MPI_Aint>(size);
    t->committed = t->predefined = t->contiguous = true;
    t->basic_elements = 1;
    table.put_at(h, std::move(t));
  };
  add(MPI_BYTE, 1);
  add(MPI_INT, sizeof(int));
}

inline std::unique_ptr<core::Comm> make_comm(int my_rank, int size, std::uint32_t context = 100) {
  auto c = std::make_unique<core::Comm>();
  c->handle = MPI_COMM_WORLD;
  c->context_id = context;
  c->group = std::make_shared<core::Group>();
  for (int i = 0; i < size; ++i) c->group->members.push_back(i);
  c->group->my_rank = my_rank;
  c->rank = my_rank;
  c->size = size;
  return c;
}

enum class Wire { template_transport, tcp };

inline request::TransportMaker maker(Wire wire, p2p::TemplateOptions template_options = {}) {
  return [wire, template_options](const p2p::TransportContext& context) {
    std::vector<std::unique_ptr<p2p::Transport>> ts;
    ts.push_back(std::make_unique<p2p::SelfTransport>(context));
    if (wire == Wire::template_transport) {
      ts.push_back(std::make_unique<p2p::TemplateTransport>(context, template_options));
    } else {
      p2p::tcp::TcpOptions o;
      o.network = "127.0.0.0/8";
      ts.push_back(std::make_unique<p2p::tcp::TcpTransport>(context, o));
    }
    return ts;
  };
}

// N engines of one job in this process, all pumped by pump_until.
struct EngineSet {
  std::vector<std::unique_ptr<request::Engine>> engines;
  std::vector<std::unique_ptr<core::Comm>> comms;

  EngineSet(int n, Wire wire, request::EngineOptions options, std::uint64_t cookie,
            p2p::TemplateOptions template_options = {}) {
    ensure_basic_datatypes();
    std::vector<std::string> endpoints;
    for (int r = 0; r < n; ++r) {
      engines.push_back(request::make_engine_with(r, n, cookie, maker(wire, template_options), options));
      comms.push_back(make_comm(r, n));
      endpoints.push_back(engines.back()->endpoint());
    }
    for (auto& e : engines) e->set_peer_endpoints(endpoints);
  }
  request::Engine& operator[](int r) { return *engines[r]; }
  core::Comm& comm(int r) { return *comms[r]; }
  request::EngineImpl& impl(int r) { return dynamic_cast<request::EngineImpl&>(*engines[r]); }

  // Progresses every engine until pred holds; fails the test after `limit`.
  void pump_until(const std::function<bool()>& pred, std::chrono::seconds limit = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
      for (auto& e : engines) e->progress();
      if (std::chrono::steady_clock::now() > deadline) FAIL("timed out pumping the engines");
    }
  }
  void pump_rounds(int rounds) {
    for (int i = 0; i < rounds; ++i)
      for (auto& e : engines) e->progress();
  }
};

inline std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return v;
}

}  // namespace gridmpi::test
