// P4: pod start (RunPodSandbox + CreateContainer + StartContainer of a one-container pod)
// through the shim, with the CPU, memory and NIC plugins admitting it, against the same start
// directly on containerd; interleaved pod by pod in one run (paired_timing.h).
//
// Besides the figure lines it prints, as notes, where the shim's added time goes: each CRI
// call's median on both paths, and the host's and shim's own timers (histograms of the
// in-process metrics registry) per pod started through the shim.
#pragma once

#include "qrm/host/host.h"
#include "testing/e2e/cri_client.h"
#include "testing/temp_dir.h"

namespace qrm::bench {

struct PodStartConfig {
  int warmup = 2;  // pods per path before timing
  int pods = 20;   // timed pods per path, in each run
  int runs = 5;    // consecutive runs, each printed (P4_run<i>)
  // An A/A run (figures P4_null...): both paths go directly to containerd and no plugin is
  // started, so each run's ratio shows the spread containerd alone gives one run's figure.
  bool null_run = false;
};

// Starts the three plugins (children of this process, state under `dir`), waits for them to
// register with `host`, and runs the comparison. False (with a message on stderr) if a
// plugin or a pod fails. A null run calls neither the plugins nor `shim`.
bool ComparePodStart(const PodStartConfig& config, qrm::testing::TempDir& dir,
                     qrm::host::Host& host, qrm::e2e::CriClient& direct, qrm::e2e::CriClient& shim);

}  // namespace qrm::bench
