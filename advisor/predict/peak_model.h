// What every peak prediction model is: it observes a node's usage step by step and predicts
// the peak of the usage that reclaimed work must leave room for.
//
// That usage is the node's "protected" usage: everything but the pods of the reclaimed bands
// (mid, batch, free), i.e. system usage plus Prod pods. On a machine-level trace without pods
// it is the node's usage. Reclaimable capacity is what the prediction leaves of the capacity.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "advisor/usage/usage.h"
#include "common/status.h"

namespace qrm::advisor {

using JsonAllocator = rapidjson::Document::AllocatorType;

struct Prediction {
  // False until the model has observed a step: it has nothing to say yet (the capacity is not
  // even known), and callers keep what they have (the advisor leaves the pools as
  // configured; the replay does not score the window).
  bool known = false;
  // Predicted peak of the protected usage (system + Prod pods), the models' main output.
  double peak = 0;
  // Per priority class (the class's summed usage) and per pod, where the model has them.
  std::map<PriorityClass, double> classes;
  std::map<std::string, double> pods;
};

class PeakModel {
 public:
  virtual ~PeakModel() = default;
  virtual std::string_view name() const = 0;
  // One step's usage; steps arrive in time order.
  virtual void Observe(const Observation& step) = 0;
  // The prediction as of `now`, made only from steps observed so far (all ended by `now`).
  virtual Prediction Predict(int64_t now) const = 0;

  // The learned state, for the advisor's checkpoints (advisor/predict/model_state.h: a JSON
  // object without floats, its "model" member the model's name, the options that shape the
  // state included): enough that a model restored from it predicts exactly what this one
  // would, today and after the same further steps. Every model of this library has one; the
  // default is kUnimplemented.
  virtual Status SaveState(rapidjson::Value& out, JsonAllocator& a) const;
  // Replaces the learned state with `state` (what SaveState gave, in this process or an
  // earlier one). All or nothing: on an error the model is unchanged. Errors: kDataLoss
  // naming the field and the value for a malformed state or one of another model;
  // kFailedPrecondition naming the option and both values for a state learned under other
  // options (the configuration changed: start afresh).
  virtual Status RestoreState(const rapidjson::Value& state);
  // Forgets the pods whose uid is not in `uids`: after a restore, the pods that left while
  // the advisor was down (Koordinator deletes the models of unknown uids at start). Models
  // without per-pod state keep everything (the default).
  virtual void RetainPods(const std::set<std::string>& uids);

 protected:
  // Models are copied and moved only whole (a restore builds the new state aside and moves
  // it in), never through the base.
  PeakModel() = default;
  PeakModel(const PeakModel&) = default;
  PeakModel& operator=(const PeakModel&) = default;
};

// The step's protected usage: max(node - usage of mid/batch/free pods, 0), representative
// sample and highest sample.
double ProtectedUsage(const Observation& step);
double ProtectedMax(const Observation& step);
bool IsProtected(PriorityClass c);

}  // namespace qrm::advisor
