#include "advisor/discover/container_directory.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "advisor/discover/cgroup_path.h"
#include "api/cri_runtime_v1.grpc.pb.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "common/protocol_keys.h"
#include "common/rate_limited_log.h"

namespace qrm::advisor {

namespace cri = ::runtime::v1;

namespace {

constexpr const char* kComponent = "advisor-discover";
constexpr int kCriMessageLimit = 16 * 1024 * 1024;  // the kubelet's
// gRPC's default reconnect backoff grows to 120 s: a restarted containerd would stay
// unreachable for the advisor that long after it is back.
constexpr int kMaxReconnectBackoffMs = 5000;
constexpr uint64_t kMinShares = 2;  // the kubelet's floor: no request
constexpr size_t kShownMessageBytes = 512;

std::shared_ptr<spdlog::logger> Log() {
  static const std::shared_ptr<spdlog::logger> log = Logger(kComponent);
  return log;
}

PodRef RefOf(const ContainerEntry& e) {
  return PodRef{e.pod_uid, e.pod_namespace, e.pod_name, e.container_name};
}

std::string LabelOr(const google::protobuf::Map<std::string, std::string>& labels, const char* key,
                    const std::string& value) {
  if (!value.empty()) return value;
  const auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

// The container's pod and name, from its sandbox.
ContainerEntry Identify(const cri::Container& container, const cri::PodSandbox* pod) {
  ContainerEntry e;
  if (pod != nullptr) {
    e.pod_uid = pod->metadata().uid();
    e.pod_name = pod->metadata().name();
    e.pod_namespace = pod->metadata().namespace_();
  }
  // A sandbox that went away meanwhile: the kubelet's labels on the container say the same.
  const auto& labels = container.labels();
  e.pod_uid = LabelOr(labels, kPodUidLabel, e.pod_uid);
  e.pod_name = LabelOr(labels, kPodNameLabel, e.pod_name);
  e.pod_namespace = LabelOr(labels, kPodNamespaceLabel, e.pod_namespace);
  e.container_name = LabelOr(labels, kContainerNameLabel, container.metadata().name());
  e.container_id = container.id();
  // The pod's start when the sandbox is known (the guard's runningTime order), else the
  // container's own.
  const int64_t created_ns = pod != nullptr ? pod->created_at() : container.created_at();
  e.created_unix = created_ns / 1000000000;
  return e;
}

}  // namespace

double CpuRequestCores(uint64_t cpu_shares) {
  if (cpu_shares <= kMinShares) return 0;
  // The kubelet rounds shares down from milli-cores; rounding up recovers them exactly.
  const double milli = std::ceil(static_cast<double>(cpu_shares) * 1000.0 / 1024.0);
  return milli / 1000.0;
}

double CpuLimitCores(int64_t cpu_quota, uint64_t cpu_period) {
  if (cpu_quota <= 0 || cpu_period == 0) return 0;
  return static_cast<double>(cpu_quota) / static_cast<double>(cpu_period);
}

std::shared_ptr<grpc::Channel> RuntimeChannel(const std::string& endpoint) {
  const std::string target = endpoint.rfind("unix:", 0) == 0 ? endpoint : "unix://" + endpoint;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kCriMessageLimit);
  args.SetMaxSendMessageSize(kCriMessageLimit);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

// The runtime's three calls the directory makes, each with its deadline.
class ContainerDirectory::Runtime {
 public:
  Runtime(std::shared_ptr<grpc::Channel> channel, std::chrono::milliseconds timeout)
      : stub_(cri::RuntimeService::NewStub(std::move(channel))), timeout_(timeout) {}

  StatusOr<cri::ListContainersResponse> RunningContainers() {
    cri::ListContainersRequest request;
    request.mutable_filter()->mutable_state()->set_state(cri::CONTAINER_RUNNING);
    cri::ListContainersResponse response;
    QRM_RETURN_IF_ERROR(Call("ListContainers", [&](grpc::ClientContext* context) {
      return stub_->ListContainers(context, request, &response);
    }));
    return response;
  }

  StatusOr<cri::ListPodSandboxResponse> Pods() {
    cri::ListPodSandboxResponse response;
    QRM_RETURN_IF_ERROR(Call("ListPodSandbox", [&](grpc::ClientContext* context) {
      return stub_->ListPodSandbox(context, cri::ListPodSandboxRequest(), &response);
    }));
    return response;
  }

  StatusOr<cri::ContainerStatusResponse> VerboseStatus(const std::string& container_id) {
    cri::ContainerStatusRequest request;
    request.set_container_id(container_id);
    request.set_verbose(true);
    cri::ContainerStatusResponse response;
    QRM_RETURN_IF_ERROR(Call("ContainerStatus", [&](grpc::ClientContext* context) {
      return stub_->ContainerStatus(context, request, &response);
    }));
    return response;
  }

 private:
  template <typename Invoke>
  Status Call(const char* method, Invoke invoke) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout_);
    const grpc::Status s = invoke(&context);
    if (s.ok()) return Status::Ok();
    const Status status = FromGrpcStatus(s);
    return Status(status.code(), CapText(status.message(), kShownMessageBytes))
        .WithContext(fmt::format("runtime {}", method));
  }

  std::unique_ptr<cri::RuntimeService::Stub> stub_;
  const std::chrono::milliseconds timeout_;
};

ContainerDirectory::ContainerDirectory(std::shared_ptr<grpc::Channel> channel,
                                       ContainerDirectoryOptions options)
    : options_(std::move(options)),
      runtime_(std::make_unique<Runtime>(std::move(channel), options_.rpc_timeout)),
      skip_log_(std::make_unique<RateLimitedLog>(Log(), "containers left out")) {}

ContainerDirectory::~ContainerDirectory() = default;

StatusOr<std::vector<ContainerEntry>> ContainerDirectory::Refresh() {
  // Containers first: every sandbox a listed container was in existed when it was listed.
  QRM_ASSIGN_OR_RETURN(const cri::ListContainersResponse containers, runtime_->RunningContainers());
  QRM_ASSIGN_OR_RETURN(const cri::ListPodSandboxResponse pods, runtime_->Pods());
  std::unordered_map<std::string, const cri::PodSandbox*> pod_by_id;
  for (const cri::PodSandbox& pod : pods.items()) pod_by_id.emplace(pod.id(), &pod);

  std::vector<ContainerEntry> entries;
  std::unordered_set<std::string> running;
  bool status_timed_out = false;
  for (const cri::Container& container : containers.containers()) {
    const auto pod = pod_by_id.find(container.pod_sandbox_id());
    ContainerEntry entry = Identify(container, pod == pod_by_id.end() ? nullptr : pod->second);
    running.insert(entry.container_id);
    QRM_ASSIGN_OR_RETURN(const bool described, Describe(entry, status_timed_out));
    if (described) entries.push_back(std::move(entry));
  }
  Forget(running);
  std::sort(entries.begin(), entries.end(), [](const ContainerEntry& a, const ContainerEntry& b) {
    return std::tie(a.pod_uid, a.container_name, a.container_id) <
           std::tie(b.pod_uid, b.container_name, b.container_id);
  });
  Log()->debug("{} running containers, {} described, {} kept", containers.containers_size(),
               entries.size(), cache_.size());
  return entries;
}

StatusOr<bool> ContainerDirectory::Describe(ContainerEntry& entry, bool& status_timed_out) {
  auto known = cache_.find(entry.container_id);
  if (known == cache_.end()) {
    if (status_timed_out) {
      Log()->debug("{} id={}: left for the next refresh (the runtime timed out)", RefOf(entry),
                   entry.container_id);
      return false;
    }
    StatusOr<Described> fresh = Ask(entry);
    if (!fresh.ok()) {
      // The runtime went away: the whole refresh fails, not this container.
      if (fresh.status().code() == StatusCode::kUnavailable) return fresh.status();
      status_timed_out = fresh.status().code() == StatusCode::kDeadlineExceeded;
      Skip(entry, fresh.status());
      return false;
    }
    known = cache_.emplace(entry.container_id, std::move(*fresh)).first;
  }
  const RuntimeInfo& info = known->second.info;
  entry.cgroup_path = known->second.cgroup_path;
  entry.cpu_request_cores = CpuRequestCores(info.cpu_shares);
  entry.cpu_limit_cores = CpuLimitCores(info.cpu_quota, info.cpu_period);
  entry.cpu_quota_us = info.cpu_quota;
  entry.cpu_period_us = static_cast<int64_t>(info.cpu_period);
  entry.memory_limit_bytes = std::max<int64_t>(info.memory_limit, 0);
  entry.pid = info.pid;
  return true;
}

StatusOr<ContainerDirectory::Described> ContainerDirectory::Ask(const ContainerEntry& entry) {
  QRM_ASSIGN_OR_RETURN(const cri::ContainerStatusResponse status,
                       runtime_->VerboseStatus(entry.container_id));
  const auto json = status.info().find(std::string(kVerboseInfoKey));
  if (json == status.info().end()) {
    return DataLossError("ContainerStatus(verbose) holds no \"info\" (not containerd or CRI-O?)");
  }
  Described d;
  QRM_ASSIGN_OR_RETURN(d.info, ParseRuntimeInfo(json->second));
  QRM_ASSIGN_OR_RETURN(d.cgroup_path, CgroupOf(d.info));
  Log()->debug("{} id={}: cgroup {}, pid {}, cpu shares {}, quota {}/{}, memory limit {}",
               RefOf(entry), entry.container_id, d.cgroup_path, d.info.pid, d.info.cpu_shares,
               d.info.cpu_quota, d.info.cpu_period, d.info.memory_limit);
  return d;
}

StatusOr<std::string> ContainerDirectory::CgroupOf(const RuntimeInfo& info) const {
  StatusOr<std::string> dir = info.cgroups_path.empty()
                                  ? StatusOr<std::string>(InvalidArgumentError("no cgroupsPath"))
                                  : CgroupDirFromCgroupsPath(info.cgroups_path);
  if (dir.ok() || info.pid <= 0) return dir;
  // The runtime's path cannot be read (a relative cgroupfs path): ask the process.
  StatusOr<std::string> from_process =
      ProcessCgroup(options_.procfs_root, info.pid, options_.fallback_controller);
  if (from_process.ok()) return from_process;
  return Status(from_process.status().code(),
                fmt::format("{}; from the process: {}", dir.status().message(),
                            from_process.status().message()));
}

void ContainerDirectory::Skip(const ContainerEntry& entry, const Status& why) {
  // Removed (or its process gone) since it was listed: nothing is wrong.
  if (why.code() == StatusCode::kNotFound) {
    Log()->debug("{} id={}: gone before it was described", RefOf(entry), entry.container_id);
    return;
  }
  ++skipped_total_;
  skip_log_->Log(spdlog::level::warn, "{} id={}: left out of the container list: {}", RefOf(entry),
                 entry.container_id, CapText(why.ToString(), kShownMessageBytes));
}

void ContainerDirectory::Forget(const std::unordered_set<std::string>& running) {
  for (auto it = cache_.begin(); it != cache_.end();) {
    it = running.contains(it->first) ? std::next(it) : cache_.erase(it);
  }
}

}  // namespace qrm::advisor
