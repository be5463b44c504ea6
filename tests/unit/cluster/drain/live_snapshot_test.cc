#include "cluster/drain/live_snapshot.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cluster/drain/snapshot_json.h"
#include "cluster/kube/kube_client.h"
#include "common/mutex.h"
#include "testing/kube/object_collection.h"
#include "testing/kube/test_api_server.h"
#include "tests/unit/cluster/kube/test_client.h"

namespace qrm::cluster::drain {
namespace {

using Catch::Matchers::Contains;
using qrm::testing::ApiRequest;
using qrm::testing::ApiResponse;
using qrm::testing::CollectionOptions;
using qrm::testing::ObjectCollection;
using qrm::testing::StatusAnswer;
using qrm::testing::TestApiServer;

// Objects as the API server lists them: list items carry no kind or apiVersion.
std::string Node(const std::string& name) {
  return fmt::format(R"({{"metadata":{{"name":"{}"}},)"
                     R"("status":{{"allocatable":{{"cpu":"4","memory":"8Gi","pods":"110"}}}}}})",
                     name);
}

std::string Pod(const std::string& name, const std::string& node) {
  return fmt::format(
      R"({{"metadata":{{"name":"{}","namespace":"default","labels":{{"app":"web"}}}},)"
      R"("spec":{{"nodeName":"{}","containers":[{{"name":"c","resources":)"
      R"({{"requests":{{"cpu":"100m"}}}}}}]}},"status":{{"phase":"Running"}}}})",
      name, node);
}

std::string Pdb(const std::string& name) {
  return fmt::format(R"({{"metadata":{{"name":"{}","namespace":"default"}},)"
                     R"("spec":{{"minAvailable":1,"selector":{{"matchLabels":{{"app":"web"}}}}}},)"
                     R"("status":{{"disruptionsAllowed":1}}}})",
                     name);
}

std::string Topology(const std::string& node) {
  return fmt::format(R"({{"apiVersion":"topology.node.k8s.io/v1alpha2",)"
                     R"("kind":"NodeResourceTopology","metadata":{{"name":"{}"}},"zones":[]}})",
                     node);
}

// The collections the live reader lists; the topologies only when the CRD is "installed".
struct Cluster {
  explicit Cluster(bool with_topologies = true) {
    REQUIRE(server.Start().ok());
    if (with_topologies) {
      topologies.emplace(server, CollectionOptions{.path = std::string(kTopologiesPath),
                                                   .kind = "NodeResourceTopology",
                                                   .api_version = "topology.node.k8s.io/v1alpha2",
                                                   .status_subresource = false});
    }
  }

  TestApiServer server;
  ObjectCollection nodes{server, {.path = "/api/v1/nodes", .kind = "Node", .api_version = "v1"}};
  ObjectCollection pdbs{server,
                        {.path = std::string(kPdbsPath),
                         .kind = "PodDisruptionBudget",
                         .api_version = "policy/v1",
                         .namespaced = true}};
  ObjectCollection replica_sets{server,
                                {.path = std::string(kReplicaSetsPath),
                                 .kind = "ReplicaSet",
                                 .api_version = "apps/v1",
                                 .namespaced = true}};
  ObjectCollection replication_controllers{server,
                                           {.path = std::string(kReplicationControllersPath),
                                            .kind = "ReplicationController",
                                            .api_version = "v1",
                                            .namespaced = true}};
  ObjectCollection namespaces{
      server, {.path = std::string(kNamespacesPath), .kind = "Namespace", .api_version = "v1"}};
  ObjectCollection claims{server,
                          {.path = std::string(kClaimsPath),
                           .kind = "PersistentVolumeClaim",
                           .api_version = "v1",
                           .namespaced = true}};
  ObjectCollection volumes{
      server, {.path = std::string(kVolumesPath), .kind = "PersistentVolume", .api_version = "v1"}};
  ObjectCollection csi_nodes{
      server,
      {.path = std::string(kCsiNodesPath), .kind = "CSINode", .api_version = "storage.k8s.io/v1"}};
  ObjectCollection storage_classes{server,
                                   {.path = std::string(kStorageClassesPath),
                                    .kind = "StorageClass",
                                    .api_version = "storage.k8s.io/v1"}};
  std::optional<ObjectCollection> topologies;
};

// Pods are added by each test: one test answers pods with its own route instead.
std::unique_ptr<ObjectCollection> PodsOf(TestApiServer& server) {
  return std::make_unique<ObjectCollection>(
      server, CollectionOptions{
                  .path = "/api/v1/pods", .kind = "Pod", .api_version = "v1", .namespaced = true});
}

std::vector<std::string> NamesOf(const std::vector<SnapshotDocument>& documents) {
  std::vector<std::string> names;
  for (const SnapshotDocument& d : documents) names.push_back(d.name);
  return names;
}

TEST_CASE("live documents are every collection's pages and decode into a snapshot") {
  Cluster cluster;
  auto pods = PodsOf(cluster.server);
  cluster.nodes.Seed("n1", Node("n1"));
  cluster.nodes.Seed("n2", Node("n2"));
  pods->Seed("default/web-1", Pod("web-1", "n1"));
  pods->Seed("default/web-2", Pod("web-2", "n2"));
  cluster.pdbs.Seed("default/web", Pdb("web"));
  cluster.topologies->Seed("n1", Topology("n1"));
  cluster.replica_sets.Seed(
      "default/web-rs",
      R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-rs",)"
      R"("namespace":"default"},"spec":{"replicas":2}})");
  cluster.namespaces.Seed("default", R"({"metadata":{"name":"default","labels":{"team":"web"}}})");
  cluster.claims.Seed("default/data", R"({"metadata":{"name":"data","namespace":"default"},)"
                                      R"("spec":{"volumeName":"pv-1"}})");
  cluster.volumes.Seed("pv-1",
                       R"({"metadata":{"name":"pv-1",)"
                       R"("labels":{"topology.kubernetes.io/zone":"a"}},)"
                       R"("spec":{"csi":{"driver":"ebs.csi.aws.com","volumeHandle":"v1"}}})");
  cluster.csi_nodes.Seed("n1", R"({"metadata":{"name":"n1"},"spec":{"drivers":[)"
                               R"({"name":"ebs.csi.aws.com","allocatable":{"count":25}}]}})");
  cluster.storage_classes.Seed("gp3", R"({"metadata":{"name":"gp3"},)"
                                      R"("provisioner":"ebs.csi.aws.com"})");

  const StatusOr<LiveDocuments> docs = ReadLiveDocuments(kube::TestClientFor(cluster.server));
  INFO(docs.status().ToString());
  REQUIRE(docs.ok());
  CHECK(NamesOf(docs->snapshot) ==
        std::vector<std::string>{
            "GET /api/v1/nodes (page 1)", "GET /api/v1/pods (page 1)",
            "GET /apis/policy/v1/poddisruptionbudgets (page 1)",
            "GET /apis/apps/v1/replicasets (page 1)", "GET /api/v1/replicationcontrollers (page 1)",
            "GET /api/v1/namespaces (page 1)", "GET /api/v1/persistentvolumeclaims (page 1)",
            "GET /api/v1/persistentvolumes (page 1)",
            "GET /apis/storage.k8s.io/v1/csinodes (page 1)",
            "GET /apis/storage.k8s.io/v1/storageclasses (page 1)"});
  REQUIRE(docs->topology.size() == 1);
  CHECK(docs->topology[0].name ==
        "GET /apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies (page 1)");
  CHECK_THAT(docs->topology[0].json, Contains(R"("kind":"NodeResourceTopologyList")"));
  CHECK_THAT(docs->topology[0].json, Contains(R"("name":"n1")"));

  const StatusOr<ClusterSnapshot> snapshot = DecodeSnapshot(docs->snapshot, {});
  INFO(snapshot.status().ToString());
  REQUIRE(snapshot.ok());
  CHECK(snapshot->nodes.size() == 2);
  CHECK(snapshot->pods.size() == 2);
  REQUIRE(snapshot->pdbs.size() == 1);
  CHECK(snapshot->pdbs[0].disruptions_allowed == 1);
  CHECK(snapshot->controller_replicas.at("default/ReplicaSet/web-rs") == 2);
  CHECK(snapshot->namespaces.at("default").at("team") == "web");
  CHECK(snapshot->VolumesKnown());
  CHECK(snapshot->claims.at("default/data").volume_name == "pv-1");
  CHECK(snapshot->volumes.at("pv-1").labels.at("topology.kubernetes.io/zone") == "a");
  CHECK(snapshot->volumes.at("pv-1").disk == AttachedDisk{"ebs.csi.aws.com", "v1", false});
  CHECK(snapshot->csi_nodes.at("n1").drivers.at("ebs.csi.aws.com") == 25);
  CHECK(snapshot->storage_classes.at("gp3").provisioner == "ebs.csi.aws.com");
}

TEST_CASE("a collection bigger than a page is read page by page with its continue token") {
  Cluster cluster;
  auto pods = PodsOf(cluster.server);
  cluster.nodes.Seed("n1", Node("n1"));
  for (int i = 0; i < 5; ++i) {
    pods->Seed(fmt::format("default/web-{}", i), Pod(fmt::format("web-{}", i), "n1"));
  }
  const StatusOr<LiveDocuments> docs =
      ReadLiveDocuments(kube::TestClientFor(cluster.server), {.page_size = 2});
  INFO(docs.status().ToString());
  REQUIRE(docs.ok());
  CHECK(NamesOf(docs->snapshot) ==
        std::vector<std::string>{
            "GET /api/v1/nodes (page 1)", "GET /api/v1/pods (page 1)", "GET /api/v1/pods (page 2)",
            "GET /api/v1/pods (page 3)", "GET /apis/policy/v1/poddisruptionbudgets (page 1)",
            "GET /apis/apps/v1/replicasets (page 1)", "GET /api/v1/replicationcontrollers (page 1)",
            "GET /api/v1/namespaces (page 1)", "GET /api/v1/persistentvolumeclaims (page 1)",
            "GET /api/v1/persistentvolumes (page 1)",
            "GET /apis/storage.k8s.io/v1/csinodes (page 1)",
            "GET /apis/storage.k8s.io/v1/storageclasses (page 1)"});
  CHECK(pods->list_requests() == 3);
  const StatusOr<ClusterSnapshot> snapshot = DecodeSnapshot(docs->snapshot, {});
  INFO(snapshot.status().ToString());
  REQUIRE(snapshot.ok());
  CHECK(snapshot->pods.size() == 5);  // each pod once
}

TEST_CASE("the default page size is 500") {
  Cluster cluster;
  auto pods = PodsOf(cluster.server);
  for (int i = 0; i < 501; ++i) {
    pods->Seed(fmt::format("default/p-{}", i), Pod(fmt::format("p-{}", i), "n1"));
  }
  const StatusOr<std::vector<SnapshotDocument>> pages =
      ListPages(kube::TestClientFor(cluster.server), kPodsPath);
  REQUIRE(pages.ok());
  CHECK(pages->size() == 2);
  CHECK(pods->list_requests() == 2);
}

TEST_CASE("without the NodeResourceTopology CRD there are no topology documents") {
  Cluster cluster(false);
  auto pods = PodsOf(cluster.server);
  cluster.nodes.Seed("n1", Node("n1"));
  const StatusOr<LiveDocuments> docs = ReadLiveDocuments(kube::TestClientFor(cluster.server));
  INFO(docs.status().ToString());
  REQUIRE(docs.ok());
  CHECK(docs->snapshot.size() == 10);  // one page of each collection
  CHECK(docs->topology.empty());
}

TEST_CASE("a 403 on namespaces, volumes or storage objects leaves them out; the rest is read") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  ObjectCollection nodes{server, {.path = "/api/v1/nodes", .kind = "Node", .api_version = "v1"}};
  auto pods = PodsOf(server);
  for (std::string_view path : {kPdbsPath, kReplicaSetsPath, kReplicationControllersPath}) {
    server.AddRoute("GET", std::string(path), [](const ApiRequest&) {
      return ApiResponse{200, R"({"kind":"List","apiVersion":"v1","metadata":{},"items":[]})"};
    });
  }
  for (std::string_view path :
       {kNamespacesPath, kClaimsPath, kVolumesPath, kCsiNodesPath, kStorageClassesPath}) {
    server.AddRoute("GET", std::string(path), [](const ApiRequest&) {
      return StatusAnswer(403, "Forbidden", "persistentvolumes is forbidden");
    });
  }
  nodes.Seed("n1", Node("n1"));
  const StatusOr<LiveDocuments> docs = ReadLiveDocuments(kube::TestClientFor(server));
  INFO(docs.status().ToString());
  REQUIRE(docs.ok());
  CHECK(docs->snapshot.size() == 5);
  const StatusOr<ClusterSnapshot> snapshot = DecodeSnapshot(docs->snapshot, {});
  REQUIRE(snapshot.ok());
  CHECK_FALSE(snapshot->VolumesKnown());
  CHECK(snapshot->namespaces.empty());
  CHECK(snapshot->csi_nodes.empty());
  CHECK(snapshot->storage_classes.empty());
}

TEST_CASE("a 403 on pods is an error naming the request and the server's message") {
  Cluster cluster;
  cluster.server.AddRoute("GET", "/api/v1/pods", [](const ApiRequest&) {
    return StatusAnswer(403, "Forbidden",
                        "pods is forbidden: User \"system:serviceaccount:kube-system:drain\" "
                        "cannot list resource \"pods\" in API group \"\" at the cluster scope");
  });
  const StatusOr<LiveDocuments> docs = ReadLiveDocuments(kube::TestClientFor(cluster.server));
  REQUIRE_FALSE(docs.ok());
  CHECK(docs.status().code() == StatusCode::kPermissionDenied);
  CHECK_THAT(docs.status().message(),
             Contains("GET " + cluster.server.url() + "/api/v1/pods?limit=500"));
  CHECK_THAT(docs.status().message(), Contains("403"));
  CHECK_THAT(docs.status().message(), Contains("cannot list resource \"pods\""));
}

TEST_CASE("an error other than 404 on the topologies is an error") {
  Cluster cluster(false);
  auto pods = PodsOf(cluster.server);
  cluster.server.AddRoute("GET", std::string(kTopologiesPath), [](const ApiRequest&) {
    return StatusAnswer(500, "InternalError", "etcd is down");
  });
  const StatusOr<LiveDocuments> docs = ReadLiveDocuments(kube::TestClientFor(cluster.server));
  REQUIRE_FALSE(docs.ok());
  CHECK_THAT(docs.status().message(), Contains("noderesourcetopologies"));
  CHECK_THAT(docs.status().message(), Contains("etcd is down"));
}

TEST_CASE("a page that is not a list is an error naming the page") {
  Cluster cluster;
  cluster.server.AddRoute("GET", "/api/v1/pods", [](const ApiRequest&) {
    return ApiResponse{200, R"({"items":{}})"};
  });
  const StatusOr<LiveDocuments> docs = ReadLiveDocuments(kube::TestClientFor(cluster.server));
  REQUIRE_FALSE(docs.ok());
  CHECK_THAT(docs.status().message(), Contains("GET /api/v1/pods (page 1)"));
  CHECK_THAT(docs.status().message(), Contains("items"));
}

// Pods served by hand: the continue token has expired the first `expiries` times it is sent.
class ExpiringPods {
 public:
  explicit ExpiringPods(int expiries = 1) : expiries_(expiries) {}
  ApiResponse Answer(const ApiRequest& r) {
    MutexLock lock(mu_);
    queries_.push_back(r.query);
    const bool next_page = r.query.find("continue=") != std::string::npos;
    if (next_page && expiries_ > 0) {
      --expiries_;
      return StatusAnswer(410, "Expired", "The provided continue parameter is too old");
    }
    const std::string items = next_page ? Pod("b", "n1") : Pod("a", "n1");
    const std::string cont = next_page ? "" : R"(,"continue":"tok/1+")";
    return ApiResponse{200, fmt::format(R"({{"kind":"PodList","apiVersion":"v1","metadata":)"
                                        R"({{"resourceVersion":"7"{}}},"items":[{}]}})",
                                        cont, items)};
  }
  std::vector<std::string> queries() const {
    MutexLock lock(mu_);
    return queries_;
  }

 private:
  mutable Mutex mu_;
  int expiries_ QRM_GUARDED_BY(mu_);
  std::vector<std::string> queries_ QRM_GUARDED_BY(mu_);
};

TEST_CASE("an expired continue token lists the collection again from its first page") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  ExpiringPods pods;
  server.AddRoute("GET", "/api/v1/pods", [&pods](const ApiRequest& r) { return pods.Answer(r); });
  const StatusOr<std::vector<SnapshotDocument>> pages =
      ListPages(kube::TestClientFor(server), kPodsPath, {.page_size = 1});
  INFO(pages.status().ToString());
  REQUIRE(pages.ok());
  REQUIRE(pages->size() == 2);  // the pages of the second list only
  CHECK((*pages)[0].name == "GET /api/v1/pods (page 1)");
  CHECK_THAT((*pages)[1].json, Contains(R"("name":"b")"));
  // The token is sent escaped.
  CHECK(pods.queries() == std::vector<std::string>{"limit=1", "limit=1&continue=tok%2F1%2B",
                                                   "limit=1", "limit=1&continue=tok%2F1%2B"});
}

TEST_CASE("a continue token that keeps expiring is an error") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  ExpiringPods pods(100);
  server.AddRoute("GET", "/api/v1/pods", [&pods](const ApiRequest& r) { return pods.Answer(r); });
  const StatusOr<std::vector<SnapshotDocument>> pages =
      ListPages(kube::TestClientFor(server), kPodsPath, {.page_size = 1, .max_list_restarts = 2});
  REQUIRE_FALSE(pages.ok());
  CHECK_THAT(pages.status().message(), Contains("410"));
  CHECK(pods.queries().size() == 6);  // the first list and two more
}

}  // namespace
}  // namespace qrm::cluster::drain
