#include "advisor/agent/host_view.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

namespace adm = ::qrm::admin::v1;

void AddContainer(adm::ListAllocationsResponse& r, const std::string& pod, const std::string& qos,
                  const std::string& cpus) {
  adm::PodAllocation* p = r.add_pods();
  p->set_uid(pod + "-uid");
  p->set_name(pod);
  p->set_namespace_("default");
  adm::ContainerAllocation* c = p->add_containers();
  c->set_name("main");
  c->set_qos_level(qos);
  c->set_cpuset_cpus(cpus);
}

adm::GetAllocatableResponse Allocatable(double cpus) {
  adm::GetAllocatableResponse a;
  (*a.mutable_resources())["cpu"].set_aggregated_allocatable_quantity(cpus);
  return a;
}

TEST_CASE("the host view: dedicated CPUs, pool CPUs and the shared pool the allocations show") {
  adm::ListAllocationsResponse r;
  AddContainer(r, "db", "dedicated_cores", "2-3");
  AddContainer(r, "web", "shared_cores", "0-1,4-5");
  AddContainer(r, "batch", "reclaimed_cores", "6-7");
  auto view = MakeHostView(r, Allocatable(8));
  REQUIRE(view.ok());
  CHECK(view->dedicated.ToString() == "2-3");
  CHECK(view->PoolCpus() == 6);
  CHECK(view->SharedPoolSize() == 4);
  CHECK(view->containers.at("web-uid/main").qos_level == "shared_cores");
}

TEST_CASE("without a shared container the reclaimed one tells the shared pool's size") {
  adm::ListAllocationsResponse r;
  AddContainer(r, "batch", "reclaimed_cores", "6-7");
  auto view = MakeHostView(r, Allocatable(8));
  REQUIRE(view.ok());
  CHECK(view->SharedPoolSize() == 6);
  adm::ListAllocationsResponse everywhere;  // an empty reclaimed pool: they share the shared one
  AddContainer(everywhere, "batch", "reclaimed_cores", "0-7");
  CHECK(MakeHostView(everywhere, Allocatable(8))->SharedPoolSize() == 8);
  CHECK_FALSE(MakeHostView({}, Allocatable(8))->SharedPoolSize().has_value());
}

TEST_CASE("a dedicated cpuset that does not parse is an error naming the container") {
  adm::ListAllocationsResponse r;
  AddContainer(r, "db", "dedicated_cores", "2-x");
  auto view = MakeHostView(r, Allocatable(8));
  CHECK(view.status().code() == StatusCode::kDataLoss);
  CHECK(view.status().message().find("default/db container main") != std::string::npos);
}

}  // namespace
}  // namespace qrm::advisor
