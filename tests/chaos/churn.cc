#include "tests/chaos/churn.h"

#include <random>

#include <fmt/format.h>

namespace qrm::chaos {

Churn::Churn(e2e::NodeFixture& node, uint64_t seed, ChurnOptions options)
    : node_(node), seed_(seed), options_(options) {}

Churn::~Churn() {
  Stop();
}

void Churn::Start() {
  for (int i = 0; i < options_.workers; ++i) {
    threads_.emplace_back([this, i] { Work(i, seed_ + static_cast<uint64_t>(i) + 1); });
  }
}

void Churn::Pause() {
  std::unique_lock lock(mu_);
  paused_ = true;
  cv_.wait(lock, [&] { return idle_ == static_cast<int>(threads_.size()) || stopped_; });
}

void Churn::Resume() {
  std::lock_guard lock(mu_);
  paused_ = false;
  cv_.notify_all();
}

void Churn::Stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    cv_.notify_all();
  }
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

ChurnCounts Churn::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

bool Churn::WaitProgress(const ChurnCounts& since, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    return counts_.created + counts_.removed > since.created + since.removed;
  });
}

void Churn::Create(e2e::CriClient& shim, int index, int serial, double roll,
                   std::vector<HeldPod>& held, bool& error) {
  const std::string qos = roll < options_.dedicated_share ? "dedicated_cores"
                          : roll < options_.dedicated_share + options_.reclaimed_share
                              ? "reclaimed_cores"
                              : "shared_cores";
  const std::string name = fmt::format("chaos-w{}-{}", index, serial);
  const std::string uid = name + "-uid";
  auto pod = shim.RunHostNetworkPod(name, uid, "chaos", e2e::Qos(qos));
  if (!pod.ok()) {
    // The sandbox may exist even so (the host died after forwarding): it is only found
    // and removed by the containerd fixture at the end, like a kubelet that lost it.
    std::lock_guard lock(mu_);
    ++counts_.failed;
    error = true;
    return;
  }
  held.push_back({*pod, uid});
  auto id = shim.CreateAndStartContainer(*pod, e2e::OneCpu("main"));
  std::lock_guard lock(mu_);
  if (id.ok()) {
    ++counts_.created;
    cv_.notify_all();
  } else if (qos == "dedicated_cores" && id.status().code() != StatusCode::kUnavailable &&
             id.status().code() != StatusCode::kDeadlineExceeded) {
    ++counts_.refused;  // a refusal for capacity is not an error
  } else {
    ++counts_.failed;
    error = true;
  }
}

void Churn::Work(int index, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  auto shim = std::make_unique<e2e::CriClient>(node_.Shim());
  std::vector<HeldPod> held;
  int serial = 0;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (paused_ && !stopped_) {
        ++idle_;
        cv_.notify_all();
        cv_.wait(lock, [&] { return !paused_ || stopped_; });
        --idle_;
      }
      if (stopped_) return;
    }
    bool error = false;
    if (held.size() < static_cast<size_t>(options_.max_pods) && unit(rng) < 0.6) {
      Create(*shim, index, serial++, unit(rng), held, error);
    } else if (!held.empty()) {
      const size_t pick = static_cast<size_t>(unit(rng) * static_cast<double>(held.size()));
      const HeldPod& victim = held[std::min(pick, held.size() - 1)];
      if (shim->StopAndRemovePod(victim.pod.id).ok()) {
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(std::min(pick, held.size() - 1)));
        std::lock_guard lock(mu_);
        ++counts_.removed;
        cv_.notify_all();
      } else {
        error = true;
        std::lock_guard lock(mu_);
        ++counts_.failed;
      }
    }
    if (error) {
      // A fresh channel: gRPC's reconnect backoff would otherwise outlive a restart.
      shim = std::make_unique<e2e::CriClient>(node_.Shim());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 150));
    }
  }
}

}  // namespace qrm::chaos
