// The kubectl-shaped fixtures of the drain tests (fixtures/*.json) and small builders.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cluster/drain/snapshot_json.h"
#include "testing/temp_dir.h"

namespace qrm::cluster::drain {

inline SnapshotDocument Fixture(const std::string& name) {
  return {name, testing::ReadFile(std::string(QRM_DRAIN_FIXTURE_DIR) + "/" + name)};
}

// A `kubectl get -o json` List of the given items (each a JSON object text).
inline SnapshotDocument ListOf(const std::vector<std::string>& items) {
  std::string json = R"({"apiVersion": "v1", "kind": "List", "items": [)";
  for (size_t i = 0; i < items.size(); ++i) json += (i ? "," : "") + items[i];
  return {"test.json", json + "]}"};
}

inline std::string NodeJson(const std::string& name, const std::string& cpu = "4",
                            const std::string& memory = "8Gi") {
  return R"({"kind": "Node", "metadata": {"name": ")" + name +
         R"("}, "status": {"allocatable": {"cpu": ")" + cpu + R"(", "memory": ")" + memory +
         R"(", "pods": "110"}}})";
}

// The snapshot of the documents; the test fails when they do not decode.
inline ClusterSnapshot MustDecode(const std::vector<SnapshotDocument>& docs,
                                  const DecodeOptions& options = {}) {
  StatusOr<ClusterSnapshot> s = DecodeSnapshot(docs, options);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *std::move(s);
}

// The error message of decoding `docs`; the test fails when they decode.
inline std::string DecodeError(const std::vector<SnapshotDocument>& docs) {
  StatusOr<ClusterSnapshot> s = DecodeSnapshot(docs, {});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::kInvalidArgument);
  return s.status().message();
}

}  // namespace qrm::cluster::drain
