// metav1.ObjectMeta and metav1.TypeMeta: the parts qrm reads and writes of every object.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace qrm::cluster {

struct ObjectMeta {
  std::string name;
  std::string namespace_;  // empty for cluster-scoped objects
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::optional<int64_t> creation_timestamp;  // Unix seconds
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};

}  // namespace qrm::cluster
