#include "qrmctl/table_cells.h"

#include <string>

#include <catch2/catch.hpp>

namespace qrm::ctl {
namespace {

::qrm::admin::v1::ContainerAllocation Container() {
  ::qrm::admin::v1::ContainerAllocation c;
  auto& resources = *c.mutable_resources();
  // Inserted in an order that is neither sorted nor reversed.
  auto& nic = resources["qrm.io/nic"];
  nic.set_allocated_quantity(1);
  nic.set_allocation_result("eth1");
  auto& cpu = resources["cpu"];
  cpu.set_oci_property_name("CpusetCpus");
  cpu.set_allocation_result("0");
  cpu.set_allocated_quantity(1);
  auto& memory = resources["memory"];
  memory.set_oci_property_name("CpusetMems");
  memory.set_allocation_result("0");
  memory.set_allocated_quantity(64.0 * 1024 * 1024);
  return c;
}

TEST_CASE("resources are sorted by name and every quantity comes before its result") {
  // Before: "cpu=0" (a cpuset read as zero CPUs) beside "memory=6.7108864e+07", in map order.
  CHECK(ResourcesCell(Container()) ==
        "cpu=1 (CpusetCpus 0) memory=64Mi (CpusetMems 0) qrm.io/nic=1 (eth1)");
}

TEST_CASE("the resources cell is the same whatever order the answer lists them in") {
  auto a = Container();
  ::qrm::admin::v1::ContainerAllocation b;
  for (const char* name : {"memory", "qrm.io/nic", "cpu"}) {
    (*b.mutable_resources())[name] = a.resources().at(name);
  }
  CHECK(ResourcesCell(a) == ResourcesCell(b));
}

TEST_CASE("resources a container was admitted without are named after the allocated ones") {
  auto c = Container();
  (*c.mutable_skipped_resources())["test.qrm.io/slots"] = "pending";
  CHECK(ResourcesCell(c) ==
        "cpu=1 (CpusetCpus 0) memory=64Mi (CpusetMems 0) qrm.io/nic=1 (eth1) "
        "test.qrm.io/slots=skipped(pending)");
}

TEST_CASE("quantities print the way people read them") {
  CHECK(QuantityText("memory", 500.0 * 1024 * 1024) == "500Mi");
  CHECK(QuantityText("memory", 1536) == "1536");  // not a whole number of KiB
  CHECK(QuantityText("hugepages-2Mi", 4.0 * 1024 * 1024 * 1024) == "4Gi");
  CHECK(QuantityText("memory", 1000) == "1000");
  CHECK(QuantityText("cpu", 0.5) == "0.5");
  CHECK(QuantityText("cpu", 20) == "20");
  CHECK(ResourcesCell({}) == "-");
}

TEST_CASE("a long error is one bounded line") {
  const std::string long_error = "RESOURCE_EXHAUSTED: " + std::string(300, 'x') + "\nsecond";
  const std::string cell = ErrorCell(long_error);
  CHECK(cell.size() == 80);
  CHECK(cell.ends_with("..."));
  CHECK(cell.find('\n') == std::string::npos);
  CHECK(ErrorCell("UNAVAILABLE: connection refused") == "UNAVAILABLE: connection refused");
  CHECK(ErrorCell("") == "-");
}

}  // namespace
}  // namespace qrm::ctl
