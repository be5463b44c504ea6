// qrm-test-plugin: a resource plugin process built on the SDK whose behaviour
// the integration tests choose with flags: what hints it gives, whether it
// fails, hangs or changes its allocations, and where it logs each call.
//
//   --resource NAME           resource name (default test.qrm.io/slots)
//   --plugin-dir DIR          plugin directory (required)
//   --socket NAME             socket file name (default from the resource)
//   --no-register             watcher-style only: do not call Register
//   --hints SPEC              "absent", "empty", or comma list of MASK:p|n where MASK
//                             is a NUMA list in braces, e.g. "{0}:p,{1}:p,{0-1}:n"
//   --result TEXT             allocation_result to return (default: the hint's nodes)
//   --oci-property NAME       oci_property_name (default CpusetMems)
//   --quantity VALUE          allocated_quantity to report instead of the request's
//                             ("nan", "inf", "-1": answers the host must refuse)
//   --result-file FILE        if it exists, GetResourcesAllocation reports its content
//                             as every container's allocation_result (reconcile tests)
//   --need-reconcile          advertise need_reconcile
//   --allocate-nothing        Allocate answers without an allocation of the resource (valid:
//                             the plugin has nothing to hold for this container)
//   --pod-hints               answer GetPodTopologyHints with the same hints (else
//                             UNIMPLEMENTED, as the SDK's default)
//   --fail METHOD             fail this RPC with INTERNAL (Allocate, GetTopologyHints,
//                             RemovePod); repeatable
//   --fail-unavailable        --fail answers UNAVAILABLE instead of INTERNAL
//   --fail-exhausted          --fail answers RESOURCE_EXHAUSTED (a refusal: does not fit)
//   --hang METHOD             sleep 1 h in this RPC; repeatable
//   --delay METHOD:MS         sleep MS milliseconds in this RPC, then serve it as usual (a late
//                             answer: the host's deadline passes, the plugin still acts);
//                             repeatable
//   --state FILE              persist allocations durably in an SDK pod ledger at FILE
//   --call-log FILE           append "METHOD pod_uid container" per call
//   --request-log FILE        append "METHOD pod_uid container role=R type=T requests=K1,K2"
//                             per hints/Allocate request (what the host sent)
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "common/numa_mask.h"
#include "plugins/sdk/pod_ledger.h"
#include "plugins/sdk/run.h"

namespace po = boost::program_options;
using namespace qrm;
namespace pb = ::resourceplugin::v1alpha1;

namespace {

struct Config {
  std::string resource, hints, result, oci_property, result_file, state, call_log, quantity;
  std::string request_log;
  std::set<std::string> fail, hang;
  std::map<std::string, int> delay_ms;  // by method
  bool need_reconcile = false;
  bool allocate_nothing = false;
  bool pod_hints = false;
  bool fail_unavailable = false;
  bool fail_exhausted = false;
};

class TestPlugin final : public sdk::ResourcePlugin {
 public:
  explicit TestPlugin(Config config) : config_(std::move(config)) { Restore(); }

  std::string ResourceName() const override { return config_.resource; }
  pb::ResourcePluginOptions Options() const override {
    pb::ResourcePluginOptions o;
    o.set_need_reconcile(config_.need_reconcile);
    o.set_with_topology_alignment(true);
    return o;
  }

  StatusOr<pb::ResourceHintsResponse> GetTopologyHints(const pb::ResourceRequest& req) override {
    LogRequest("GetTopologyHints", req);
    QRM_RETURN_IF_ERROR(Enter("GetTopologyHints", req.pod_uid(), req.container_name()));
    pb::ResourceHintsResponse resp;
    resp.set_pod_uid(req.pod_uid());
    resp.set_container_name(req.container_name());
    resp.set_resource_name(config_.resource);
    QRM_RETURN_IF_ERROR(FillHints(resp.mutable_resource_hints()));
    return resp;
  }

  StatusOr<pb::PodResourceHintsResponse> GetPodTopologyHints(
      const pb::PodResourceRequest& req) override {
    QRM_RETURN_IF_ERROR(Enter("GetPodTopologyHints", req.pod_uid(), ""));
    if (!config_.pod_hints) return sdk::ResourcePlugin::GetPodTopologyHints(req);
    pb::PodResourceHintsResponse resp;
    resp.set_pod_uid(req.pod_uid());
    resp.set_resource_name(config_.resource);
    QRM_RETURN_IF_ERROR(FillHints(resp.mutable_resource_hints()));
    return resp;
  }

  StatusOr<pb::ResourceAllocationResponse> Allocate(const pb::ResourceRequest& req) override {
    LogRequest("Allocate", req);
    QRM_RETURN_IF_ERROR(Enter("Allocate", req.pod_uid(), req.container_name()));
    pb::ResourceAllocationInfo info;
    info.set_oci_property_name(config_.oci_property);
    info.set_is_scalar_resource(true);
    auto it = req.resource_requests().find(config_.resource);
    info.set_allocated_quantity(it == req.resource_requests().end() ? 0 : it->second);
    if (!config_.quantity.empty()) info.set_allocated_quantity(std::stod(config_.quantity));
    std::string nodes;
    for (auto n : req.hint().nodes()) {
      if (!nodes.empty()) nodes += ',';
      nodes += std::to_string(n);
    }
    info.set_allocation_result(config_.result.empty() ? nodes : config_.result);
    (*info.mutable_envs())["TEST_PLUGIN_NODES"] = nodes;
    *info.mutable_resource_hints()->add_hints() = req.hint();
    if (!config_.allocate_nothing) {
      std::lock_guard lock(mu_);
      pods_[req.pod_uid()][req.container_name()] = info;
      if (ledger_) {
        QRM_RETURN_IF_ERROR(
            ledger_->Put(req.pod_uid(), req.container_name(), {info.allocation_result()}));
      }
    }
    pb::ResourceAllocationResponse resp;
    resp.set_pod_uid(req.pod_uid());
    resp.set_container_name(req.container_name());
    resp.set_resource_name(config_.resource);
    if (config_.allocate_nothing) return resp;
    (*resp.mutable_allocation_result()->mutable_resource_allocation())[config_.resource] = info;
    return resp;
  }

  Status RemovePod(const std::string& pod_uid) override {
    QRM_RETURN_IF_ERROR(Enter("RemovePod", pod_uid, ""));
    std::lock_guard lock(mu_);
    pods_.erase(pod_uid);
    return ledger_ ? ledger_->RemovePod(pod_uid) : Status::Ok();
  }

  StatusOr<pb::GetResourcesAllocationResponse> GetResourcesAllocation() override {
    QRM_RETURN_IF_ERROR(Enter("GetResourcesAllocation", "", ""));
    std::string override_result;
    if (!config_.result_file.empty()) {
      std::ifstream in(config_.result_file);
      std::getline(in, override_result);
    }
    pb::GetResourcesAllocationResponse resp;
    std::lock_guard lock(mu_);
    for (const auto& [pod, containers] : pods_) {
      auto& pod_entry = (*resp.mutable_pod_resources())[pod];
      for (auto [container, info] : containers) {
        if (!override_result.empty()) info.set_allocation_result(override_result);
        (*(*pod_entry.mutable_container_resources())[container]
              .mutable_resource_allocation())[config_.resource] = info;
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
    QRM_RETURN_IF_ERROR(Enter("GetTopologyAwareAllocatableResources", "", ""));
    pb::GetTopologyAwareAllocatableResourcesResponse resp;
    auto& r = (*resp.mutable_allocatable_resources())[config_.resource];
    r.set_is_scalar_resource(true);
    r.set_aggregated_allocatable_quantity(8);
    r.set_aggregated_capacity_quantity(8);
    return resp;
  }

 private:
  void LogRequest(const std::string& method, const pb::ResourceRequest& req) {
    if (config_.request_log.empty()) return;
    std::set<std::string> keys;  // sorted, so the line is deterministic
    for (const auto& [k, v] : req.resource_requests()) keys.insert(k);
    std::lock_guard lock(log_mu_);
    std::ofstream out(config_.request_log, std::ios::app);
    out << method << ' ' << req.pod_uid() << ' ' << req.container_name()
        << " role=" << req.pod_role() << " type=" << req.pod_type()
        << " requests=" << fmt::format("{}", fmt::join(keys, ",")) << '\n';
  }

  Status Enter(const std::string& method, const std::string& pod, const std::string& container) {
    if (!config_.call_log.empty()) {
      std::lock_guard lock(log_mu_);
      std::ofstream out(config_.call_log, std::ios::app);
      out << method << ' ' << pod << ' ' << container << '\n';
    }
    if (config_.hang.count(method)) std::this_thread::sleep_for(std::chrono::hours(1));
    if (auto it = config_.delay_ms.find(method); it != config_.delay_ms.end()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(it->second));
    }
    if (config_.fail.count(method)) {
      const std::string message =
          fmt::format("{} failed as configured (--fail {})", method, method);
      if (config_.fail_exhausted) return ResourceExhaustedError(message);
      return config_.fail_unavailable ? UnavailableError(message) : InternalError(message);
    }
    return Status::Ok();
  }

  // The configured hints: "absent", "empty" or "{0}:p,{1}:p,{0-1}:n".
  Status FillHints(google::protobuf::Map<std::string, pb::ListOfTopologyHints>* out) const {
    if (config_.hints == "absent") return Status::Ok();
    auto& list = (*out)[config_.resource];
    if (config_.hints == "empty") return Status::Ok();
    size_t pos = 0;
    while (pos < config_.hints.size()) {
      const size_t close = config_.hints.find('}', pos);
      const auto mask = NumaMask::Parse(config_.hints.substr(pos + 1, close - pos - 1));
      if (!mask.ok()) return mask.status();
      auto* hint = list.add_hints();
      for (int n : mask->Nodes()) hint->add_nodes(static_cast<uint64_t>(n));
      hint->set_preferred(config_.hints[close + 2] == 'p');
      pos = close + 4;
    }
    return Status::Ok();
  }

  // Allocations survive restarts, kept durably like a real plugin's (the SDK's ledger).
  struct Entry {
    std::string result;
    void Encode(sdk::EntryWriter& w) const { w.Set("result", result); }
    static StatusOr<Entry> Decode(const sdk::EntryReader& r) {
      QRM_ASSIGN_OR_RETURN(std::string result, r.String("result"));
      return Entry{std::move(result)};
    }
  };

  void Restore() {
    if (config_.state.empty()) return;
    sdk::LedgerOptions options;
    options.path = config_.state;
    options.component = "test-plugin";
    // As the bundled plugins by default (--state-sync host-replays): the host under test replays.
    options.journal_write.sync = false;
    auto opened = sdk::PodLedger<Entry>::Open(options);
    if (!opened.ok()) {
      std::fprintf(stderr, "qrm-test-plugin: %s\n", opened.status().ToString().c_str());
      std::exit(1);
    }
    for (const auto& [pod, containers] : opened->contents.pods) {
      for (const auto& [name, entry] : containers) {
        pb::ResourceAllocationInfo info;
        info.set_oci_property_name(config_.oci_property);
        info.set_allocation_result(entry.result);
        pods_[pod][name] = info;
      }
    }
    ledger_ = std::move(opened->ledger);
  }

  const Config config_;
  std::mutex mu_, log_mu_;
  std::map<std::string, std::map<std::string, pb::ResourceAllocationInfo>> pods_;
  std::unique_ptr<sdk::PodLedger<Entry>> ledger_;
};

}  // namespace

int main(int argc, char** argv) {
  Config config;
  sdk::PluginServerOptions options;
  std::vector<std::string> fail, hang, delay;
  po::options_description desc("qrm-test-plugin");
  desc.add_options()("resource", po::value(&config.resource)->default_value("test.qrm.io/slots"))(
      "plugin-dir", po::value(&options.plugin_dir)->required())(
      "socket", po::value(&options.socket_name))("no-register", "")(
      "hints", po::value(&config.hints)->default_value("{0}:p,{1}:p,{0-1}:n"))(
      "result", po::value(&config.result))("quantity", po::value(&config.quantity))(
      "oci-property", po::value(&config.oci_property)->default_value("CpusetMems"))(
      "result-file", po::value(&config.result_file))("need-reconcile", "")("pod-hints", "")(
      "allocate-nothing", "")("fail-unavailable", "")("fail-exhausted", "")(
      "fail", po::value(&fail)->composing())("hang", po::value(&hang)->composing())(
      "delay", po::value(&delay)->composing())("state", po::value(&config.state))(
      "call-log", po::value(&config.call_log))("request-log", po::value(&config.request_log));
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "qrm-test-plugin: " << e.what() << '\n' << desc;
    return 2;
  }
  options.register_with_host = vm.count("no-register") == 0;
  config.need_reconcile = vm.count("need-reconcile") > 0;
  config.allocate_nothing = vm.count("allocate-nothing") > 0;
  config.pod_hints = vm.count("pod-hints") > 0;
  config.fail_unavailable = vm.count("fail-unavailable") > 0;
  config.fail_exhausted = vm.count("fail-exhausted") > 0;
  config.fail.insert(fail.begin(), fail.end());
  config.hang.insert(hang.begin(), hang.end());
  for (const std::string& d : delay) {
    const size_t colon = d.find(':');
    if (colon == std::string::npos) {
      std::cerr << "qrm-test-plugin: --delay \"" << d << "\": want METHOD:MS\n";
      return 2;
    }
    config.delay_ms[d.substr(0, colon)] = std::stoi(d.substr(colon + 1));
  }
  TestPlugin plugin(config);
  return sdk::Run(plugin, options);
}
