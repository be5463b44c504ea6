#include "qrm/host/heap_trimmer.h"

#include "common/log.h"
#include "common/malloc_tuning.h"

namespace qrm::host {

HeapTrimmer::HeapTrimmer(boost::asio::io_context& io, std::chrono::milliseconds period)
    : timer_(io), period_(period) {}

void HeapTrimmer::Start() {
  stopped_ = false;
  Schedule();
}

void HeapTrimmer::Stop() {
  stopped_ = true;
}

void HeapTrimmer::Schedule() {
  timer_.expires_after(period_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    const auto start = std::chrono::steady_clock::now();
    const bool released = ReleaseFreeMemory();
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    Logger("host")->debug("heap trim: released={} in {} us", released, took.count());
    Schedule();
  });
}

}  // namespace qrm::host
