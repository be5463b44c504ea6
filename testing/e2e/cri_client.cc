#include "testing/e2e/cri_client.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include <rapidjson/document.h>

#include "common/grpc_status.h"
#include "testing/e2e/host.h"

namespace qrm::e2e {
namespace {

std::string Trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  const auto end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

Status RpcError(const char* method, const grpc::Status& s) {
  return FromGrpcStatus(s).WithContext(method);
}

}  // namespace

CriClient::CriClient(const std::string& socket, Options options) : options_(std::move(options)) {
  const std::string target = socket.rfind("unix:", 0) == 0 ? socket : "unix://" + socket;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kCriMessageLimit);
  args.SetMaxSendMessageSize(kCriMessageLimit);
  channel_ = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  runtime_ = cri::RuntimeService::NewStub(channel_);
  images_ = cri::ImageService::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> CriClient::Context() const {
  return Context(options_.rpc_timeout);
}

std::unique_ptr<grpc::ClientContext> CriClient::Context(std::chrono::milliseconds timeout) const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

StatusOr<cri::VersionResponse> CriClient::Version() {
  cri::VersionRequest request;
  request.set_version("v1");
  cri::VersionResponse response;
  const grpc::Status s = runtime_->Version(Context().get(), request, &response);
  if (!s.ok()) return RpcError("Version", s);
  return response;
}

StatusOr<std::vector<cri::Image>> CriClient::ListImages() {
  cri::ListImagesRequest request;
  cri::ListImagesResponse response;
  const grpc::Status s = images_->ListImages(Context().get(), request, &response);
  if (!s.ok()) return RpcError("ListImages", s);
  return std::vector<cri::Image>(response.images().begin(), response.images().end());
}

cri::PodSandboxConfig CriClient::HostNetworkPodConfig(
    const std::string& name, const std::string& uid, const std::string& pod_namespace,
    const std::map<std::string, std::string>& annotations) const {
  cri::PodSandboxConfig config;
  auto* metadata = config.mutable_metadata();
  metadata->set_name(name);
  metadata->set_uid(uid);
  metadata->set_namespace_(pod_namespace);
  metadata->set_attempt(0);
  // Like the kubelet, no hostname for a host-network pod: it shares the host's UTS
  // namespace and runc refuses to set one ("unable to set hostname without a private UTS
  // namespace").
  if (!options_.log_root.empty()) {
    config.set_log_directory(options_.log_root + "/" + pod_namespace + "_" + name + "_" + uid);
  }
  auto& labels = *config.mutable_labels();
  labels["io.kubernetes.pod.name"] = name;
  labels["io.kubernetes.pod.namespace"] = pod_namespace;
  labels["io.kubernetes.pod.uid"] = uid;
  for (const auto& [key, value] : annotations) (*config.mutable_annotations())[key] = value;
  auto* linux_config = config.mutable_linux();
  if (!options_.cgroup_root.empty())
    linux_config->set_cgroup_parent(options_.cgroup_root + "/pod" + uid);
  auto* ns = linux_config->mutable_security_context()->mutable_namespace_options();
  ns->set_network(cri::NODE);
  ns->set_pid(cri::CONTAINER);
  ns->set_ipc(cri::POD);
  return config;
}

StatusOr<Pod> CriClient::RunPod(const cri::PodSandboxConfig& config) {
  cri::RunPodSandboxRequest request;
  *request.mutable_config() = config;
  cri::RunPodSandboxResponse response;
  // The first sandbox may unpack and start a shim; allow more than one RPC timeout.
  const grpc::Status s =
      runtime_->RunPodSandbox(Context(options_.rpc_timeout * 2).get(), request, &response);
  if (!s.ok()) return RpcError("RunPodSandbox", s);
  return Pod{response.pod_sandbox_id(), config};
}

StatusOr<Pod> CriClient::RunHostNetworkPod(const std::string& name, const std::string& uid,
                                           const std::string& pod_namespace,
                                           const std::map<std::string, std::string>& annotations) {
  return RunPod(HostNetworkPodConfig(name, uid, pod_namespace, annotations));
}

cri::ContainerConfig CriClient::ContainerConfigFor(const Pod& pod,
                                                   const ContainerSpec& spec) const {
  cri::ContainerConfig config;
  config.mutable_metadata()->set_name(spec.name);
  config.mutable_metadata()->set_attempt(0);
  config.mutable_image()->set_image(spec.image.empty() ? options_.default_image : spec.image);
  for (const auto& c : spec.command) config.add_command(c);
  for (const auto& a : spec.args) config.add_args(a);
  if (!pod.config.log_directory().empty()) config.set_log_path(spec.name + "/0.log");
  auto& labels = *config.mutable_labels();
  for (const char* key :
       {"io.kubernetes.pod.name", "io.kubernetes.pod.namespace", "io.kubernetes.pod.uid"}) {
    const auto it = pod.config.labels().find(key);
    if (it != pod.config.labels().end()) labels[key] = it->second;
  }
  labels["io.kubernetes.container.name"] = spec.name;
  for (const auto& [key, value] : spec.labels) labels[key] = value;
  for (const auto& [key, value] : spec.annotations) (*config.mutable_annotations())[key] = value;
  auto* resources = config.mutable_linux()->mutable_resources();
  resources->set_cpuset_cpus(spec.cpuset_cpus);
  resources->set_cpuset_mems(spec.cpuset_mems);
  resources->set_cpu_shares(spec.cpu_shares);
  resources->set_cpu_period(spec.cpu_period);
  resources->set_cpu_quota(spec.cpu_quota);
  resources->set_memory_limit_in_bytes(spec.memory_limit_in_bytes);
  auto* ns = config.mutable_linux()->mutable_security_context()->mutable_namespace_options();
  ns->set_network(cri::NODE);
  ns->set_pid(cri::CONTAINER);
  ns->set_ipc(cri::POD);
  return config;
}

StatusOr<std::string> CriClient::CreateContainer(const Pod& pod, const ContainerSpec& spec) {
  cri::CreateContainerRequest request;
  request.set_pod_sandbox_id(pod.id);
  *request.mutable_config() = ContainerConfigFor(pod, spec);
  *request.mutable_sandbox_config() = pod.config;
  cri::CreateContainerResponse response;
  const grpc::Status s = runtime_->CreateContainer(Context().get(), request, &response);
  if (!s.ok()) return RpcError("CreateContainer", s);
  return response.container_id();
}

Status CriClient::StartContainer(const std::string& container_id) {
  cri::StartContainerRequest request;
  request.set_container_id(container_id);
  cri::StartContainerResponse response;
  const grpc::Status s = runtime_->StartContainer(Context().get(), request, &response);
  if (!s.ok()) return RpcError("StartContainer", s);
  return Status::Ok();
}

StatusOr<std::string> CriClient::CreateAndStartContainer(const Pod& pod,
                                                         const ContainerSpec& spec) {
  StatusOr<std::string> id = CreateContainer(pod, spec);
  if (!id.ok()) return id;
  QRM_RETURN_IF_ERROR(StartContainer(*id));
  return id;
}

StatusOr<cri::ContainerStatusResponse> CriClient::ContainerStatus(const std::string& container_id,
                                                                  bool verbose) {
  cri::ContainerStatusRequest request;
  request.set_container_id(container_id);
  request.set_verbose(verbose);
  cri::ContainerStatusResponse response;
  const grpc::Status s = runtime_->ContainerStatus(Context().get(), request, &response);
  if (!s.ok()) return RpcError("ContainerStatus", s);
  return response;
}

StatusOr<ContainerRuntimeInfo> CriClient::ContainerInfo(const std::string& container_id) {
  StatusOr<cri::ContainerStatusResponse> status = ContainerStatus(container_id, true);
  if (!status.ok()) return status.status();
  const auto it = status->info().find("info");
  if (it == status->info().end()) {
    return NotFoundError("ContainerStatus(verbose) of " + container_id + " has no info");
  }
  rapidjson::Document doc;
  doc.Parse(it->second.c_str(), it->second.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InternalError("ContainerStatus info of " + container_id + " is not JSON");
  }
  ContainerRuntimeInfo info;
  if (doc.HasMember("pid") && doc["pid"].IsInt64()) info.pid = doc["pid"].GetInt64();
  if (doc.HasMember("runtimeSpec") && doc["runtimeSpec"].IsObject()) {
    const auto& spec = doc["runtimeSpec"];
    if (spec.HasMember("linux") && spec["linux"].IsObject() &&
        spec["linux"].HasMember("cgroupsPath") && spec["linux"]["cgroupsPath"].IsString()) {
      info.cgroups_path = spec["linux"]["cgroupsPath"].GetString();
    }
  }
  return info;
}

Status CriClient::UpdateContainerResources(const std::string& container_id,
                                           const cri::LinuxContainerResources& resources) {
  cri::UpdateContainerResourcesRequest request;
  request.set_container_id(container_id);
  *request.mutable_linux() = resources;
  cri::UpdateContainerResourcesResponse response;
  const grpc::Status s = runtime_->UpdateContainerResources(Context().get(), request, &response);
  if (!s.ok()) return RpcError("UpdateContainerResources", s);
  return Status::Ok();
}

Status CriClient::UpdateContainerCpuset(const std::string& container_id, const std::string& cpus) {
  cri::LinuxContainerResources resources;
  resources.set_cpuset_cpus(cpus);
  return UpdateContainerResources(container_id, resources);
}

StatusOr<ExecResult> CriClient::Exec(const std::string& container_id,
                                     const std::vector<std::string>& cmd,
                                     std::chrono::seconds timeout) {
  cri::ExecSyncRequest request;
  request.set_container_id(container_id);
  for (const auto& c : cmd) request.add_cmd(c);
  request.set_timeout(timeout.count());
  cri::ExecSyncResponse response;
  const grpc::Status s =
      runtime_->ExecSync(Context(timeout + std::chrono::seconds(10)).get(), request, &response);
  if (!s.ok()) return RpcError("ExecSync", s);
  return ExecResult{response.exit_code(), response.stdout(), response.stderr()};
}

StatusOr<std::string> CriClient::ExecSync(const std::string& container_id,
                                          const std::vector<std::string>& cmd) {
  StatusOr<ExecResult> result = Exec(container_id, cmd);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    std::string line;
    for (const auto& c : cmd) line += (line.empty() ? "" : " ") + c;
    return InternalError("exec `" + line + "` in " + container_id + " exited with " +
                         std::to_string(result->exit_code) + ": " + result->stderr_text);
  }
  return result->stdout_text;
}

StatusOr<std::string> CriClient::ContainerCgroupFile(const std::string& container_id,
                                                     const std::string& controller,
                                                     const std::string& name) {
  StatusOr<ContainerRuntimeInfo> info = ContainerInfo(container_id);
  if (!info.ok()) return info.status();
  if (info->pid <= 0) return FailedPreconditionError("container " + container_id + " has no pid");
  StatusOr<std::string> cgroup = ProcessCgroup(static_cast<pid_t>(info->pid), controller);
  if (!cgroup.ok()) return cgroup.status();
  const std::string mount = CgroupV1Mount(controller);
  if (mount.empty()) return NotFoundError("no cgroup v1 " + controller + " hierarchy is mounted");
  const std::string file = mount + *cgroup + "/" + name;
  std::ifstream in(file);
  if (!in) return NotFoundError("cannot open " + file);
  std::ostringstream text;
  text << in.rdbuf();
  return Trim(text.str());
}

StatusOr<int64_t> CriClient::ContainerCgroupCpuQuota(const std::string& container_id) {
  QRM_ASSIGN_OR_RETURN(const std::string text,
                       ContainerCgroupFile(container_id, "cpu", "cpu.cfs_quota_us"));
  int64_t quota = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), quota);
  if (error != std::errc() || end != text.data() + text.size()) {
    return NotFoundError("cpu.cfs_quota_us of container " + container_id + ": \"" + text + "\"");
  }
  return quota;
}

StatusOr<std::string> CriClient::ContainerCgroupCpus(const std::string& container_id) {
  return ContainerCgroupFile(container_id, "cpuset", "cpuset.cpus");
}

Status CriClient::StopAndRemoveContainer(const std::string& container_id) {
  {
    cri::StopContainerRequest request;
    request.set_container_id(container_id);
    request.set_timeout(0);
    cri::StopContainerResponse response;
    const grpc::Status s = runtime_->StopContainer(Context().get(), request, &response);
    if (!s.ok()) return RpcError("StopContainer", s);
  }
  cri::RemoveContainerRequest request;
  request.set_container_id(container_id);
  cri::RemoveContainerResponse response;
  const grpc::Status s = runtime_->RemoveContainer(Context().get(), request, &response);
  if (!s.ok()) return RpcError("RemoveContainer", s);
  return Status::Ok();
}

Status CriClient::StopAndRemovePod(const std::string& pod_sandbox_id) {
  {
    cri::StopPodSandboxRequest request;
    request.set_pod_sandbox_id(pod_sandbox_id);
    cri::StopPodSandboxResponse response;
    const grpc::Status s = runtime_->StopPodSandbox(Context().get(), request, &response);
    if (!s.ok()) return RpcError("StopPodSandbox", s);
  }
  cri::RemovePodSandboxRequest request;
  request.set_pod_sandbox_id(pod_sandbox_id);
  cri::RemovePodSandboxResponse response;
  const grpc::Status s = runtime_->RemovePodSandbox(Context().get(), request, &response);
  if (!s.ok()) return RpcError("RemovePodSandbox", s);
  return Status::Ok();
}

Status CriClient::RemoveEverything() {
  Status first;
  auto note = [&first](const Status& s) {
    if (first.ok() && !s.ok()) first = s;
  };
  {
    cri::ListContainersRequest request;
    cri::ListContainersResponse response;
    const grpc::Status s = runtime_->ListContainers(Context().get(), request, &response);
    if (!s.ok()) return RpcError("ListContainers", s);
    for (const auto& c : response.containers()) note(StopAndRemoveContainer(c.id()));
  }
  cri::ListPodSandboxRequest request;
  cri::ListPodSandboxResponse response;
  const grpc::Status s = runtime_->ListPodSandbox(Context().get(), request, &response);
  if (!s.ok()) return RpcError("ListPodSandbox", s);
  for (const auto& p : response.items()) note(StopAndRemovePod(p.id()));
  return first;
}

std::string CpusAllowedList(const std::string& proc_status) {
  std::istringstream in(proc_status);
  std::string line;
  const std::string key = "Cpus_allowed_list:";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return Trim(line.substr(key.size()));
  }
  return {};
}

}  // namespace qrm::e2e
