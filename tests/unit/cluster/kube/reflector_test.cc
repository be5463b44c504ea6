#include "cluster/kube/reflector.h"

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "common/mutex.h"
#include "testing/kube/object_collection.h"
#include "testing/kube/test_api_server.h"

namespace qrm::kube {
namespace {

using Catch::Matchers::Contains;
using qrm::testing::ObjectCollection;
using qrm::testing::TestApiServer;
using qrm::testing::TestApiServerOptions;
using namespace std::chrono_literals;

constexpr char kPath[] = "/apis/slo.koordinator.sh/v1alpha1/nodemetrics";

// What a handler was told: the objects it holds now, and the calls in order.
class Recorder : public ReflectorHandler {
 public:
  void OnUpsert(const std::string& key, const std::string& json) override {
    MutexLock lock(mu_);
    objects_[key] = json;
    calls_.push_back("upsert " + key);
  }
  void OnDelete(const std::string& key) override {
    MutexLock lock(mu_);
    objects_.erase(key);
    calls_.push_back("delete " + key);
  }
  void OnSynced() override {
    MutexLock lock(mu_);
    calls_.push_back("synced");
  }
  std::map<std::string, std::string> objects() const {
    MutexLock lock(mu_);
    return objects_;
  }
  std::vector<std::string> calls() const {
    MutexLock lock(mu_);
    return calls_;
  }
  // Waits up to 5 s for `done(objects)`.
  template <typename Done>
  bool WaitFor(Done done) const {
    for (int i = 0; i < 500; ++i) {
      if (done(objects())) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

 private:
  mutable Mutex mu_;
  std::map<std::string, std::string> objects_ QRM_GUARDED_BY(mu_);
  std::vector<std::string> calls_ QRM_GUARDED_BY(mu_);
};

std::string Metric(const std::string& name, int value) {
  return fmt::format(R"({{"apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeMetric",)"
                     R"("metadata":{{"name":"{}"}},"status":{{"v":{}}}}})",
                     name, value);
}

bool Holds(const std::map<std::string, std::string>& objects, const std::string& key, int value) {
  const auto it = objects.find(key);
  return it != objects.end() &&
         it->second.find(fmt::format("\"v\":{}", value)) != std::string::npos;
}

struct Fixture {
  explicit Fixture(TestApiServerOptions options = {}) : server(options) {
    REQUIRE(server.Start().ok());
  }
  KubeClient Client() const {
    ClusterConfig config;
    config.server = server.url();
    config.ca_data = server.pki().ca.cert_pem;
    config.token = "test-token";
    config.timeout = 5s;
    StatusOr<KubeClient> client = KubeClient::Create(config);
    REQUIRE(client.ok());
    return *client;
  }
  ReflectorOptions Options() const {
    ReflectorOptions o;
    o.path = kPath;
    o.name = "nodemetrics";
    o.backoff_initial = 20ms;
    o.backoff_max = 100ms;
    return o;
  }

  TestApiServer server;
  ObjectCollection metrics{server, {kPath, "NodeMetric", "slo.koordinator.sh/v1alpha1"}};
  Recorder recorder;
};

TEST_CASE("a reflector lists in pages then follows adds changes and deletes") {
  Fixture f;
  for (int i = 0; i < 5; ++i)
    f.metrics.Seed(fmt::format("n{}", i), Metric(fmt::format("n{}", i), i));
  ReflectorOptions options = f.Options();
  options.page_size = 2;
  Reflector reflector(f.Client(), options, &f.recorder);
  reflector.Start();
  REQUIRE(reflector.WaitSynced(5s));
  CHECK(f.recorder.objects().size() == 5);
  CHECK(f.metrics.list_requests() == 3);  // 2 + 2 + 1
  f.metrics.Seed("n1", Metric("n1", 11));
  f.metrics.Seed("n9", Metric("n9", 9));
  f.metrics.Delete("n0");
  CHECK(f.recorder.WaitFor(
      [](const auto& o) { return Holds(o, "n1", 11) && Holds(o, "n9", 9) && !o.contains("n0"); }));
  const ReflectorCounters c = reflector.counters();
  CHECK(c.lists == 1);
  CHECK(c.events == 3);
  CHECK(c.resource_version == std::to_string(f.metrics.resource_version()));
}

TEST_CASE("a watch the server ends is resumed from the last version without a relist") {
  Fixture f;
  f.metrics.Seed("a", Metric("a", 1));
  Reflector reflector(f.Client(), f.Options(), &f.recorder);
  reflector.Start();
  REQUIRE(reflector.WaitSynced(5s));
  REQUIRE(f.recorder.WaitFor([&](const auto&) { return f.metrics.open_watches() == 1; }));
  f.metrics.CloseWatches();
  f.metrics.Seed("a", Metric("a", 2));  // while no watch is open: replayed from the history
  CHECK(f.recorder.WaitFor([](const auto& o) { return Holds(o, "a", 2); }));
  const ReflectorCounters c = reflector.counters();
  CHECK(c.lists == 1);
  CHECK(c.watches >= 2);
  CHECK(c.errors == 0);
}

TEST_CASE("an expired version relists and hands over what changed meanwhile") {
  Fixture f;
  f.metrics.Seed("a", Metric("a", 1));
  f.metrics.Seed("b", Metric("b", 1));
  Reflector reflector(f.Client(), f.Options(), &f.recorder);
  reflector.Start();
  REQUIRE(reflector.WaitSynced(5s));
  REQUIRE(f.recorder.WaitFor([&](const auto&) { return f.metrics.open_watches() == 1; }));
  f.metrics.CloseWatches();
  f.metrics.Delete("a");
  f.metrics.Seed("b", Metric("b", 2));
  f.metrics.Seed("c", Metric("c", 3));
  f.metrics.Compact();  // the watch from the old version gets an ERROR 410 event
  CHECK(f.recorder.WaitFor(
      [](const auto& o) { return !o.contains("a") && Holds(o, "b", 2) && Holds(o, "c", 3); }));
  const ReflectorCounters c = reflector.counters();
  CHECK(c.expired >= 1);
  CHECK(c.lists == 2);
  const std::vector<std::string> calls = f.recorder.calls();
  CHECK(std::count(calls.begin(), calls.end(), "synced") == 2);
  CHECK(std::count(calls.begin(), calls.end(), "delete a") == 1);
}

TEST_CASE("bookmarks move the resume version without an event") {
  Fixture f;
  Reflector reflector(f.Client(), f.Options(), &f.recorder);
  reflector.Start();
  REQUIRE(reflector.WaitSynced(5s));
  REQUIRE(f.recorder.WaitFor([&](const auto&) { return f.metrics.open_watches() == 1; }));
  f.metrics.Seed("x", Metric("x", 1));
  f.metrics.Delete("x");
  REQUIRE(f.recorder.WaitFor([](const auto& o) { return o.empty(); }));
  f.metrics.Bookmark();
  const std::string want = std::to_string(f.metrics.resource_version());
  bool moved = false;
  for (int i = 0; i < 200 && !moved; ++i, std::this_thread::sleep_for(10ms)) {
    moved = reflector.counters().resource_version == want;
  }
  CHECK(moved);
  CHECK(reflector.counters().events == 2);
}

TEST_CASE("a refused list is counted with the server's answer and retried") {
  Fixture f;
  f.server.SetToken("other");
  Reflector reflector(f.Client(), f.Options(), &f.recorder);
  reflector.Start();
  CHECK_FALSE(reflector.WaitSynced(300ms));
  const ReflectorCounters c = reflector.counters();
  CHECK(c.errors >= 2);
  CHECK_THAT(c.last_error, Contains("401"));
  CHECK_THAT(c.last_error, Contains(kPath));
  f.server.SetToken("test-token");
  CHECK(reflector.WaitSynced(5s));
}

TEST_CASE("stop ends an open watch promptly") {
  Fixture f;
  Reflector reflector(f.Client(), f.Options(), &f.recorder);
  reflector.Start();
  REQUIRE(reflector.WaitSynced(5s));
  REQUIRE(f.recorder.WaitFor([&](const auto&) { return f.metrics.open_watches() == 1; }));
  const auto start = std::chrono::steady_clock::now();
  reflector.Stop();
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK(f.recorder.WaitFor([&](const auto&) { return f.metrics.open_watches() == 0; }));
}

TEST_CASE("a watch streams over HTTPS with namespaced keys") {
  Fixture f(TestApiServerOptions{.tls = true});
  ObjectCollection pods(f.server, {.path = "/api/v1/pods",
                                   .kind = "Pod",
                                   .api_version = "v1",
                                   .status_subresource = false,
                                   .namespaced = true,
                                   .binding = true});
  pods.Seed(
      "default/p1",
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"default"},"spec":{}})");
  ReflectorOptions options = f.Options();
  options.path = "/api/v1/pods";
  options.name = "pods";
  Reflector reflector(f.Client(), options, &f.recorder);
  reflector.Start();
  REQUIRE(reflector.WaitSynced(5s));
  CHECK(f.recorder.objects().contains("default/p1"));
  REQUIRE(f.recorder.WaitFor([&](const auto&) { return pods.open_watches() == 1; }));
  StatusOr<KubeResponse> bound =
      f.Client().Request("POST", "/api/v1/namespaces/default/pods/p1/binding",
                         R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},)"
                         R"("target":{"apiVersion":"v1","kind":"Node","name":"node-7"}})");
  REQUIRE(bound.ok());
  CHECK(bound->code == 201);
  CHECK(f.recorder.WaitFor([](const auto& o) {
    const auto it = o.find("default/p1");
    return it != o.end() && it->second.find(R"("nodeName":"node-7")") != std::string::npos &&
           it->second.find(R"("type":"PodScheduled","status":"True")") != std::string::npos;
  }));
  StatusOr<KubeResponse> again = f.Client().Request(
      "POST", "/api/v1/namespaces/default/pods/p1/binding",
      R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},"target":{"name":"n2"}})");
  REQUIRE(again.ok());
  CHECK(again->code == 409);
}

}  // namespace
}  // namespace qrm::kube

namespace qrm::kube {
namespace {

TEST_CASE("a refused watch backs off and lists again") {
  Fixture f;
  f.metrics.Seed("a", Metric("a", 1));
  Reflector reflector(f.Client(), f.Options(), &f.recorder);
  reflector.Start();
  REQUIRE(reflector.WaitSynced(5s));
  REQUIRE(f.recorder.WaitFor([&](const auto&) { return f.metrics.open_watches() == 1; }));
  f.server.SetToken("rotated");
  f.metrics.CloseWatches();  // the next watch is refused
  REQUIRE(f.recorder.WaitFor([&](const auto&) { return reflector.counters().errors >= 1; }));
  CHECK_THAT(reflector.counters().last_error, Contains("watch=true"));
  f.metrics.Seed("a", Metric("a", 2));
  f.server.SetToken("test-token");
  CHECK(f.recorder.WaitFor([](const auto& o) { return Holds(o, "a", 2); }));
  CHECK(reflector.counters().lists >= 2);
}

}  // namespace
}  // namespace qrm::kube

namespace qrm::kube {
namespace {

TEST_CASE("a JSON patch of a node status reaches the watch") {
  Fixture f;
  ObjectCollection nodes(
      f.server,
      {.path = "/api/v1/nodes", .kind = "Node", .api_version = "v1", .status_patch = true});
  nodes.Seed("n1", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},)"
                   R"("status":{"capacity":{"cpu":"4"}}})");
  ReflectorOptions options = f.Options();
  options.path = "/api/v1/nodes";
  Reflector reflector(f.Client(), options, &f.recorder);
  reflector.Start();
  REQUIRE(reflector.WaitSynced(5s));
  const std::string patch =
      R"([{"op":"add","path":"/status/capacity/example.com~1widget","value":"2"}])";
  StatusOr<KubeResponse> patched =
      f.Client().Request("PATCH", "/api/v1/nodes/n1/status", patch, "application/json-patch+json");
  REQUIRE(patched.ok());
  CHECK(patched->code == 200);
  CHECK(f.recorder.WaitFor([](const auto& o) {
    const auto it = o.find("n1");
    return it != o.end() && it->second.find(R"("example.com/widget":"2")") != std::string::npos;
  }));
  StatusOr<KubeResponse> merge =
      f.Client().Request("PATCH", "/api/v1/nodes/n1/status", "{}", "application/merge-patch+json");
  REQUIRE(merge.ok());
  CHECK(merge->code == 415);
  StatusOr<KubeResponse> failing =
      f.Client().Request("PATCH", "/api/v1/nodes/n1/status",
                         R"([{"op":"test","path":"/status/capacity/cpu","value":"8"}])",
                         "application/json-patch+json");
  REQUIRE(failing.ok());
  CHECK(failing->code == 422);
}

}  // namespace
}  // namespace qrm::kube

namespace qrm::kube {
namespace {

TEST_CASE("watches the server ends at once without events are retried after a back-off") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  // Lists answer an empty collection; every watch is closed before its first event.
  server.AddRoute("GET", "/api/v1/nodes", [](const testing::ApiRequest& r) {
    if (r.query.find("watch=true") == std::string::npos) {
      return testing::ApiResponse{
          200, R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},)"
               R"("items":[]})"};
    }
    testing::ApiResponse answer;
    answer.feed = std::make_shared<testing::WatchFeed>();
    answer.feed->Close();
    return answer;
  });
  ClusterConfig config;
  config.server = server.url();
  config.token = "test-token";
  config.timeout = 5s;
  StatusOr<KubeClient> client = KubeClient::Create(config);
  REQUIRE(client.ok());
  Recorder recorder;
  ReflectorOptions options;
  options.path = "/api/v1/nodes";
  options.name = "nodes";
  options.backoff_initial = 100ms;
  options.backoff_max = 200ms;
  Reflector reflector(*client, options, &recorder);
  reflector.Start();
  REQUIRE(reflector.WaitSynced(5s));
  std::this_thread::sleep_for(1s);
  const ReflectorCounters c = reflector.counters();
  CHECK(c.watches >= 2);   // it does come back
  CHECK(c.watches <= 12);  // 100, 200, 200, ... ms apart; hundreds without the back-off
  CHECK(c.lists == 1);
}

}  // namespace
}  // namespace qrm::kube
