// Fuzzes the readers of Kubernetes vocabulary that take what the cluster sends: resource
// quantities (common/quantity.h) and the kube-scheduler extender requests
// (cluster/extender/extender_codec.h). The first byte picks the reader, the rest is its input:
//   0  Quantity::Parse: a quantity written back with ToString parses to an equal quantity, and
//      its values agree with each other (Value and MilliValue round the same amount up);
//   1  DecodeExtenderArgs: errors are kInvalidArgument with one printable line; the nodes and
//      node names of an accepted request go into a filter answer that reads back the same;
//   2  DecodeNodeMetric, 3 DecodeNodeResourceTopology (cluster/objects): errors as above; an
//      accepted object written back reads back and writes the same text again;
//   4  a watch stream (cluster/kube/watch_events.h): the input cut in two pieces at its first
//      byte's value through LineSplitter gives the same lines as whole; each line through
//      ParseWatchEvent, and the whole input through ParseListPage: errors as above, an
//      accepted event or item has a key unless it is a bookmark or an error.
// Other selectors are ignored; new readers take the next numbers.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/extender/extender_codec.h"
#include "cluster/kube/watch_events.h"
#include "cluster/objects/node_metric_json.h"
#include "cluster/objects/node_resource_topology.h"
#include "common/quantity.h"

namespace {

using qrm::Quantity;
using qrm::StatusCode;
using qrm::StatusOr;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "kube_objects_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

void CheckError(const qrm::Status& status) {
  Check(status.code() == StatusCode::kInvalidArgument, "an error that is not kInvalidArgument");
  const std::string& message = status.message();
  Check(!message.empty() && message.size() <= 2048, "an empty or over-long message");
  for (const char c : message) Check(c >= 0x20 && c < 0x7f, "a message byte not printable ASCII");
}

void FuzzQuantity(std::string_view text) {
  const StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) {
    CheckError(q.status());
    return;
  }
  const std::string written = q->ToString();
  Check(!written.empty(), "an empty quantity text");
  const StatusOr<Quantity> again = Quantity::Parse(written);
  Check(again.ok(), "the text of a quantity does not parse");
  Check(*again == *q, "the text of a quantity parses to another amount");
  Check(again->ToString() == written, "the text of a quantity is not written back as it is");
  // Both round the same amount x up: for x > 0, value - 1 < x <= value and
  // milli - 1 < 1000x <= milli (unless milli saturated).
  const int64_t value = q->Value();
  const int64_t milli = q->MilliValue();
  if (value > 0 && milli != INT64_MAX) {
    Check((value - 1) * 1000 < milli && milli <= value * 1000, "Value and MilliValue disagree");
  }
}

void FuzzExtenderArgs(std::string_view json) {
  const StatusOr<qrm::extender::ExtenderArgs> args = qrm::extender::DecodeExtenderArgs(json);
  if (!args.ok()) {
    CheckError(args.status());
    return;
  }
  qrm::extender::ExtenderFilterResult result;
  result.nodes = args->nodes;
  result.node_names = args->node_names;
  const StatusOr<qrm::extender::ExtenderFilterResult> back =
      qrm::extender::DecodeExtenderFilterResult(qrm::extender::EncodeExtenderFilterResult(result));
  Check(back.ok(), "a filter answer made of accepted nodes does not read back");
  Check(back->node_names == result.node_names, "node names change through a filter answer");
  Check(back->nodes.has_value() == result.nodes.has_value(), "nodes appear or vanish");
  if (!result.nodes) return;
  Check(back->nodes->items.size() == result.nodes->items.size(), "the node count changes");
  for (size_t i = 0; i < result.nodes->items.size(); ++i) {
    const auto& before = result.nodes->items[i];
    const auto& after = back->nodes->items[i];
    Check(after.metadata.name == before.metadata.name, "a node's name changes");
    Check(after.metadata.labels == before.metadata.labels, "a node's labels change");
    Check(after.status.allocatable == before.status.allocatable, "a node's allocatable changes");
    Check(after.status.capacity == before.status.capacity, "a node's capacity changes");
  }
}

// Decode, encode, decode, encode: the two texts must be equal (nothing lost or invented).
template <typename Decode, typename Encode>
void FuzzObject(std::string_view json, Decode decode, Encode encode) {
  const auto object = decode(json);
  if (!object.ok()) {
    CheckError(object.status());
    return;
  }
  const std::string written = encode(*object);
  const auto again = decode(written);
  Check(again.ok(), "an accepted object written back does not read back");
  Check(encode(*again) == written, "an object changes through a second write");
}

void FuzzWatchStream(std::string_view input) {
  if (input.empty()) return;
  const size_t cut = static_cast<unsigned char>(input[0]) % input.size();
  qrm::kube::LineSplitter whole, pieces;
  const auto all = whole.Feed(input);
  const auto first = pieces.Feed(input.substr(0, cut));
  const auto second = pieces.Feed(input.substr(cut));
  Check(all.ok() && first.ok() && second.ok(), "the line splitter refused a small input");
  std::vector<std::string> joined = *first;
  joined.insert(joined.end(), second->begin(), second->end());
  Check(joined == *all, "lines differ when the stream comes in two pieces");
  for (const std::string& line : *all) {
    const auto event = qrm::kube::ParseWatchEvent(line);
    if (!event.ok()) {
      CheckError(event.status());
      continue;
    }
    const bool keyless = event->type == qrm::kube::WatchEventType::kBookmark ||
                         event->type == qrm::kube::WatchEventType::kError;
    Check(keyless || !event->id.key.empty(), "an accepted event without a key");
  }
  const auto page = qrm::kube::ParseListPage(input);
  if (!page.ok()) {
    CheckError(page.status());
    return;
  }
  for (const auto& item : page->items) Check(!item.id.key.empty(), "a listed item without a key");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case 0: FuzzQuantity(input); break;
    case 1: FuzzExtenderArgs(input); break;
    case 2:
      FuzzObject(
          input, [](std::string_view j) { return qrm::cluster::DecodeNodeMetric(j); },
          [](const qrm::cluster::NodeMetric& m) { return qrm::cluster::EncodeNodeMetric(m); });
      break;
    case 3:
      FuzzObject(
          input, [](std::string_view j) { return qrm::cluster::DecodeNodeResourceTopology(j); },
          [](const qrm::cluster::NodeResourceTopology& n) {
            return qrm::cluster::EncodeNodeResourceTopology(n);
          });
      break;
    case 4: FuzzWatchStream(input); break;
    default: break;
  }
  return 0;
}
