// Fuzzes the restore of the prediction models' learned state (PeakModel::RestoreState, the
// data of the advisor's model checkpoints: advisor/predict/model_state.h). A checkpoint's
// checksum catches damage, not a buggy or hand-edited writer, so a restore meets any JSON.
//
// Input: the first byte selects the model (byte % the number of specs below), the rest is the
// state's JSON text. Properties beyond "does not crash":
//  * every error is kDataLoss (malformed) or kFailedPrecondition (other options);
//  * a refused state leaves the model exactly as it was (nothing half-restored);
//  * an accepted state saves to a state that a fresh model accepts and saves identically;
//  * a restored model observes further steps and predicts (without crashing).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <rapidjson/document.h>

#include "advisor/predict/model_factory.h"
#include "common/json_string.h"

namespace {

using qrm::advisor::Observation;
using qrm::advisor::PeakModel;
using qrm::advisor::PodUsage;
using qrm::advisor::PriorityClass;

constexpr const char* kSpecs[] = {"koordinator",
                                  "nsigma-v1",
                                  "nsigma-v2",
                                  "borg-default",
                                  "resource-central",
                                  "adaptive",
                                  "max:borg-default+nsigma-v1"};
constexpr size_t kSpecCount = sizeof(kSpecs) / sizeof(kSpecs[0]);

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "model_state_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

std::unique_ptr<PeakModel> Make(const char* spec) {
  auto m = qrm::advisor::MakeModel(
      spec, qrm::advisor::ModelOptions::ForResource(qrm::advisor::Resource::kCpu));
  Check(m.ok(), "a spec of the list is refused");
  return std::move(m).value();
}

Observation Step(int64_t time) {
  Observation o;
  o.time = time;
  o.capacity = 32;
  o.pods.push_back(PodUsage{"p1", PriorityClass::kProd, 4, 2, 3, 1'700'000'000});
  o.pods.push_back(PodUsage{"b1", PriorityClass::kBatch, 0, 5, 6, 1'700'000'000});
  o.node = 9;
  o.node_max = 12;
  return o;
}

std::string StateText(const PeakModel& m) {
  rapidjson::Document doc;
  rapidjson::Value state;
  Check(m.SaveState(state, doc.GetAllocator()).ok(), "SaveState failed");
  return qrm::JsonText(state);
}

// An accepted state saves to one that a fresh model takes and saves to the same text; the
// model then goes on observing and predicting.
void CheckAccepted(const char* spec, PeakModel& model) {
  const std::string saved = StateText(model);
  rapidjson::Document again;
  again.Parse(saved.c_str(), saved.size());
  Check(!again.HasParseError(), "a saved state is not JSON");
  std::unique_ptr<PeakModel> fresh = Make(spec);
  Check(fresh->RestoreState(again).ok(), "a saved state is refused");
  Check(StateText(*fresh) == saved, "a saved state restores to another state");
  for (int64_t t = 1'700'000'060; t <= 1'700'000'600; t += 60) {
    model.Observe(Step(t));
    (void)model.Predict(t);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* spec = kSpecs[data[0] % kSpecCount];
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (doc.HasParseError()) return 0;
  std::unique_ptr<PeakModel> model = Make(spec);
  for (int64_t t = 1'699'999'820; t <= 1'700'000'000; t += 60) model->Observe(Step(t));
  const std::string before = StateText(*model);
  const qrm::Status s = model->RestoreState(doc);
  if (s.ok()) {
    CheckAccepted(spec, *model);
    return 0;
  }
  Check(s.code() == qrm::StatusCode::kDataLoss || s.code() == qrm::StatusCode::kFailedPrecondition,
        "an error is neither kDataLoss nor kFailedPrecondition");
  Check(StateText(*model) == before, "a refused state changed the model");
  return 0;
}
