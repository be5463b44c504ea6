#include "advisor/agent/extended_resource_publisher.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "checkpoint/checkpoint_file.h"
#include "common/log.h"

namespace qrm::advisor {
namespace {

namespace rp = ::resourceplugin::v1alpha1;

constexpr uint32_t kStateVersion = 1;

// The node total: the plugin's aggregate, else the sum of its NUMA-level figures (a plugin
// may fill only the per-node list).
double Allocatable(const rp::AllocatableTopologyAwareResource& r) {
  if (r.aggregated_allocatable_quantity() > 0) return r.aggregated_allocatable_quantity();
  double sum = 0;
  for (const rp::TopologyAwareQuantity& q : r.topology_aware_allocatable_quantity_list()) {
    if (q.topology_level() == rp::NUMA) sum += q.resource_value();
  }
  return sum;
}

int64_t Whole(double amount) {
  if (!std::isfinite(amount) || amount <= 0) return 0;
  return static_cast<int64_t>(std::floor(amount));
}

// {"node": <name>, "published": [<names>]}.
rapidjson::Document StateData(const std::string& node, const std::set<std::string>& names) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  const auto text = [&a](const std::string& s) {
    return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
  };
  doc.AddMember("node", text(node), a);
  rapidjson::Value list(rapidjson::kArrayType);
  for (const std::string& n : names) list.PushBack(text(n), a);
  doc.AddMember("published", list, a);
  return doc;
}

}  // namespace

cluster::ExtendedResources ExtendedResourcesFrom(const admin::v1::GetAllocatableResponse& answer,
                                                 std::vector<std::string>* skipped) {
  cluster::ExtendedResources out;
  for (const auto& [name, resource] : answer.resources()) {
    if (!cluster::IsExtendedResourceName(name)) {
      if (skipped != nullptr) skipped->push_back(name);
      continue;
    }
    const auto amount = Quantity::FromInt(Whole(Allocatable(resource)), QuantityFormat::kDecimalSI);
    out[name] = {amount, amount};
  }
  return out;
}

ExtendedResourcePublisher::ExtendedResourcePublisher(const kube::KubeClient& client,
                                                     std::string node_name, std::string state_file)
    : client_(client),
      node_name_(std::move(node_name)),
      state_file_(std::move(state_file)),
      log_(Logger("node-report")) {
  Load();
}

// A file that cannot be used leaves the set empty: qrm then adds what it offers and removes
// nothing it cannot prove it published.
void ExtendedResourcePublisher::Load() {
  if (state_file_.empty()) return;
  (void)checkpoint::RemoveStaleTempFiles(state_file_);
  StatusOr<checkpoint::Checkpoint> file = checkpoint::Read(state_file_);
  if (!file.ok()) {
    if (!checkpoint::IsMissing(file.status())) {
      log_->error("node={}: the extended resources published before are unknown: {}", node_name_,
                  file.status().message());
    }
    return;
  }
  const rapidjson::Value& data = file->data;
  const bool same_node =
      data.HasMember("node") && data["node"].IsString() &&
      node_name_ == std::string(data["node"].GetString(), data["node"].GetStringLength());
  if (!same_node || !data.HasMember("published") || !data["published"].IsArray()) {
    log_->warn("node={}: {} was written for another node or is malformed: ignored", node_name_,
               state_file_);
    return;
  }
  for (const auto& v : data["published"].GetArray()) {
    if (v.IsString()) published_.insert(std::string(v.GetString(), v.GetStringLength()));
  }
}

Status ExtendedResourcePublisher::Remember(const std::set<std::string>& names) {
  if (names == published_) return Status::Ok();
  if (!state_file_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(state_file_).parent_path(), ec);
    Status s = checkpoint::Write(state_file_, kStateVersion, StateData(node_name_, names));
    if (!s.ok()) {
      return Status(s.code(), fmt::format("remembering the published extended resources in {}: {}",
                                          state_file_, s.message()));
    }
  }
  published_ = names;
  return Status::Ok();
}

StatusOr<std::string> ExtendedResourcePublisher::ReadNode() const {
  const std::string path = "/api/v1/nodes/" + node_name_;
  QRM_ASSIGN_OR_RETURN(kube::KubeResponse got, client_.Request("GET", path));
  if (got.code != 200) return kube::ApiError("GET", client_.UrlOf(path), got);
  return std::move(got.body);
}

StatusOr<ExtendedResourceCheck> ExtendedResourcePublisher::Check(
    const cluster::ExtendedResources& desired) {
  QRM_ASSIGN_OR_RETURN(std::string node, ReadNode());
  QRM_ASSIGN_OR_RETURN(cluster::ExtendedResourcePatch patch,
                       cluster::BuildExtendedResourcePatch(node, desired, published_));
  std::set<std::string> offered;
  for (const auto& [name, figures] : desired) offered.insert(name);
  ExtendedResourceCheck out{!patch.empty(), patch.added, patch.changed, patch.removed};
  if (!patch.empty()) {
    std::set<std::string> before = published_;  // what the node may hold once the patch lands
    before.insert(offered.begin(), offered.end());
    QRM_RETURN_IF_ERROR(Remember(before));
    const std::string path = "/api/v1/nodes/" + node_name_ + "/status";
    QRM_ASSIGN_OR_RETURN(kube::KubeResponse sent, client_.Request("PATCH", path, patch.json,
                                                                  cluster::kJsonPatchContentType));
    if (sent.code != 200) return kube::ApiError("PATCH", client_.UrlOf(path), sent);
  }
  QRM_RETURN_IF_ERROR(Remember(offered));  // the node holds exactly these of qrm's now
  return out;
}

}  // namespace qrm::advisor
