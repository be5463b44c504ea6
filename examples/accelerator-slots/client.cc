// qrm-example-accel-client: a stand-in for qrm-host on one plugin socket.
//
// It makes the calls qrm-host makes for one container, so that a plugin can be
// checked as a process on its real socket without a host, a kubelet or a
// container runtime (tests/smoke_test.sh drives it). Nothing in it is specific
// to the example: point --socket and --resource at any plugin.
//
//   qrm-example-accel-client --socket PATH [--resource NAME] COMMAND ...
//     options                       GetResourcePluginOptions
//     allocate POD CONTAINER QTY    GetTopologyHints, then Allocate on the first
//                                   preferred hint (as the host's merge would with
//                                   one plugin); prints allocation_result and envs
//     list                          GetResourcesAllocation, one container a line
//     allocatable                   GetTopologyAwareAllocatableResources, and the sum
//                                   GetResourcesAllocation reports allocated
//     remove POD                    RemovePod
// Exit code 0 on success, 1 when a call fails (its status is printed), 2 for usage.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"

namespace pb = ::resourceplugin::v1alpha1;

namespace {

class Client {
 public:
  Client(const std::string& socket, std::string resource)
      : stub_(pb::ResourcePlugin::NewStub(
            grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()))),
        resource_(std::move(resource)) {}

  bool Options();
  bool Allocate(const std::string& pod, const std::string& container, double quantity);
  bool List();
  bool Allocatable();
  bool Remove(const std::string& pod);

 private:
  // A fresh context per call, with the host's default deadline.
  static std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }
  static bool Failed(const char* method, const grpc::Status& status) {
    if (status.ok()) return false;
    std::cerr << method << ": " << status.error_code() << " " << status.error_message() << "\n";
    return true;
  }

  std::unique_ptr<pb::ResourcePlugin::Stub> stub_;
  std::string resource_;
};

bool Client::Options() {
  pb::ResourcePluginOptions options;
  if (Failed("GetResourcePluginOptions",
             stub_->GetResourcePluginOptions(Context().get(), pb::Empty(), &options))) {
    return false;
  }
  std::cout << "with_topology_alignment=" << options.with_topology_alignment()
            << " need_reconcile=" << options.need_reconcile()
            << " pre_start_required=" << options.pre_start_required() << "\n";
  return true;
}

// [guide:client]
bool Client::Allocate(const std::string& pod, const std::string& container, double quantity) {
  pb::ResourceRequest req;
  req.set_pod_uid(pod);
  req.set_pod_namespace("default");
  req.set_pod_name(pod);
  req.set_container_name(container);
  req.set_container_type(pb::MAIN);
  req.set_resource_name(resource_);
  (*req.mutable_resource_requests())[resource_] = quantity;

  pb::ResourceHintsResponse hints;
  if (Failed("GetTopologyHints", stub_->GetTopologyHints(Context().get(), req, &hints))) {
    return false;
  }
  // Absent: no preference (the host would send every node). Present but empty: refused.
  auto entry = hints.resource_hints().find(resource_);
  if (entry != hints.resource_hints().end()) {
    if (entry->second.hints().empty()) {
      std::cerr << "GetTopologyHints: no hint fits " << quantity << "\n";
      return false;
    }
    *req.mutable_hint() = entry->second.hints(0);
    for (const pb::TopologyHint& hint : entry->second.hints()) {
      if (hint.preferred()) {
        *req.mutable_hint() = hint;
        break;
      }
    }
  }
  pb::ResourceAllocationResponse answer;
  if (Failed("Allocate", stub_->Allocate(Context().get(), req, &answer))) return false;
  for (const auto& [resource, info] : answer.allocation_result().resource_allocation()) {
    std::cout << resource << " " << info.allocation_result();
    const std::map<std::string, std::string> envs(info.envs().begin(), info.envs().end());
    for (const auto& [key, value] : envs) std::cout << " " << key << "=" << value;
    std::cout << "\n";
  }
  return true;
}
// [guide:end]

bool Client::List() {
  pb::GetResourcesAllocationResponse all;
  if (Failed("GetResourcesAllocation", stub_->GetResourcesAllocation(Context().get(), {}, &all))) {
    return false;
  }
  // Protobuf maps have no order; sort for a stable output.
  std::vector<std::string> lines;
  for (const auto& [pod, containers] : all.pod_resources()) {
    for (const auto& [container, allocation] : containers.container_resources()) {
      for (const auto& [resource, info] : allocation.resource_allocation()) {
        std::string line = pod;
        line.append("/").append(container).append(" ").append(resource).append(" ");
        lines.push_back(line.append(info.allocation_result()));
      }
    }
  }
  std::sort(lines.begin(), lines.end());
  for (const std::string& line : lines) std::cout << line << "\n";
  return true;
}

bool Client::Allocatable() {
  pb::GetTopologyAwareAllocatableResourcesResponse answer;
  if (Failed("GetTopologyAwareAllocatableResources",
             stub_->GetTopologyAwareAllocatableResources(Context().get(), {}, &answer))) {
    return false;
  }
  auto it = answer.allocatable_resources().find(resource_);
  if (it == answer.allocatable_resources().end()) {
    std::cerr << "GetTopologyAwareAllocatableResources: no entry for " << resource_ << "\n";
    return false;
  }
  // What is held now comes from the allocations, not from allocatable (which does not shrink).
  pb::GetResourcesAllocationResponse all;
  if (Failed("GetResourcesAllocation", stub_->GetResourcesAllocation(Context().get(), {}, &all))) {
    return false;
  }
  double allocated = 0;
  for (const auto& [pod, containers] : all.pod_resources()) {
    for (const auto& [container, allocation] : containers.container_resources()) {
      auto held = allocation.resource_allocation().find(resource_);
      if (held != allocation.resource_allocation().end()) {
        allocated += held->second.allocated_quantity();
      }
    }
  }
  std::cout << "capacity=" << it->second.aggregated_capacity_quantity()
            << " allocatable=" << it->second.aggregated_allocatable_quantity()
            << " allocated=" << allocated << "\n";
  return true;
}

bool Client::Remove(const std::string& pod) {
  pb::RemovePodRequest req;
  req.set_pod_uid(pod);
  pb::RemovePodResponse answer;
  return !Failed("RemovePod", stub_->RemovePod(Context().get(), req, &answer));
}

int Usage() {
  std::cerr << "usage: qrm-example-accel-client --socket PATH [--resource NAME] "
               "options|allocate POD CONTAINER QTY|list|allocatable|remove POD\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket;
  std::string resource = "example.qrm.io/accel-slots";
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--socket" || arg == "--resource") && i + 1 < argc) {
      (arg == "--socket" ? socket : resource) = argv[++i];
    } else {
      args.push_back(arg);
    }
  }
  if (socket.empty() || args.empty()) return Usage();
  Client client(socket, resource);
  const std::string& command = args[0];
  bool ok = false;
  if (command == "options" && args.size() == 1) {
    ok = client.Options();
  } else if (command == "allocate" && args.size() == 4) {
    char* end = nullptr;
    const double quantity = std::strtod(args[3].c_str(), &end);
    if (end == args[3].c_str() || *end != '\0') return Usage();
    ok = client.Allocate(args[1], args[2], quantity);
  } else if (command == "list" && args.size() == 1) {
    ok = client.List();
  } else if (command == "allocatable" && args.size() == 1) {
    ok = client.Allocatable();
  } else if (command == "remove" && args.size() == 2) {
    ok = client.Remove(args[1]);
  } else {
    return Usage();
  }
  return ok ? 0 : 1;
}
