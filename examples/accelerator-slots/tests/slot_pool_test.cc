// The example plugin's allocation arithmetic (SlotPool), no gRPC.
#include "examples/accelerator-slots/slot_pool.h"

#include <catch2/catch.hpp>

namespace qrm::example {
namespace {

using Catch::Contains;

NumaMask Mask(const std::string& list) {
  return *NumaMask::Parse(list);
}

SlotPool Pool(const std::string& nodes = "0-1", int slots_per_node = 4) {
  auto pool = SlotPool::Create(Mask(nodes), slots_per_node);
  REQUIRE(pool.ok());
  return std::move(*pool);
}

// Hints as "{0}:p,{1}:p,{0-1}:n", the notation the host integration tests use.
std::string Str(const std::vector<SlotHint>& hints) {
  std::string out;
  for (const auto& h : hints) {
    out += (out.empty() ? "{" : ",{") + h.nodes.ToString() + "}:" + (h.preferred ? "p" : "n");
  }
  return out;
}

TEST_CASE("pool creation validates nodes and slots", "[example][slot_pool]") {
  CHECK(SlotPool::Create(NumaMask(), 4).status().code() == StatusCode::kInvalidArgument);
  auto zero = SlotPool::Create(Mask("0"), 0);
  CHECK(zero.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(zero.status().message(), Contains("slots per node 0"));
  SlotPool pool = Pool("0-1", 4);
  CHECK(pool.Capacity() == 8);
  CHECK(pool.Free() == 8);
  CHECK(pool.FreeOn(1) == 4);
  CHECK(pool.FreeOn(7) == 0);
  CHECK(pool.FreeSummary() == "node0=4 node1=4");
}

TEST_CASE("hints on an empty machine: narrowest sets preferred, wider ones not",
          "[example][slot_pool]") {
  SlotPool pool = Pool();
  CHECK(Str(pool.Hints(1)) == "{0}:p,{1}:p,{0-1}:n");
  CHECK(Str(pool.Hints(3)) == "{0}:p,{1}:p,{0-1}:n");
  CHECK(Str(pool.Hints(4)) == "{0}:p,{1}:p,{0-1}:n");
  CHECK(Str(pool.Hints(5)) == "{0-1}:p");
  CHECK(Str(pool.Hints(8)) == "{0-1}:p");
  CHECK(pool.Hints(9).empty());
  CHECK(pool.Hints(0).empty());
}

TEST_CASE("hints follow the free slots", "[example][slot_pool]") {
  SlotPool pool = Pool();
  REQUIRE(pool.Take(4, Mask("0")).ok());
  CHECK(Str(pool.Hints(3)) == "{1}:p,{0-1}:n");
  CHECK(pool.Hints(5).empty());
  // Fragmented: 2 + 2 free, 3 wanted. Only both nodes fit, and that is the
  // narrowest fit, so it is preferred.
  SlotPool frag = Pool();
  REQUIRE(frag.Take(2, Mask("0")).ok());
  REQUIRE(frag.Take(2, Mask("1")).ok());
  CHECK(Str(frag.Hints(3)) == "{0-1}:p");
  CHECK(Str(frag.Hints(2)) == "{0}:p,{1}:p,{0-1}:n");
}

TEST_CASE("hints use the machine's real node ids", "[example][slot_pool]") {
  SlotPool pool = Pool("0,2-3", 2);
  CHECK(Str(pool.Hints(2)) == "{0}:p,{2}:p,{3}:p,{0,2}:n,{0,3}:n,{2-3}:n,{0,2-3}:n");
  CHECK(Str(pool.Hints(5)) == "{0,2-3}:p");
}

TEST_CASE("above eight nodes only single nodes and all nodes are offered", "[example][slot_pool]") {
  SlotPool pool = Pool("0-9", 2);
  const auto one = pool.Hints(1);
  REQUIRE(one.size() == 11);
  for (int i = 0; i < 10; ++i) CHECK(one[i] == SlotHint{NumaMask().With(i), true});
  CHECK(one[10] == SlotHint{Mask("0-9"), false});
  CHECK(Str(pool.Hints(3)) == "{0-9}:p");
  // Eight nodes are still enumerated: 2^8 - 1 subsets fit one slot.
  CHECK(Pool("0-7", 1).Hints(1).size() == 255);
}

TEST_CASE("take fills the lowest node of the hint first", "[example][slot_pool]") {
  SlotPool pool = Pool();
  auto a = pool.Take(3, Mask("0"));
  REQUIRE(a.ok());
  CHECK(a->ToString() == "node0:3");
  auto b = pool.Take(3, Mask("0-1"));
  REQUIRE(b.ok());
  CHECK(b->ToString() == "node0:1,node1:2");
  CHECK(b->Total() == 3);
  CHECK(b->Nodes() == Mask("0-1"));
  CHECK(pool.FreeSummary() == "node0=0 node1=2");
  // Nodes outside the pool are ignored, not invented.
  auto c = pool.Take(2, Mask("1-5"));
  REQUIRE(c.ok());
  CHECK(c->ToString() == "node1:2");
  CHECK(pool.Free() == 0);
}

TEST_CASE("take refuses what does not fit and takes nothing", "[example][slot_pool]") {
  SlotPool pool = Pool();
  REQUIRE(pool.Take(3, Mask("0")).ok());
  auto r = pool.Take(2, Mask("0"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(r.status().message(), Contains("2 slot(s) do not fit on NUMA node(s) \"0\""));
  CHECK_THAT(r.status().message(), Contains("free: node0=1 node1=4"));
  CHECK(pool.Free() == 5);
  CHECK(pool.Take(6, Mask("0-1")).status().code() == StatusCode::kResourceExhausted);
  CHECK(pool.Free() == 5);
}

TEST_CASE("release gives slots back, reserve re-takes exactly a grant", "[example][slot_pool]") {
  SlotPool pool = Pool();
  auto g = pool.Take(5, Mask("0-1"));
  REQUIRE(g.ok());
  pool.Release(*g);
  CHECK(pool.Free() == 8);
  REQUIRE(pool.Reserve(*g).ok());
  CHECK(pool.FreeSummary() == "node0=0 node1=3");

  // A failed reserve takes nothing, even if part of it would fit.
  Grant too_big{{{0, 0}, {1, 4}}};
  CHECK(pool.Reserve(too_big).code() == StatusCode::kInvalidArgument);  // 0 slots on node 0
  Grant over{{{1, 4}}};
  auto s = pool.Reserve(over);
  CHECK(s.code() == StatusCode::kResourceExhausted);
  CHECK_THAT(s.message(), Contains("grant \"node1:4\""));
  Grant stranger{{{1, 1}, {5, 1}}};
  auto t = pool.Reserve(stranger);
  CHECK(t.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(t.message(), Contains("NUMA node 5 is not one of this pool's nodes \"0-1\""));
  CHECK(pool.FreeSummary() == "node0=0 node1=3");
}

TEST_CASE("a grant reads back what ToString wrote, and nothing else", "[example][slot_pool]") {
  for (const std::string text : {"node0:2", "node0:4,node1:1", "node3:1,node12:7"}) {
    auto grant = Grant::Parse(text);
    INFO(text);
    REQUIRE(grant.ok());
    CHECK(grant->ToString() == text);
  }
  CHECK(Grant::Parse("node0:2,node1:1")->Total() == 3);
  for (const std::string bad :
       {"", "0-1", "node0:0", "node0:-1", "node0:1,node0:1", "node1:1,node0:1", "node0:1,",
        "node0: 1", "node+0:1", "node0:1x"}) {
    auto grant = Grant::Parse(bad);
    INFO(bad);
    REQUIRE_FALSE(grant.ok());
    CHECK(grant.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(grant.status().message(), Contains("grant \"" + bad + "\""));
  }
}

}  // namespace
}  // namespace qrm::example
