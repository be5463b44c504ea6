// qrm-bench-plugin: a resource plugin process built on the SDK for the reconcile benchmark
// (P6). It allocates every container the same value, asks to be reconciled, and lets the
// benchmark change the allocation of a chosen subset of containers through a file.
//
//   --resource NAME        resource name (default bench.qrm.io/cpu)
//   --plugin-dir DIR       plugin directory (required)
//   --oci-property NAME    oci_property_name (default CpusetCpus)
//   --result TEXT          allocation_result given by Allocate (default 0-3)
//   --override-file FILE   read on every GetResourcesAllocation if it exists: lines
//                          "POD_UID VALUE" or "POD_UID/CONTAINER VALUE" report VALUE as that
//                          pod's (or container's) allocation_result; other containers keep
//                          what Allocate gave them
//
// Allocations are kept in memory only: the benchmark measures the host, not this process.
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>

#include <boost/program_options.hpp>

#include "plugins/sdk/run.h"

namespace po = boost::program_options;
using namespace qrm;
namespace pb = ::resourceplugin::v1alpha1;

namespace {

struct Config {
  std::string resource, oci_property, result, override_file;
};

class BenchPlugin final : public sdk::ResourcePlugin {
 public:
  explicit BenchPlugin(Config config) : config_(std::move(config)) {}

  std::string ResourceName() const override { return config_.resource; }
  pb::ResourcePluginOptions Options() const override {
    pb::ResourcePluginOptions o;
    o.set_need_reconcile(true);
    o.set_with_topology_alignment(true);
    return o;
  }

  StatusOr<pb::ResourceHintsResponse> GetTopologyHints(const pb::ResourceRequest& req) override {
    pb::ResourceHintsResponse resp;
    resp.set_pod_uid(req.pod_uid());
    resp.set_container_name(req.container_name());
    resp.set_resource_name(config_.resource);
    auto& list = (*resp.mutable_resource_hints())[config_.resource];
    for (const auto& [nodes, preferred] : std::vector<std::pair<std::vector<uint64_t>, bool>>{
             {{0}, true}, {{1}, true}, {{0, 1}, false}}) {
      auto* hint = list.add_hints();
      for (uint64_t n : nodes) hint->add_nodes(n);
      hint->set_preferred(preferred);
    }
    return resp;
  }

  StatusOr<pb::ResourceAllocationResponse> Allocate(const pb::ResourceRequest& req) override {
    pb::ResourceAllocationInfo info;
    info.set_oci_property_name(config_.oci_property);
    info.set_is_node_resource(true);
    auto it = req.resource_requests().find(config_.resource);
    info.set_allocated_quantity(it == req.resource_requests().end() ? 0 : it->second);
    info.set_allocation_result(config_.result);
    *info.mutable_resource_hints()->add_hints() = req.hint();
    {
      std::lock_guard lock(mu_);
      pods_[req.pod_uid()][req.container_name()] = info;
    }
    pb::ResourceAllocationResponse resp;
    resp.set_pod_uid(req.pod_uid());
    resp.set_container_name(req.container_name());
    resp.set_resource_name(config_.resource);
    (*resp.mutable_allocation_result()->mutable_resource_allocation())[config_.resource] = info;
    return resp;
  }

  Status RemovePod(const std::string& pod_uid) override {
    std::lock_guard lock(mu_);
    pods_.erase(pod_uid);
    return Status::Ok();
  }

  StatusOr<pb::GetResourcesAllocationResponse> GetResourcesAllocation() override {
    // "uid" or "uid/container" -> value
    std::map<std::string, std::string> overrides;
    if (!config_.override_file.empty()) {
      std::ifstream in(config_.override_file);
      for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        std::string key, value;
        if (fields >> key >> value) overrides[key] = value;
      }
    }
    pb::GetResourcesAllocationResponse resp;
    std::lock_guard lock(mu_);
    for (const auto& [pod, containers] : pods_) {
      auto& pod_entry = (*resp.mutable_pod_resources())[pod];
      const auto pod_override = overrides.find(pod);
      for (const auto& [container, info] : containers) {
        auto& out = (*(*pod_entry.mutable_container_resources())[container]
                          .mutable_resource_allocation())[config_.resource];
        out = info;
        auto o = overrides.find(pod + "/" + container);
        if (o == overrides.end()) o = pod_override;
        if (o != overrides.end()) out.set_allocation_result(o->second);
      }
    }
    return resp;
  }

  StatusOr<pb::GetTopologyAwareResourcesResponse> GetTopologyAwareResources(
      const pb::GetTopologyAwareResourcesRequest& req) override {
    pb::GetTopologyAwareResourcesResponse resp;
    resp.set_pod_uid(req.pod_uid());
    return resp;
  }

  StatusOr<pb::GetTopologyAwareAllocatableResourcesResponse> GetTopologyAwareAllocatableResources()
      override {
    pb::GetTopologyAwareAllocatableResourcesResponse resp;
    auto& r = (*resp.mutable_allocatable_resources())[config_.resource];
    r.set_is_node_resource(true);
    r.set_aggregated_allocatable_quantity(1000);
    r.set_aggregated_capacity_quantity(1000);
    return resp;
  }

 private:
  const Config config_;
  std::mutex mu_;
  std::map<std::string, std::map<std::string, pb::ResourceAllocationInfo>> pods_;
};

}  // namespace

int main(int argc, char** argv) {
  Config config;
  sdk::PluginServerOptions options;
  po::options_description desc("qrm-bench-plugin");
  desc.add_options()("resource", po::value(&config.resource)->default_value("bench.qrm.io/cpu"))(
      "plugin-dir", po::value(&options.plugin_dir)->required())(
      "oci-property", po::value(&config.oci_property)->default_value("CpusetCpus"))(
      "result", po::value(&config.result)->default_value("0-3"))("override-file",
                                                                 po::value(&config.override_file));
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "qrm-bench-plugin: " << e.what() << '\n' << desc;
    return 2;
  }
  BenchPlugin plugin(config);
  return sdk::Run(plugin, options);
}
