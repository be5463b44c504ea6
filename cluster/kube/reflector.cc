#include "cluster/kube/reflector.h"

#include <random>
#include <set>

#include <fmt/format.h>

#include "cluster/kube/url_query.h"
#include "common/log.h"

namespace qrm::kube {
namespace {

bool IsExpired(const KubeResponse& answer) {
  return answer.code == 410;
}

}  // namespace

Reflector::Reflector(KubeClient client, ReflectorOptions options, ReflectorHandler* handler)
    : client_(std::move(client)), options_(std::move(options)), handler_(handler) {
  if (options_.min_watch_timeout < std::chrono::seconds(1)) {
    options_.min_watch_timeout = std::chrono::seconds(1);
  }
  if (options_.page_size < 1) options_.page_size = 1;
}

Reflector::~Reflector() {
  Stop();
}

void Reflector::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(std::move(stop)); });
}

void Reflector::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  sleep_cv_.notify_all();
  thread_.join();
}

bool Reflector::WaitSynced(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    {
      MutexLock lock(mu_);
      if (counters_.synced) return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

ReflectorCounters Reflector::counters() const {
  MutexLock lock(mu_);
  ReflectorCounters c = counters_;
  return c;
}

void Reflector::Failed(const Status& status) {
  log_->warn("resource={}: {}", options_.name, status.ToString());
  MutexLock lock(mu_);
  ++counters_.errors;
  counters_.last_error = status.ToString();
}

bool Reflector::Sleep(const std::stop_token& stop, std::chrono::milliseconds delay) {
  std::unique_lock lock(sleep_mu_);
  return !sleep_cv_.wait_for(lock, stop, delay, [] { return false; }) && !stop.stop_requested();
}

// List, then watch until a watch fails; a failure backs off and relists.
void Reflector::Run(std::stop_token stop) {
  std::chrono::milliseconds backoff = options_.backoff_initial;
  while (!stop.stop_requested()) {
    if (Status listed = List(stop); !listed.ok()) {
      if (stop.stop_requested()) return;
      Failed(listed);
      if (!Sleep(stop, backoff)) return;
      backoff = std::min(backoff * 2, options_.backoff_max);
      continue;
    }
    WatchEnd end = WatchEnd::kClosed;
    while (end == WatchEnd::kClosed && !stop.stop_requested()) {
      bool delivered = false;
      const auto started = std::chrono::steady_clock::now();
      end = Watch(stop, delivered);
      if (delivered) backoff = options_.backoff_initial;
      // A watch the server ends at once without an event (a proxy that cuts long requests, an
      // overloaded server) is retried after the back-off, as client-go does, not in a loop.
      const bool short_and_empty =
          !delivered && std::chrono::steady_clock::now() - started < std::chrono::seconds(1);
      if (end == WatchEnd::kClosed && short_and_empty && !stop.stop_requested()) {
        if (!Sleep(stop, backoff)) return;
        backoff = std::min(backoff * 2, options_.backoff_max);
      }
    }
    if (stop.stop_requested()) return;
    if (end == WatchEnd::kFailed) {
      if (!Sleep(stop, backoff)) return;
      backoff = std::min(backoff * 2, options_.backoff_max);
    }
  }
}

std::string Reflector::ListPath(const std::string& continue_token) const {
  std::string path = fmt::format("{}?limit={}", options_.path, options_.page_size);
  if (!options_.label_selector.empty()) {
    path += "&labelSelector=" + QueryEscaped(options_.label_selector);
  }
  if (!options_.field_selector.empty()) {
    path += "&fieldSelector=" + QueryEscaped(options_.field_selector);
  }
  if (!continue_token.empty()) path += "&continue=" + QueryEscaped(continue_token);
  return path;
}

// Every page into a new set, then the differences to the handler: a list never half-applied.
Status Reflector::List(const std::stop_token& stop) {
  std::map<std::string, ListedObject> listed;
  std::string token, version;
  do {
    if (stop.stop_requested()) return Status(StatusCode::kCancelled, "stopped");
    const std::string path = ListPath(token);
    QRM_ASSIGN_OR_RETURN(KubeResponse answer, client_.Request("GET", path));
    if (IsExpired(answer) && !token.empty()) {  // the snapshot expired: start again
      token.clear();
      listed.clear();
      continue;
    }
    QRM_RETURN_IF_ERROR(ApiError("GET", client_.UrlOf(path), answer));
    StatusOr<ListPage> page = ParseListPage(answer.body);
    if (!page.ok()) return page.status().WithContext("GET " + client_.UrlOf(path));
    if (token.empty()) version = page->resource_version;
    for (ListedObject& item : page->items) listed[item.id.key] = std::move(item);
    token = page->continue_token;
  } while (!token.empty());
  for (auto it = known_.begin(); it != known_.end();) {
    if (listed.contains(it->first)) {
      ++it;
      continue;
    }
    handler_->OnDelete(it->first);
    it = known_.erase(it);
  }
  for (const auto& [key, item] : listed) {
    std::string& known = known_[key];
    if (known == item.id.resource_version && !known.empty()) continue;
    known = item.id.resource_version;
    handler_->OnUpsert(key, item.json);
  }
  version_ = version;
  handler_->OnSynced();
  MutexLock lock(mu_);
  ++counters_.lists;
  counters_.synced = true;
  counters_.resource_version = version;
  return Status::Ok();
}

std::string Reflector::WatchPath() const {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  const int64_t min = options_.min_watch_timeout.count();
  const int64_t timeout = min + static_cast<int64_t>(random() % static_cast<uint64_t>(min));
  std::string path = fmt::format("{}?watch=true&allowWatchBookmarks=true&timeoutSeconds={}",
                                 options_.path, timeout);
  if (!version_.empty()) path += "&resourceVersion=" + QueryEscaped(version_);
  if (!options_.label_selector.empty()) {
    path += "&labelSelector=" + QueryEscaped(options_.label_selector);
  }
  if (!options_.field_selector.empty()) {
    path += "&fieldSelector=" + QueryEscaped(options_.field_selector);
  }
  return path;
}

// One watch, its events delivered as they come. kClosed: the server ended it (watch again
// from version_); kExpired: relist; kFailed: back off, then relist.
Reflector::WatchEnd Reflector::Watch(const std::stop_token& stop, bool& delivered) {
  const std::string path = WatchPath();
  {
    MutexLock lock(mu_);
    ++counters_.watches;
  }
  LineSplitter lines;
  Status broken;  // a bad line or event ends the watch
  bool expired = false;
  const auto sink = [&](std::string_view piece) {
    StatusOr<std::vector<std::string>> got = lines.Feed(piece);
    if (!got.ok()) broken = got.status();
    for (const std::string& line : got.ok() ? *got : std::vector<std::string>{}) {
      StatusOr<WatchEvent> event = ParseWatchEvent(line);
      if (!event.ok()) broken = event.status();
      if (!broken.ok()) break;
      if (event->type == WatchEventType::kError && event->error && event->error->code == 410) {
        expired = true;
        break;
      }
      broken = Deliver(*event);
      if (!broken.ok()) break;
      delivered = true;
    }
    return broken.ok() && !expired;
  };
  const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(
      options_.min_watch_timeout * 2 + std::chrono::seconds(30));
  StatusOr<KubeResponse> answer = client_.Stream(path, idle, sink, stop);
  if (stop.stop_requested()) return WatchEnd::kClosed;
  if (expired || (answer.ok() && IsExpired(*answer))) {
    log_->info("resource={}: resourceVersion {} expired: listing again", options_.name, version_);
    MutexLock lock(mu_);
    ++counters_.expired;
    return WatchEnd::kExpired;
  }
  if (!answer.ok()) broken = answer.status();
  if (broken.ok()) broken = ApiError("GET", client_.UrlOf(path), *answer);
  if (broken.ok()) return WatchEnd::kClosed;
  Failed(broken);
  return WatchEnd::kFailed;
}

Status Reflector::Deliver(const WatchEvent& event) {
  if (event.type == WatchEventType::kError) {
    return UnavailableError(fmt::format("watch of {}: ERROR event: {} {}", options_.name,
                                        event.error ? event.error->code : 0,
                                        event.error ? event.error->message : event.json));
  }
  if (!event.id.resource_version.empty()) version_ = event.id.resource_version;
  if (event.type == WatchEventType::kBookmark) return Status::Ok();
  if (event.type == WatchEventType::kDeleted) {
    known_.erase(event.id.key);
    handler_->OnDelete(event.id.key);
  } else {
    known_[event.id.key] = event.id.resource_version;
    handler_->OnUpsert(event.id.key, event.json);
  }
  MutexLock lock(mu_);
  ++counters_.events;
  counters_.resource_version = version_;
  return Status::Ok();
}

}  // namespace qrm::kube
