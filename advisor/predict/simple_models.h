// The other statistical models of the node prediction design:
//
//   borg-default      peak = sum of Prod requests / a (a = 1.1). A step without pods (a
//                     machine-level trace) counts as one pod requesting the whole capacity.
//   resource-central  peak = sum over Prod pods of a percentile of their usage + the same
//                     percentile of system usage (the special pod S); decayed histograms
//                     as Koordinator's, no margin.
//   max               the largest peak of the models it holds.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "advisor/predict/decayed_histogram.h"
#include "advisor/predict/model_state.h"
#include "advisor/predict/peak_model.h"

namespace qrm::advisor {

class BorgDefaultModel : public PeakModel {
 public:
  explicit BorgDefaultModel(double overcommit = 1.1) : overcommit_(overcommit) {}
  std::string_view name() const override { return "borg-default"; }
  void Observe(const Observation& step) override;
  Prediction Predict(int64_t now) const override;
  Status SaveState(rapidjson::Value& out, JsonAllocator& a) const override;
  Status RestoreState(const rapidjson::Value& state) override;

 private:
  double overcommit_;
  double requested_ = 0;
  double capacity_ = 0;
  bool observed_ = false;
};

struct ResourceCentralOptions {
  HistogramOptions histogram;
  double percentile = 0.95;
  int64_t gc_after_s = 30 * 60;
};

class ResourceCentralModel : public PeakModel {
 public:
  explicit ResourceCentralModel(const ResourceCentralOptions& options);
  std::string_view name() const override { return "resource-central"; }
  void Observe(const Observation& step) override;
  Prediction Predict(int64_t now) const override;
  Status SaveState(rapidjson::Value& out, JsonAllocator& a) const override;
  Status RestoreState(const rapidjson::Value& state) override;
  void RetainPods(const std::set<std::string>& uids) override;

 private:
  struct PodModel {
    DecayedHistogram histogram;
    int64_t last_seen = 0;
  };
  Status RestorePod(const std::string& uid, const StateReader& in);
  ResourceCentralOptions options_;
  DecayedHistogram system_;
  std::map<std::string, PodModel> pods_;
  double capacity_ = 0;
  int64_t last_step_ = 0;
  bool observed_ = false;
};

class MaxModel : public PeakModel {
 public:
  MaxModel(std::string name, std::vector<std::unique_ptr<PeakModel>> models);
  std::string_view name() const override { return name_; }
  void Observe(const Observation& step) override;
  Prediction Predict(int64_t now) const override;
  Status SaveState(rapidjson::Value& out, JsonAllocator& a) const override;
  // Each member's state under its name ({"members": [state, ...]}, in the spec's order); all
  // or nothing: when a member refuses its state, those restored before it get theirs back.
  Status RestoreState(const rapidjson::Value& state) override;
  void RetainPods(const std::set<std::string>& uids) override;

 private:
  std::string name_;
  std::vector<std::unique_ptr<PeakModel>> models_;
};

}  // namespace qrm::advisor
