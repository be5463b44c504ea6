// PendingCall: one plugin RPC in flight on a caller's completion queue; AwaitCalls, which waits
// for a batch of them; FanOut, which sends a batch and returns the answers.
//
// Admission asks every plugin at once. Sending the calls from the admitting thread on one
// completion queue, instead of handing each to a worker that blocks in a synchronous call,
// saves the hand-off to a pool thread and back for each call: 11 % fewer context switches per
// admission in P5 (bench/admission_bench.cc; its latency stayed within noise), and an
// admission never waits for a pool thread busy with removals or reconcile.
//
// The tag of a call on the queue is the call itself; a call that was never sent (its endpoint
// is stopped) has no reader and is not waited for.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/support/async_unary_call.h>

#include "common/metrics/metrics.h"
#include "common/status.h"

namespace qrm::registry {

template <typename Resp>
struct PendingCall {
  grpc::ClientContext context;
  Resp response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<Resp>> reader;  // null: never sent
  metrics::Stopwatch watch;
  double seconds = 0;              // how long it took, set by AwaitCalls when it completes
  std::optional<Status> not_sent;  // why it was not sent
};

// Waits on `cq` until every call of `calls` that was sent has completed, then shuts the queue
// down and drains it (a queue must be empty when it is destroyed).
template <typename Resp>
void AwaitCalls(grpc::CompletionQueue& cq,
                const std::vector<std::unique_ptr<PendingCall<Resp>>>& calls) {
  size_t in_flight = 0;
  for (const auto& call : calls) in_flight += call->reader != nullptr ? 1 : 0;
  void* tag = nullptr;
  bool ok = false;
  // Each sent call's Finish completes exactly once, whatever its outcome (deadline included).
  for (; in_flight > 0 && cq.Next(&tag, &ok); --in_flight) {
    auto* call = static_cast<PendingCall<Resp>*>(tag);
    call->seconds = call->watch.Seconds();
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
}

// Sends `n` calls at once on one queue (`start(i, cq)` returns call i), waits for them, and
// returns `finish(i, call)` for each, in order.
template <typename Call, typename Start, typename Finish>
auto FanOut(size_t n, Start start, Finish finish) {
  grpc::CompletionQueue cq;
  std::vector<std::unique_ptr<Call>> calls;
  for (size_t i = 0; i < n; ++i) calls.push_back(start(i, &cq));
  AwaitCalls(cq, calls);
  std::vector<decltype(finish(size_t{0}, *calls.front()))> answers;
  for (size_t i = 0; i < n; ++i) answers.push_back(finish(i, *calls[i]));
  return answers;
}

}  // namespace qrm::registry
