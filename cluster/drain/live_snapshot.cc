#include "cluster/drain/live_snapshot.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "cluster/kube/url_query.h"
#include "cluster/kube/watch_events.h"
#include "common/log.h"

namespace qrm::cluster::drain {
namespace {

constexpr char kComponent[] = "drain";

std::string PagePath(std::string_view path, int64_t page_size, const std::string& token) {
  std::string out = fmt::format("{}?limit={}", path, page_size);
  if (!token.empty()) out += "&continue=" + kube::QueryEscaped(token);
  return out;
}

// The continue token of a page: the page must be a list, whatever its items are (the
// decoders judge those and name the bad one).
StatusOr<std::string> ContinueToken(const std::string& body, const std::string& name) {
  StatusOr<kube::ListPage> page = kube::ParseListPage(body);
  if (!page.ok()) return page.status().WithContext(name);
  return std::move(page->continue_token);
}

}  // namespace

StatusOr<std::vector<SnapshotDocument>> ListPages(const kube::KubeClient& client,
                                                  std::string_view path,
                                                  const LiveReadOptions& options) {
  const int64_t page_size = std::max<int64_t>(1, options.page_size);
  std::vector<SnapshotDocument> pages;
  std::string token;
  int restarts = 0;
  for (;;) {
    const std::string request = PagePath(path, page_size, token);
    QRM_ASSIGN_OR_RETURN(kube::KubeResponse answer, client.Request("GET", request));
    // 410 on a later page: the first page's snapshot was compacted away. The pages read so
    // far are of that snapshot, so they go too: mixing two snapshots could show a pod twice.
    if (answer.code == 410 && !token.empty() && restarts < options.max_list_restarts) {
      ++restarts;
      Logger(kComponent)
          ->info("GET {}: continue token expired after {} pages, listing again", path,
                 pages.size());
      pages.clear();
      token.clear();
      continue;
    }
    QRM_RETURN_IF_ERROR(kube::ApiError("GET", client.UrlOf(request), answer));
    SnapshotDocument page{fmt::format("GET {} (page {})", path, pages.size() + 1),
                          std::move(answer.body)};
    QRM_ASSIGN_OR_RETURN(token, ContinueToken(page.json, page.name));
    pages.push_back(std::move(page));
    if (token.empty()) break;
  }
  Logger(kComponent)->debug("GET {}: {} pages", path, pages.size());
  return pages;
}

StatusOr<LiveDocuments> ReadLiveDocuments(const kube::KubeClient& client,
                                          const LiveReadOptions& options) {
  LiveDocuments out;
  for (const std::string_view path :
       {kNodesPath, kPodsPath, kPdbsPath, kReplicaSetsPath, kReplicationControllersPath}) {
    QRM_ASSIGN_OR_RETURN(std::vector<SnapshotDocument> pages, ListPages(client, path, options));
    std::move(pages.begin(), pages.end(), std::back_inserter(out.snapshot));
  }
  // Optional: a ClusterRole from before they were read may not allow them. Without them the
  // checks that need them are off (volumes) or refuse the input that needs them (a
  // namespaceSelector by label), each saying so.
  for (const std::string_view path :
       {kNamespacesPath, kClaimsPath, kVolumesPath, kCsiNodesPath, kStorageClassesPath}) {
    StatusOr<std::vector<SnapshotDocument>> pages = ListPages(client, path, options);
    if (!pages.ok() && pages.status().code() == StatusCode::kPermissionDenied) {
      Logger(kComponent)
          ->warn(
              "GET {}: forbidden, planning without them (grant list on it: see "
              "examples/deploy/kubernetes/qrm-drain-planner.yaml): {}",
              path, pages.status().message());
      continue;
    }
    if (!pages.ok()) return pages.status();
    std::move(pages->begin(), pages->end(), std::back_inserter(out.snapshot));
  }
  StatusOr<std::vector<SnapshotDocument>> topology = ListPages(client, kTopologiesPath, options);
  if (topology.ok()) {
    out.topology = *std::move(topology);
  } else if (topology.status().code() == StatusCode::kNotFound) {
    // No CRD, no NUMA state: the planner then checks resources only, as CA does.
    Logger(kComponent)
        ->info(
            "GET {}: not found, the NodeResourceTopology CRD is not installed: planning without "
            "NUMA state",
            kTopologiesPath);
  } else {
    return topology.status();
  }
  Logger(kComponent)
      ->info("read {} snapshot pages and {} NodeResourceTopology pages from {}",
             out.snapshot.size(), out.topology.size(), client.UrlOf(""));
  return out;
}

}  // namespace qrm::cluster::drain
