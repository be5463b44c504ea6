// Reflector: keeps a handler in step with one collection of the Kubernetes API, as client-go's
// reflector and informer do (docs/kubernetes-api.md, "Watching"):
//  * list, in pages of `page_size` (a page whose continue token expired restarts the list);
//  * watch from the list's resourceVersion with allowWatchBookmarks and a timeoutSeconds drawn
//    in [min_watch_timeout, 2 * min_watch_timeout) so a fleet of watchers does not reconnect
//    at once; a watch the server ends is started again from the last resourceVersion seen
//    (after the back-off when it ended within a second without an event);
//  * a watch answered 410 Gone, or an ERROR event with code 410 (the version was compacted),
//    relists; so does any other failure, after a back-off of 0.8 s doubling to 30 s (reset by
//    a watch that delivered events);
//  * after a relist the handler gets what changed: objects whose resourceVersion differs are
//    upserted, objects no longer listed deleted.
// The handler runs on the reflector's own thread, one call at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "cluster/kube/kube_client.h"
#include "cluster/kube/watch_events.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace qrm::kube {

struct ReflectorOptions {
  std::string path;  // the collection: "/apis/slo.koordinator.sh/v1alpha1/nodemetrics"
  std::string name;  // for logs: "nodemetrics"
  std::string label_selector;
  std::string field_selector;
  int64_t page_size = 500;
  std::chrono::seconds min_watch_timeout{300};  // client-go's minWatchTimeout
  std::chrono::milliseconds backoff_initial{800};
  std::chrono::milliseconds backoff_max{30000};
};

class ReflectorHandler {
 public:
  virtual ~ReflectorHandler() = default;
  // An object added or changed: its key ("name", "namespace/name") and JSON.
  virtual void OnUpsert(const std::string& key, const std::string& json) = 0;
  // An object deleted (a DELETED event, or gone from a relist).
  virtual void OnDelete(const std::string& key) = 0;
  // Each list was delivered: the handler now holds what the server held at that version.
  virtual void OnSynced() {}
};

struct ReflectorCounters {
  uint64_t lists = 0;    // complete lists (each may be several pages)
  uint64_t watches = 0;  // watch requests
  uint64_t expired = 0;  // 410 answers and events: relists the server asked for
  uint64_t events = 0;   // ADDED, MODIFIED, DELETED delivered
  uint64_t errors = 0;   // failed requests and bad events
  std::string last_error;
  std::string resource_version;  // the last one seen
  bool synced = false;           // a list was delivered
};

class Reflector {
 public:
  // `handler` must outlive the reflector.
  Reflector(KubeClient client, ReflectorOptions options, ReflectorHandler* handler);
  ~Reflector();  // stops
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void Start();
  void Stop();  // idempotent; a watch in flight ends within 100 ms
  // Waits until the first list was delivered; false on timeout.
  bool WaitSynced(std::chrono::milliseconds timeout) const QRM_EXCLUDES(mu_);
  ReflectorCounters counters() const QRM_EXCLUDES(mu_);

 private:
  enum class WatchEnd { kClosed, kExpired, kFailed };

  void Run(std::stop_token stop);
  Status List(const std::stop_token& stop);
  WatchEnd Watch(const std::stop_token& stop, bool& delivered);
  Status Deliver(const WatchEvent& event);
  std::string WatchPath() const;
  std::string ListPath(const std::string& continue_token) const;
  void Failed(const Status& status) QRM_EXCLUDES(mu_);
  bool Sleep(const std::stop_token& stop, std::chrono::milliseconds delay);

  const std::shared_ptr<spdlog::logger> log_ = Logger("reflector");
  const KubeClient client_;
  ReflectorOptions options_;  // as given, bounds enforced
  ReflectorHandler* const handler_;
  // Only the reflector's thread uses these two.
  std::map<std::string, std::string> known_;  // key -> resourceVersion delivered
  std::string version_;                       // where the next watch starts

  mutable Mutex mu_;
  ReflectorCounters counters_ QRM_GUARDED_BY(mu_);
  std::mutex sleep_mu_;  // guards nothing: the back-off's wait, woken by a stop
  std::condition_variable_any sleep_cv_;
  std::jthread thread_;
};

}  // namespace qrm::kube
