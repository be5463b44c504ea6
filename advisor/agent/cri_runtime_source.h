// CriRuntimeSource: the agent's RuntimeSource over a CRI runtime endpoint (advisor/discover's
// ContainerDirectory): which containers run and where their cgroups are.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "advisor/agent/agent.h"
#include "advisor/discover/container_directory.h"

namespace qrm::advisor {

class CriRuntimeSource : public RuntimeSource {
 public:
  CriRuntimeSource(const std::string& endpoint, ContainerDirectoryOptions options);
  StatusOr<std::vector<TrackedContainer>> ListContainers() override;
  uint64_t skipped_total() const { return directory_.skipped_total(); }

 private:
  ContainerDirectory directory_;
};

}  // namespace qrm::advisor
