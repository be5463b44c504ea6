#include "cri-shim/call_phases.h"

#include <string>

namespace qrm::shim {
namespace {

const char* MethodName(Intercept method) {
  switch (method) {
    case Intercept::kRunPodSandbox: return "RunPodSandbox";
    case Intercept::kStopPodSandbox: return "StopPodSandbox";
    case Intercept::kRemovePodSandbox: return "RemovePodSandbox";
    case Intercept::kCreateContainer: return "CreateContainer";
    case Intercept::kStartContainer: return "StartContainer";
    case Intercept::kRemoveContainer: return "RemoveContainer";
    case Intercept::kUpdateContainerResources: return "UpdateContainerResources";
    case Intercept::kPassThrough: break;
  }
  return "other";
}

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kQueued: return "queued";
    case Phase::kDecode: return "decode";
    case Phase::kAdmission: return "admission";
    case Phase::kPreStart: return "pre_start";
    case Phase::kEncode: return "encode";
    case Phase::kRuntime: return "runtime";
    case Phase::kRecord: return "record";
  }
  return "other";
}

}  // namespace

metrics::Histogram& CallPhases::Of(Intercept method, Phase phase) {
  std::atomic<metrics::Histogram*>& slot =
      cache_[static_cast<size_t>(method)][static_cast<size_t>(phase)];
  metrics::Histogram* histogram = slot.load(std::memory_order_acquire);
  if (histogram == nullptr) {
    // Two threads may both look it up: the registry returns the same histogram to both.
    histogram = &registry_.GetHistogram(
        "qrm_cri_shim_phase_seconds",
        "Time the CRI shim spends in each phase of the calls it intercepts (queued, decode, "
        "admission, pre_start, encode, runtime, record).",
        {{"method", MethodName(method)}, {"phase", PhaseName(phase)}});
    slot.store(histogram, std::memory_order_release);
  }
  return *histogram;
}

void PhaseClock::Lap(Phase phase) {
  const Clock::time_point now = Clock::now();
  phases_.Of(method_, phase).Observe(std::chrono::duration<double>(now - last_).count());
  last_ = now;
}

}  // namespace qrm::shim
