// What every peak prediction model is: it observes a node's usage step by step and predicts
// the peak of the usage that reclaimed work must leave room for.
//
// That usage is the node's "protected" usage: everything but the pods of the reclaimed bands
// (mid, batch, free), i.e. system usage plus Prod pods. On a machine-level trace without pods
// it is the node's usage. Reclaimable capacity is what the prediction leaves of the capacity.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "advisor/usage/usage.h"

namespace qrm::advisor {

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
};

// The step's protected usage: max(node - usage of mid/batch/free pods, 0), representative
// sample and highest sample.
double ProtectedUsage(const Observation& step);
double ProtectedMax(const Observation& step);
bool IsProtected(PriorityClass c);

}  // namespace qrm::advisor
