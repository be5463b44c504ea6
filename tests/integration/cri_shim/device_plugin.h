// An in-process resource plugin (SDK) for "example.com/dev": no NUMA preference, allocates
// with an env and an annotation (no cgroup field), asks for PreStartContainer and records
// those calls; told to, it fails them.
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "plugins/sdk/plugin_server.h"
#include "plugins/sdk/resource_plugin.h"

namespace qrm::shim::testing {

namespace pb = ::resourceplugin::v1alpha1;

class DevicePlugin final : public sdk::ResourcePlugin {
 public:
  static constexpr const char* kResource = "example.com/dev";

  std::string ResourceName() const override { return kResource; }
  pb::ResourcePluginOptions Options() const override {
    pb::ResourcePluginOptions o;
    o.set_pre_start_required(true);
    return o;
  }
  StatusOr<pb::ResourceHintsResponse> GetTopologyHints(const pb::ResourceRequest& req) override {
    pb::ResourceHintsResponse r;
    r.set_pod_uid(req.pod_uid());
    r.set_container_name(req.container_name());
    return r;  // no hints: no preference
  }
  StatusOr<pb::ResourceAllocationResponse> Allocate(const pb::ResourceRequest& req) override {
    pb::ResourceAllocationInfo info;
    info.set_is_scalar_resource(true);
    info.set_allocated_quantity(1);
    info.set_allocation_result("dev0");
    (*info.mutable_envs())["DEV"] = "dev0";
    (*info.mutable_annotations())["example.com/dev"] = "dev0";
    pb::ResourceAllocationResponse r;
    r.set_pod_uid(req.pod_uid());
    r.set_container_name(req.container_name());
    (*r.mutable_allocation_result()->mutable_resource_allocation())[kResource] = info;
    return r;
  }
  Status PreStartContainer(const pb::PreStartContainerRequest& req) override {
    std::lock_guard lock(mu_);
    pre_starts_.push_back(req);
    if (fail_pre_start_) return ResourceExhaustedError("device dev0 is not ready");
    return Status::Ok();
  }
  Status RemovePod(const std::string&) override { return Status::Ok(); }
  StatusOr<pb::GetResourcesAllocationResponse> GetResourcesAllocation() override {
    return pb::GetResourcesAllocationResponse();
  }
  StatusOr<pb::GetTopologyAwareResourcesResponse> GetTopologyAwareResources(
      const pb::GetTopologyAwareResourcesRequest&) override {
    return pb::GetTopologyAwareResourcesResponse();
  }
  StatusOr<pb::GetTopologyAwareAllocatableResourcesResponse> GetTopologyAwareAllocatableResources()
      override {
    return pb::GetTopologyAwareAllocatableResourcesResponse();
  }

  std::vector<pb::PreStartContainerRequest> pre_starts() {
    std::lock_guard lock(mu_);
    return pre_starts_;
  }
  void set_fail_pre_start(bool fail) {
    std::lock_guard lock(mu_);
    fail_pre_start_ = fail;
  }

 private:
  std::mutex mu_;
  std::vector<pb::PreStartContainerRequest> pre_starts_;
  bool fail_pre_start_ = false;
};

}  // namespace qrm::shim::testing
