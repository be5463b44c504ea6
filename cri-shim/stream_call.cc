#include "cri-shim/stream_call.h"

#include "cri-shim/metadata.h"

namespace qrm::shim {

StreamCall::StreamCall(grpc::GenericCallbackServerContext* context, grpc::GenericStub& stub,
                       MethodCounters& method_counters, ShimCounters& counters)
    : context_(context), method_counters_(method_counters), counters_(counters) {
  method_counters_.calls.fetch_add(1, std::memory_order_relaxed);
  counters_.passthrough_calls.fetch_add(1, std::memory_order_relaxed);
  client_context_ = ForwardingContext(*context_);
  stub.PrepareBidiStreamingCall(client_context_.get(), context_->method(), grpc::StubOptions(),
                                &client_);
  client_.AddMultipleHolds(2);  // one per pump, released when the pump is closed
  client_.StartRead(&downstream_);
  client_.StartCall();
  StartRead(&upstream_);
}

// --- upstream: kubelet -> runtime ------------------------------------------------------

void StreamCall::OnReadDone(bool ok) {
  {
    MutexLock lock(mu_);
    if (upstream_closed_) return;  // the runtime already finished: drop it
    if (ok) {
      upstream_writing_ = true;
    } else {
      upstream_closed_ = true;
    }
  }
  if (ok) {
    client_.StartWrite(&upstream_);
    return;
  }
  if (context_->IsCancelled()) {
    // The kubelet went away: the runtime's call is cancelled, not completed (OnCancel does
    // the same; whichever comes first wins).
    client_context_->TryCancel();
  } else {
    client_.StartWritesDone();  // the kubelet half-closed: so does the runtime's side
  }
  client_.RemoveHold();
}

void StreamCall::OnClientWrite(bool ok) {
  bool read_more = false;
  {
    MutexLock lock(mu_);
    upstream_writing_ = false;
    if (ok && !downstream_closed_) {
      read_more = true;
    } else {
      upstream_closed_ = true;  // the runtime's stream is over: stop forwarding
    }
  }
  if (read_more) {
    StartRead(&upstream_);
  } else {
    client_.RemoveHold();
  }
}

// --- downstream: runtime -> kubelet ----------------------------------------------------

void StreamCall::OnClientMetadata(bool ok) {
  bool write = false;
  {
    MutexLock lock(mu_);
    // Copied before anything is sent to the kubelet: no message goes before this point.
    if (ok) CopyInitialMetadata(*client_context_, context_);
    metadata_ready_ = true;
    write = message_waiting_;
    message_waiting_ = false;
  }
  if (write) StartWrite(&downstream_);
}

void StreamCall::OnClientRead(bool ok) {
  bool write = false;
  bool abandon_upstream = false;
  {
    MutexLock lock(mu_);
    if (ok) {
      write = metadata_ready_;
      message_waiting_ = !metadata_ready_;
    } else {
      // The runtime finished its stream. Stop reading from the kubelet too, unless a
      // message is being written (its OnClientWrite closes upstream then).
      downstream_closed_ = true;
      if (!upstream_closed_ && !upstream_writing_) {
        upstream_closed_ = true;
        abandon_upstream = true;
      }
    }
  }
  if (write) {
    StartWrite(&downstream_);
    return;
  }
  if (ok) return;  // waits in downstream_ for the initial metadata
  if (abandon_upstream) client_.RemoveHold();
  client_.RemoveHold();  // the read hold: the client side may now finish
}

void StreamCall::OnWriteDone(bool ok) {
  if (ok) {
    client_.StartRead(&downstream_);
    return;
  }
  // The kubelet is gone: cancel the runtime's side; its OnDone finishes ours.
  {
    MutexLock lock(mu_);
    downstream_closed_ = true;
  }
  client_context_->TryCancel();
  client_.RemoveHold();
}

void StreamCall::OnClientDone(const grpc::Status& status) {
  // Every client operation is over (both holds released), so nothing else touches the
  // client side, and no server write is in flight (one is started only after a client
  // read, and the last client read failed).
  CopyTrailingMetadata(*client_context_, context_);
  if (!status.ok()) {
    method_counters_.errors.fetch_add(1, std::memory_order_relaxed);
    counters_.errors.fetch_add(1, std::memory_order_relaxed);
  }
  Finish(status);
  Unref();
}

void StreamCall::OnCancel() {
  client_context_->TryCancel();
}

void StreamCall::OnDone() {
  Unref();
}

void StreamCall::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace qrm::shim
