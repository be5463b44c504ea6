// Fuzzes the checkpoint loader (checkpoint/checkpoint_file.h, checkpoint::Parse) and the
// decoders of checkpoint data that sit behind it: the host's pod files
// (qrm/state/state_codec.h, DecodePod), its CPU throttles (qrm/throttle/throttle_codec.h,
// DecodeThrottles) and the CPU plugin's state (DecodeState).
//
// A mutated file almost never keeps a valid checksum, so besides the raw bytes the target
// re-seals the input's data: the input's "data" member (or the input itself, when it is an
// object without one) gets a fresh envelope with the right checksum, which lets the fuzzer
// reach the decoders. Properties beyond "does not crash":
//  * Parse errors are kDataLoss (corrupt) or kFailedPrecondition (version), nothing else;
//  * an accepted file, re-encoded the way Write encodes it, parses to the same canonical data;
//  * data that has a canonical form is always accepted once sealed (no false corruption);
//  * a decoded pod, throttle list or CPU state, encoded and decoded again, is the same value,
//    and every decoded throttle meets the bounds a request must meet;
//  * the data as a host journal record (ApplyPodRecord) applies or is kDataLoss, and a pod's
//    own put and remove_pod records apply to it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include "checkpoint/canonical_json.h"
#include "checkpoint/checkpoint_file.h"
#include "checkpoint/checksum.h"
#include "machine/discovery.h"
#include "plugins/cpu/cpu_layout.h"
#include "plugins/cpu/state_checkpoint.h"
#include "qrm/state/state_codec.h"
#include "qrm/throttle/throttle_codec.h"
#include "testing/machine/fake_machine.h"

namespace {

namespace ckpt = qrm::checkpoint;

[[noreturn]] void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "checkpoint_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

void Check(bool ok, const char* what, const std::string& detail = "") {
  if (!ok) Fail(what, detail);
}

// The design document's 80-CPU machine (fake sysfs, discovered once per process), the layout
// the seed CPU states were written on.
const qrm::cpu::CpuLayout& Layout() {
  static const qrm::cpu::CpuLayout layout = [] {
    std::string dir = (std::filesystem::temp_directory_path() / "qrm-ckpt-fuzz-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) Fail("mkdtemp", dir);
    auto paths = qrm::machine::fake::WriteFakeMachine(qrm::machine::fake::Doc80Shape(), dir);
    if (!paths.ok()) Fail("fake machine", paths.status().ToString());
    auto topology = qrm::machine::Discover(paths->Options());
    if (!topology.ok()) Fail("discover", topology.status().ToString());
    std::filesystem::remove_all(dir);
    return qrm::cpu::CpuLayout(*topology);
  }();
  return layout;
}

// The bytes Write would store for `canonical` data.
std::string Seal(uint32_t version, const std::string& canonical) {
  return fmt::format(R"({{"version":{},"checksum":"{}","data":{}}})", version,
                     ckpt::FormatChecksum(canonical), canonical) +
         "\n";
}

ckpt::ReadOptions Options() {
  ckpt::ReadOptions options;
  options.quarantine_corrupt = false;  // in memory anyway; never move anything
  return options;
}

void FuzzRawFile(std::string_view content) {
  auto parsed = ckpt::Parse(content, "fuzz", Options());
  if (!parsed.ok()) {
    Check(ckpt::IsCorrupt(parsed.status()) || ckpt::IsUnsupportedVersion(parsed.status()),
          "unexpected Parse error", parsed.status().ToString());
    return;
  }
  Check(parsed->data.IsObject(), "accepted data is not an object");
  auto canonical = ckpt::CanonicalJson(parsed->data);
  Check(canonical.ok(), "accepted data has no canonical form");
  Check(parsed->checksum == ckpt::FormatChecksum(*canonical), "checksum not the data's");
  auto again = ckpt::Parse(Seal(parsed->version, *canonical), "fuzz", Options());
  Check(again.ok(), "re-encoded file rejected", again.ok() ? "" : again.status().ToString());
  Check(ckpt::CanonicalJson(again->data).value() == *canonical, "re-encoded data differs");
}

void FuzzPodData(const rapidjson::Value& data) {
  auto pod = qrm::state::DecodePod(data);
  if (!pod.ok()) {
    Check(ckpt::IsCorrupt(pod.status()), "DecodePod error code", pod.status().ToString());
    return;
  }
  rapidjson::Document encoded;
  Check(qrm::state::EncodePod(*pod, encoded).ok(), "EncodePod failed on a decoded pod");
  auto again = qrm::state::DecodePod(encoded);
  Check(again.ok(), "encoded pod does not decode", again.ok() ? "" : again.status().ToString());
  Check(*again == *pod, "pod changed in an encode/decode round trip");
  // The host journal's record of it applies to the same pod, and its removal removes it.
  auto record = qrm::state::EncodePodRecord(pod->uid, &*pod);
  Check(record.ok(), "EncodePodRecord failed on a decoded pod");
  qrm::state::PodResources pods;
  auto uid = qrm::state::ApplyPodRecord(*record, pods);
  Check(uid.ok() && *uid == pod->uid && pods.size() == 1, "a put record does not apply",
        uid.ok() ? "" : uid.status().ToString());
  Check(pods.begin()->second->uid == pod->uid &&
            pods.begin()->second->containers.size() == pod->containers.size(),
        "a put record applied another pod");
  auto removal = qrm::state::EncodePodRecord(pod->uid, nullptr);
  Check(removal.ok() && qrm::state::ApplyPodRecord(*removal, pods).ok() && pods.empty(),
        "a remove_pod record does not remove");
}

// Any record: applies, or is kDataLoss (a checksummed record qrm never writes).
void FuzzPodRecord(const rapidjson::Value& data) {
  qrm::state::PodResources pods;
  auto uid = qrm::state::ApplyPodRecord(data, pods);
  if (!uid.ok()) {
    Check(ckpt::IsCorrupt(uid.status()), "ApplyPodRecord error code", uid.status().ToString());
    return;
  }
  Check(pods.size() <= 1, "one record changed more than one pod");
}

void FuzzThrottles(const rapidjson::Value& data) {
  auto throttles = qrm::throttle::DecodeThrottles(data);
  if (!throttles.ok()) {
    Check(ckpt::IsCorrupt(throttles.status()), "DecodeThrottles error code",
          throttles.status().ToString());
    return;
  }
  for (const qrm::throttle::CpuThrottle& t : *throttles) {
    Check(t.quota_us >= qrm::throttle::kMinCpuQuotaUs &&
              t.period_us >= qrm::throttle::kMinCpuPeriodUs &&
              t.period_us <= qrm::throttle::kMaxCpuPeriodUs,
          "a decoded throttle is out of bounds", t.pod_uid);
  }
  rapidjson::Document encoded;
  qrm::throttle::EncodeThrottles(*throttles, encoded);
  auto again = qrm::throttle::DecodeThrottles(encoded);
  Check(again.ok() && *again == *throttles, "throttles changed in an encode/decode round trip");
}

void FuzzCpuState(const rapidjson::Value& data) {
  auto state = qrm::cpu::DecodeState(data, Layout(), "fuzz");
  if (!state.ok()) {
    Check(ckpt::IsCorrupt(state.status()) ||
              state.status().code() == qrm::StatusCode::kFailedPrecondition,
          "DecodeState error code", state.status().ToString());
    return;
  }
  const rapidjson::Document encoded = qrm::cpu::EncodeState(Layout(), *state);
  auto again = qrm::cpu::DecodeState(encoded, Layout(), "fuzz");
  Check(again.ok(), "encoded CPU state does not decode",
        again.ok() ? "" : again.status().ToString());
  Check(*again == *state, "CPU state changed in an encode/decode round trip");
}

// The input's data with a correct envelope: it must load, and then go to the decoders.
void FuzzSealedData(std::string_view content) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(content.data(), content.size());
  if (doc.HasParseError() || !doc.IsObject()) return;
  const bool envelope = doc.HasMember("data") && doc["data"].IsObject();
  const rapidjson::Value& data = envelope ? doc["data"] : doc;
  auto canonical = ckpt::CanonicalJson(data);
  if (!canonical.ok()) return;  // floats, duplicate keys: Write refuses them too
  auto sealed = ckpt::Parse(Seal(ckpt::ReadOptions().max_version, *canonical), "fuzz", Options());
  Check(sealed.ok(), "sealed canonical data rejected",
        sealed.ok() ? "" : sealed.status().ToString());
  FuzzPodData(sealed->data);
  FuzzPodRecord(sealed->data);
  FuzzThrottles(sealed->data);
  FuzzCpuState(sealed->data);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Layout();  // discover before the first input, so its cost is not counted as a slow input
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view content(reinterpret_cast<const char*>(data), size);
  FuzzRawFile(content);
  FuzzSealedData(content);
  return 0;
}
