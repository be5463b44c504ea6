#include "cluster/scheduler/informers.h"

#include <atomic>
#include <functional>
#include <thread>

#include "cluster/extender/extender_codec.h"
#include "cluster/objects/node_metric.h"
#include "cluster/objects/node_metric_json.h"
#include "common/log.h"
#include "common/rate_limited_log.h"

namespace qrm::cluster::scheduler {

// Decodes one kind of object and applies it to the service.
class ExtenderInformers::Handler : public kube::ReflectorHandler {
 public:
  using Apply = std::function<Status(const std::string& json)>;
  using Remove = std::function<void(const std::string& key)>;

  Handler(std::string resource, Apply apply, Remove remove)
      : resource_(std::move(resource)), apply_(std::move(apply)), remove_(std::move(remove)) {}

  void OnUpsert(const std::string& key, const std::string& json) override {
    if (Status s = apply_(json); !s.ok()) {
      undecodable_.fetch_add(1, std::memory_order_relaxed);
      bad_.Log(spdlog::level::warn, "resource={} object={}: not applied: {}", resource_, key,
               s.ToString());
      remove_(key);  // what the object said before is no longer true
    }
  }
  void OnDelete(const std::string& key) override { remove_(key); }

  const std::string& resource() const { return resource_; }
  uint64_t undecodable() const { return undecodable_.load(std::memory_order_relaxed); }

 private:
  const std::shared_ptr<spdlog::logger> log_ = Logger("informer");
  const std::string resource_;
  const Apply apply_;
  const Remove remove_;
  std::atomic<uint64_t> undecodable_{0};
  RateLimitedLog bad_{log_, "undecodable objects"};
};

namespace {

// The name of a cluster-scoped key; pods' keys are namespace/name and stay whole.
std::string NameOf(const std::string& key) {
  return key.substr(key.find('/') + 1);
}

}  // namespace

ExtenderInformers::ExtenderInformers(const kube::KubeClient& client, ExtenderService& service,
                                     InformerOptions options) {
  const auto add = [&](std::string path, std::string resource, Handler::Apply apply,
                       Handler::Remove remove) {
    handlers_.push_back(std::make_unique<Handler>(resource, std::move(apply), std::move(remove)));
    kube::ReflectorOptions o;
    o.path = std::move(path);
    o.name = std::move(resource);
    o.page_size = options.page_size;
    o.min_watch_timeout = options.min_watch_timeout;
    reflectors_.push_back(std::make_unique<kube::Reflector>(client, o, handlers_.back().get()));
  };
  if (options.watch_nodes) {
    add(
        kNodesPath, "nodes",
        [&service](const std::string& json) {
          QRM_ASSIGN_OR_RETURN(extender::Node node, extender::DecodeNode(json));
          service.UpsertNode(node);
          return Status::Ok();
        },
        [&service](const std::string& key) { service.RemoveNode(NameOf(key)); });
  }
  add(
      kNodeMetricsPath, "nodemetrics",
      [&service](const std::string& json) {
        QRM_ASSIGN_OR_RETURN(NodeMetric metric, DecodeNodeMetric(json));
        service.UpsertNodeMetric(metric);
        return Status::Ok();
      },
      [&service](const std::string& key) { service.RemoveNodeMetric(NameOf(key)); });
  add(
      kPodsPath, "pods",
      [&service](const std::string& json) {
        QRM_ASSIGN_OR_RETURN(extender::Pod pod, extender::DecodePod(json));
        service.UpsertPod(pod);
        return Status::Ok();
      },
      [&service](const std::string& key) { service.RemovePod(key); });
}

ExtenderInformers::~ExtenderInformers() {
  Stop();
}

void ExtenderInformers::Start() {
  for (auto& r : reflectors_) r->Start();
}

void ExtenderInformers::Stop() {
  for (auto& r : reflectors_) r->Stop();
}

bool ExtenderInformers::Synced() const {
  for (const auto& r : reflectors_) {
    if (!r->counters().synced) return false;
  }
  return true;
}

bool ExtenderInformers::WaitSynced(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& r : reflectors_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !r->WaitSynced(left)) return Synced();
  }
  return true;
}

std::vector<InformerState> ExtenderInformers::State() const {
  std::vector<InformerState> out;
  for (size_t i = 0; i < reflectors_.size(); ++i) {
    out.push_back(
        {handlers_[i]->resource(), reflectors_[i]->counters(), handlers_[i]->undecodable()});
  }
  return out;
}

}  // namespace qrm::cluster::scheduler
