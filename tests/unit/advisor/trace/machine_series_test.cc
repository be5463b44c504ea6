// Grouping a row stream into one machine's series at a time.
#include "advisor/trace/machine_series.h"

#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

UsageRow Row(std::string machine, std::string pod, int64_t time, double usage) {
  UsageRow row;
  row.machine = std::move(machine);
  row.pod = std::move(pod);
  row.time = time;
  row.usage = usage;
  return row;
}

std::vector<int64_t> Times(const std::vector<RawSample>& samples) {
  std::vector<int64_t> times;
  for (const RawSample& s : samples) times.push_back(s.time);
  return times;
}

struct Collected {
  Status status;
  TraceStats stats;
  std::vector<MachineSeries> machines;
};

Collected ReadMachines(const std::string& text, TraceFormat format, GrouperOptions options = {},
                       const std::string& name = "trace.csv") {
  std::istringstream in(text);
  Collected c;
  StatusOr<TraceStats> stats = ReadMachineSeries(in, format, Resource::kCpu, name,
                                                 std::move(options), [&](MachineSeries&& m) {
                                                   c.machines.push_back(std::move(m));
                                                   return Status::Ok();
                                                 });
  if (stats.ok()) {
    c.stats = *stats;
  } else {
    c.status = stats.status();
  }
  return c;
}

TEST_CASE("a machine's series is handed over when the next machine's first row arrives") {
  std::vector<MachineSeries> got;
  MachineGrouper grouper({}, [&](MachineSeries&& m) {
    got.push_back(std::move(m));
    return Status::Ok();
  });
  REQUIRE(grouper.Add(Row("m1", "", 0, 5)).ok());
  REQUIRE(grouper.Add(Row("m1", "a", 0, 2)).ok());
  REQUIRE(grouper.Add(Row("m1", "", 10, 6)).ok());
  CHECK(got.empty());
  REQUIRE(grouper.Add(Row("m2", "", 0, 1)).ok());
  REQUIRE(got.size() == 1);
  CHECK(got[0].machine == "m1");
  CHECK(Times(got[0].node) == std::vector<int64_t>{0, 10});
  CHECK(got[0].node[1].value == 6);
  REQUIRE(got[0].pods.size() == 1);
  CHECK(got[0].pods[0].pod == "a");
  CHECK(got[0].pods[0].samples[0].value == 2);
  REQUIRE(grouper.Finish().ok());
  REQUIRE(got.size() == 2);
  CHECK(got[1].machine == "m2");
  CHECK(grouper.delivered() == 2);
  CHECK(grouper.done());
}

TEST_CASE("container rows interleaved by container become per-pod series sorted by time") {
  const auto c = ReadMachines(
      "c_2,m_1,20,5,50\n"
      "c_1,m_1,20,3,30\n"
      "c_2,m_1,10,4,40\n"
      "c_1,m_1,0,1,10\n"
      "c_1,m_1,10,2,20\n",
      TraceFormat::kAlibabaContainer);
  REQUIRE(c.status.ok());
  REQUIRE(c.machines.size() == 1);
  const MachineSeries& m = c.machines[0];
  CHECK(m.node.empty());
  REQUIRE(m.pods.size() == 2);
  // Pods keep the order of their first row; samples are sorted by time.
  CHECK(m.pods[0].pod == "c_2");
  CHECK(Times(m.pods[0].samples) == std::vector<int64_t>{10, 20});
  CHECK(m.pods[0].samples[0].value == 4);
  CHECK(m.pods[1].pod == "c_1");
  CHECK(Times(m.pods[1].samples) == std::vector<int64_t>{0, 10, 20});
  CHECK(m.pods[1].samples[2].value == 3);
}

TEST_CASE("samples of equal time keep their order in the file") {
  const auto c = ReadMachines("m_1,10,1\nm_1,0,9\nm_1,10,2\n", TraceFormat::kAlibabaMachine);
  REQUIRE(c.status.ok());
  REQUIRE(c.machines.size() == 1);
  const std::vector<RawSample>& node = c.machines[0].node;
  REQUIRE(node.size() == 3);
  CHECK(node[0].value == 9);
  CHECK(node[1].value == 1);
  CHECK(node[2].value == 2);
}

TEST_CASE("a machine that comes back after another is refused with the command to sort") {
  const auto machine = ReadMachines("m_1,0,1\nm_2,0,1\nm_1,10,1\n", TraceFormat::kAlibabaMachine,
                                    {}, "machine_usage.csv");
  CHECK(machine.status.code() == StatusCode::kInvalidArgument);
  CHECK(machine.status.message() ==
        "machine_usage.csv:3: machine \"m_1\" appears again after another machine's rows: the "
        "rows of a machine must be contiguous. Sort the file by machine, then time: LC_ALL=C "
        "sort -t, -k1,1 -k2,2n machine_usage.csv > machine_usage.sorted.csv");
  // The first machine was complete and delivered before the error.
  CHECK(machine.machines.size() == 1);

  const auto container = ReadMachines("c_1,m_1,0,1\nc_1,m_2,0,1\nc_2,m_1,10,1\n",
                                      TraceFormat::kAlibabaContainer, {}, "container_usage.csv");
  CHECK_THAT(container.status.message(),
             Catch::EndsWith("LC_ALL=C sort -t, -k2,2 -k3,3n container_usage.csv > "
                             "container_usage.sorted.csv"));

  const auto simple = ReadMachines("time,machine,pod,usage\n0,a,,1\n0,b,,1\n10,a,,1\n",
                                   TraceFormat::kSimple, {}, "my-trace");
  CHECK_THAT(simple.status.message(),
             Catch::Contains("(head -n1 my-trace && tail -n+2 my-trace | LC_ALL=C sort -t, "
                             "-k2,2 -k1,1n) > my-trace.sorted"));
}

TEST_CASE("the machine filter delivers only the machines asked for and stops after them") {
  GrouperOptions options;
  options.machines = {"m_2", "m_3"};
  const auto c = ReadMachines("m_1,0,1\nm_2,0,2\nm_2,10,2\nm_1b,0,1\nm_3,0,3\nm_4,0,4\nm_5,0,5\n",
                              TraceFormat::kAlibabaMachine, options);
  REQUIRE(c.status.ok());
  REQUIRE(c.machines.size() == 2);
  CHECK(c.machines[0].machine == "m_2");
  CHECK(c.machines[0].node.size() == 2);
  CHECK(c.machines[1].machine == "m_3");
  // Both machines were complete at m_4's row: the rest of the file was not read.
  CHECK(c.stats.stopped_early);
  CHECK(c.stats.lines == 6);
}

TEST_CASE("a kept machine that comes back after a skipped one is still refused") {
  GrouperOptions options;
  options.machines = {"m_1", "m_9"};
  const auto back =
      ReadMachines("m_1,0,1\nm_2,0,1\nm_1,10,1\n", TraceFormat::kAlibabaMachine, options);
  CHECK_THAT(back.status.message(), Catch::Contains("machine \"m_1\" appears again"));

  // A skipped machine may come back: nothing of it is kept.
  const auto skipped =
      ReadMachines("m_2,0,1\nm_1,0,1\nm_2,10,1\n", TraceFormat::kAlibabaMachine, options);
  REQUIRE(skipped.status.ok());
  REQUIRE(skipped.machines.size() == 1);
  CHECK(skipped.machines[0].machine == "m_1");
}

TEST_CASE("max machines stops the read once that many machines are complete") {
  GrouperOptions options;
  options.max_machines = 2;
  const auto c = ReadMachines("m_1,0,1\nm_2,0,2\nm_2,10,2\nm_3,0,3\nm_1,10,1\n",
                              TraceFormat::kAlibabaMachine, options);
  // The unsorted last line is never reached.
  REQUIRE(c.status.ok());
  REQUIRE(c.machines.size() == 2);
  CHECK(c.machines[1].machine == "m_2");
  CHECK(c.machines[1].node.size() == 2);
  CHECK(c.stats.stopped_early);
  CHECK(c.stats.lines == 4);

  // After the stop the grouper refuses more rows with the same signal.
  MachineGrouper grouper(options, [](MachineSeries&&) { return Status::Ok(); });
  REQUIRE(grouper.Add(Row("a", "", 0, 1)).ok());
  REQUIRE(grouper.Add(Row("b", "", 0, 1)).ok());
  CHECK(IsStopReading(grouper.Add(Row("c", "", 0, 1))));
  CHECK(grouper.done());
  CHECK(IsStopReading(grouper.Add(Row("b", "", 10, 1))));
  CHECK(grouper.Finish().ok());
  CHECK(grouper.delivered() == 2);
}

TEST_CASE("priority, request and capacity are kept per pod and machine") {
  const auto c = ReadMachines(
      "time,machine,pod,usage,priority,request,capacity\n"
      "0,n1,,3,,,32\n"
      "0,n1,web,1,prod,2,\n"
      "60,n1,web,1.5,,,\n"
      "60,n1,,4,,,32\n",
      TraceFormat::kSimple);
  REQUIRE(c.status.ok());
  REQUIRE(c.machines.size() == 1);
  const MachineSeries& m = c.machines[0];
  CHECK(m.capacity == 32.0);
  REQUIRE(m.pods.size() == 1);
  CHECK(m.pods[0].priority == PriorityClass::kProd);
  CHECK(m.pods[0].request == 2.0);
  CHECK(m.pods[0].samples.size() == 2);
}

TEST_CASE("a pod or machine whose priority, request or capacity changes is refused") {
  const std::string header = "time,machine,pod,usage,priority,request,capacity\n";
  const auto request = ReadMachines(header + "0,n1,web,1,prod,2,\n60,n1,web,1,prod,3,\n",
                                    TraceFormat::kSimple, {}, "s.csv");
  CHECK(request.status.code() == StatusCode::kInvalidArgument);
  CHECK(request.status.message() ==
        "s.csv:3: machine \"n1\", pod \"web\": request: invalid value 3 (its earlier rows say 2: "
        "one value each)");
  const auto priority =
      ReadMachines(header + "0,n1,web,1,prod,,\n60,n1,web,1,batch,,\n", TraceFormat::kSimple);
  CHECK_THAT(priority.status.message(),
             Catch::Contains("pod \"web\": priority: invalid value batch (its earlier rows say "
                             "prod"));
  const auto capacity =
      ReadMachines(header + "0,n1,,1,,,32\n0,n1,web,1,,,16\n", TraceFormat::kSimple);
  CHECK_THAT(capacity.status.message(),
             Catch::Contains("machine \"n1\": capacity: invalid value 16 (its earlier rows say "
                             "32"));
}

TEST_CASE("a callback error stops the read and names the line that completed the machine") {
  std::istringstream in("m_1,0,1\nm_2,0,1\nm_3,0,1\n");
  int calls = 0;
  StatusOr<TraceStats> stats = ReadMachineSeries(in, TraceFormat::kAlibabaMachine, Resource::kCpu,
                                                 "t.csv", {}, [&](MachineSeries&&) {
                                                   ++calls;
                                                   return ResourceExhaustedError("full");
                                                 });
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().code() == StatusCode::kResourceExhausted);
  CHECK(stats.status().message() == "t.csv:2: full");
  CHECK(calls == 1);

  // The last machine's error comes from Finish, at the end of the file.
  std::istringstream one("m_1,0,1\n");
  stats = ReadMachineSeries(one, TraceFormat::kAlibabaMachine, Resource::kCpu, "t.csv", {},
                            [](MachineSeries&&) { return ResourceExhaustedError("full"); });
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().message() == "t.csv: at the end: full");
}

TEST_CASE("the sort command names an output beside the file") {
  CHECK(SortCommand(TraceFormat::kAlibabaMachine, "/data/machine_usage.csv") ==
        "LC_ALL=C sort -t, -k1,1 -k2,2n /data/machine_usage.csv > "
        "/data/machine_usage.sorted.csv");
  CHECK(SortCommand(TraceFormat::kAlibabaContainer, "cu") ==
        "LC_ALL=C sort -t, -k2,2 -k3,3n cu > cu.sorted");
}

}  // namespace
}  // namespace qrm::advisor
