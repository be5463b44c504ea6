// The JSON state of the statistics the models keep: decayed histograms (with the options that
// shape their weights) and decayed moments (model_state.h).
#include <vector>

#include <fmt/format.h>

#include "advisor/predict/model_state.h"

namespace qrm::advisor {
namespace {

Status CheckComplete(const StateReader& in, std::initializer_list<std::string_view> names) {
  // {} is a statistic that has never been added to; anything else must be complete.
  QRM_RETURN_IF_ERROR(in.OnlyMembers(names));
  for (std::string_view name : names) {
    if (!in.Has(std::string(name).c_str())) {
      return DataLossError(fmt::format("{}: missing", in.PathOf(name)));
    }
  }
  return Status::Ok();
}

// Bucket k of the "buckets" array: [index, weight], indices strictly increasing, weights > 0.
Status ReadBucket(const rapidjson::Value& bucket, const std::string& path, size_t bucket_count,
                  int64_t previous, std::vector<double>& weights, int64_t* index) {
  QRM_ASSIGN_OR_RETURN(const auto pair, ReadPair(bucket, path));
  QRM_ASSIGN_OR_RETURN(
      *index, ReadInt(*pair.first, path + "[0]", 0, static_cast<int64_t>(bucket_count) - 1));
  if (*index <= previous) {
    return Malformed(path + "[0]", *pair.first,
                     fmt::format("a bucket index above the previous one, {}", previous));
  }
  QRM_ASSIGN_OR_RETURN(const double weight, ReadDouble(*pair.second, path + "[1]", 0));
  if (weight == 0) {
    return Malformed(path + "[1]", *pair.second, "a weight > 0 (empty buckets are not stored)");
  }
  weights[static_cast<size_t>(*index)] = weight;
  return Status::Ok();
}

}  // namespace

rapidjson::Value SaveHistogramOptions(const HistogramOptions& options, JsonAllocator& allocator) {
  rapidjson::Value out(rapidjson::kObjectType);
  out.AddMember("first_bucket", DoubleValue(options.first_bucket, allocator), allocator);
  out.AddMember("ratio", DoubleValue(options.ratio, allocator), allocator);
  out.AddMember("max_value", DoubleValue(options.max_value, allocator), allocator);
  out.AddMember("half_life_s", DoubleValue(options.half_life_s, allocator), allocator);
  out.AddMember("min_weight", DoubleValue(options.min_weight, allocator), allocator);
  return out;
}

Status CheckHistogramOptions(const StateReader& state_options, const char* name,
                             const HistogramOptions& current) {
  QRM_ASSIGN_OR_RETURN(const StateReader options, state_options.Object(name));
  QRM_RETURN_IF_ERROR(
      options.OnlyMembers({"first_bucket", "ratio", "max_value", "half_life_s", "min_weight"}));
  QRM_RETURN_IF_ERROR(SameOption(options, "first_bucket", current.first_bucket));
  QRM_RETURN_IF_ERROR(SameOption(options, "ratio", current.ratio));
  QRM_RETURN_IF_ERROR(SameOption(options, "max_value", current.max_value));
  QRM_RETURN_IF_ERROR(SameOption(options, "half_life_s", current.half_life_s));
  return SameOption(options, "min_weight", current.min_weight);
}

rapidjson::Value SaveHistogram(const DecayedHistogram& histogram, JsonAllocator& allocator) {
  rapidjson::Value out(rapidjson::kObjectType);
  if (!histogram.has_reference()) return out;
  rapidjson::Value buckets(rapidjson::kArrayType);
  const std::vector<double> weights = histogram.weights();
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] == 0) continue;
    rapidjson::Value bucket(rapidjson::kArrayType);
    bucket.PushBack(static_cast<uint64_t>(i), allocator);
    bucket.PushBack(DoubleValue(weights[i], allocator), allocator);
    buckets.PushBack(bucket, allocator);
  }
  out.AddMember("reference", histogram.reference_time(), allocator);
  out.AddMember("total", DoubleValue(histogram.TotalWeight(), allocator), allocator);
  out.AddMember("buckets", buckets, allocator);
  return out;
}

Status RestoreHistogram(const StateReader& state, const char* name, DecayedHistogram& out) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, state.Object(name));
  if (in.value().ObjectEmpty()) return Status::Ok();
  QRM_RETURN_IF_ERROR(CheckComplete(in, {"reference", "total", "buckets"}));
  int64_t reference = 0;
  double total = 0;
  QRM_RETURN_IF_ERROR(in.Time("reference", &reference));
  QRM_RETURN_IF_ERROR(in.Double("total", &total, 0));
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* buckets, in.Array("buckets"));
  std::vector<double> weights(out.bucket_count(), 0.0);
  int64_t previous = -1;
  for (rapidjson::SizeType k = 0; k < buckets->Size(); ++k) {
    const std::string path = fmt::format("{}[{}]", in.PathOf("buckets"), k);
    QRM_RETURN_IF_ERROR(
        ReadBucket((*buckets)[k], path, out.bucket_count(), previous, weights, &previous));
  }
  const Status restored = out.Restore(reference, std::move(weights), total);
  if (!restored.ok()) return DataLossError(fmt::format("{}: {}", in.path(), restored.message()));
  return Status::Ok();
}

rapidjson::Value SaveMoments(const DecayedMoments& moments, JsonAllocator& allocator) {
  rapidjson::Value out(rapidjson::kObjectType);
  const DecayedMoments::State s = moments.state();
  if (!s.has_reference) return out;
  out.AddMember("reference", s.reference, allocator);
  out.AddMember("weight", DoubleValue(s.weight, allocator), allocator);
  out.AddMember("sum", DoubleValue(s.sum, allocator), allocator);
  out.AddMember("sum_squares", DoubleValue(s.sum_squares, allocator), allocator);
  return out;
}

Status RestoreMoments(const StateReader& state, const char* name, DecayedMoments& out) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, state.Object(name));
  if (in.value().ObjectEmpty()) return Status::Ok();
  QRM_RETURN_IF_ERROR(CheckComplete(in, {"reference", "weight", "sum", "sum_squares"}));
  DecayedMoments::State s;
  s.has_reference = true;
  QRM_RETURN_IF_ERROR(in.Time("reference", &s.reference));
  QRM_RETURN_IF_ERROR(in.Double("weight", &s.weight, 0));
  QRM_RETURN_IF_ERROR(in.Double("sum", &s.sum));
  QRM_RETURN_IF_ERROR(in.Double("sum_squares", &s.sum_squares, 0));
  out.Restore(s);
  return Status::Ok();
}

}  // namespace qrm::advisor
