// Node counters from procfs text: busy and total CPU ticks, the CPUs listed, MemTotal and
// MemAvailable; malformed files refused naming the field; cores used between readings; and
// this machine's /proc read for real.
#include "advisor/sample/node_usage.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

constexpr const char* kStat =
    "cpu  100 10 50 1000 40 5 5 2 0 0\n"
    "cpu0 50 5 25 500 20 2 3 1 0 0\n"
    "cpu1 50 5 25 500 20 3 2 1 0 0\n"
    "intr 12345\nctxt 999\n";

TEST_CASE("/proc/stat: busy = user+nice+system+irq+softirq+steal; total adds idle and iowait",
          "[advisor][sample]") {
  NodeCounters c;
  REQUIRE(ParseProcStat(kStat, c).ok());
  CHECK(c.cpu_busy_ticks == 100 + 10 + 50 + 5 + 5 + 2);
  CHECK(c.cpu_total_ticks == c.cpu_busy_ticks + 1000 + 40);
  CHECK(c.cpus == 2);
}

TEST_CASE("/proc/meminfo: MemTotal and MemAvailable in bytes", "[advisor][sample]") {
  NodeCounters c;
  REQUIRE(
      ParseMeminfo("MemTotal:       2048 kB\nMemFree: 10 kB\nMemAvailable:    1024 kB\n", c).ok());
  CHECK(c.memory_total == 2048 * 1024);
  CHECK(c.memory_available == 1024 * 1024);
  auto missing = ParseMeminfo("MemTotal: 1 kB\n", c);
  CHECK(missing.message().find("MemAvailable") != std::string::npos);
  auto bad = ParseMeminfo("MemTotal: x kB\nMemAvailable: 1 kB\n", c);
  CHECK(bad.message().find("MemTotal") != std::string::npos);
  CHECK(bad.message().find("\"x\"") != std::string::npos);
}

TEST_CASE("malformed /proc/stat is refused naming the field", "[advisor][sample]") {
  NodeCounters c;
  CHECK(ParseProcStat("cpu 1 2 3\ncpu0 1 2 3\n", c).message().find("fields") != std::string::npos);
  auto bad = ParseProcStat("cpu 1 2 -3 4 5 6 7 8\ncpu0 1\n", c);
  CHECK(bad.message().find("system") != std::string::npos);
  CHECK_FALSE(ParseProcStat("intr 1\n", c).ok());
}

TEST_CASE("tick sums and memory sizes that overflow 64 bits are refused", "[advisor][sample]") {
  // The fuzzer's input: busy (user + system) wraps and would read as less than total.
  NodeCounters c;
  const Status busy =
      ParseProcStat("cpu 8249705372102921784 1 15503280078736850948 1 0 0 0 0\ncpu0 1\n", c);
  CHECK(busy.code() == StatusCode::kDataLoss);
  CHECK(busy.message().find("64 bits") != std::string::npos);
  const Status total =
      ParseProcStat("cpu 1 0 0 18446744073709551615 1 0 0 0\ncpu0 1\n", c);  // idle + iowait
  CHECK(total.code() == StatusCode::kDataLoss);
  REQUIRE(ParseProcStat("cpu 1 0 0 18446744073709551613 1 0 0 0\ncpu0 1\n", c).ok());
  CHECK(c.cpu_total_ticks == 18446744073709551615ULL);
  const Status memory =
      ParseMeminfo("MemTotal: 18014398509481984 kB\nMemAvailable: 1 kB\n", c);  // 2^54 KiB
  CHECK(memory.code() == StatusCode::kDataLoss);
  CHECK(memory.message().find("MemTotal:") != std::string::npos);
}

TEST_CASE("cores used between two readings", "[advisor][sample]") {
  NodeCounters a, b;
  a.cpus = b.cpus = 4;
  a.cpu_busy_ticks = 100;
  a.cpu_total_ticks = 400;
  b.cpu_busy_ticks = 300;  // 200 of 400 ticks busy: half of 4 CPUs
  b.cpu_total_ticks = 800;
  REQUIRE(NodeCoresUsed(a, b));
  CHECK(*NodeCoresUsed(a, b) == Approx(2));
  CHECK_FALSE(NodeCoresUsed(b, a));
  CHECK_FALSE(NodeCoresUsed(a, a));
}

TEST_CASE("this machine's /proc reads", "[advisor][sample]") {
  auto c = ReadNodeCounters("/proc");
  REQUIRE(c.ok());
  CHECK(c->cpus >= 1);
  CHECK(c->memory_total > c->memory_available);
  CHECK(c->cpu_total_ticks > c->cpu_busy_ticks);
}

}  // namespace
}  // namespace qrm::advisor
