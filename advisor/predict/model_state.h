// The models' learned state as JSON (PeakModel::SaveState / RestoreState), for the advisor's
// checkpoints (advisor/state, docs/advisor.md "Checkpoints"), and the pieces every model's
// state is made of: doubles, times, decayed histograms and moments, the options the state was
// learned under.
//
// A state is what the checkpoint library stores, so it obeys its canonical JSON: no floats.
// Every state is an object whose member "model" is the model's name. Decoding is strict: a
// malformed field is kDataLoss naming its path (e.g. `koordinator.pods["u1"].histogram.total`)
// and the value found; a state learned under other options is kFailedPrecondition naming the
// option and both values.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include <rapidjson/document.h>

#include "advisor/predict/decayed_histogram.h"
#include "advisor/predict/decayed_moments.h"
#include "advisor/predict/peak_model.h"
#include "common/status.h"

namespace qrm::advisor {

// Times in a state lie within +-2^40 s (34,000 years either side of 1970), so that the
// models' arithmetic on them (a step's time minus a restored reference or start, plus a
// horizon) cannot overflow.
inline constexpr int64_t kMaxStateSeconds = int64_t{1} << 40;

// A double is stored as the 16 lowercase hex digits of its IEEE-754 binary64 bit pattern
// ("3ff0000000000000" is 1). The checkpoint's canonical JSON refuses floats (their shortest
// decimal text differs between languages), and a restored model must predict what the saved
// one would to the last bit. The bit pattern is exact, has exactly one spelling per value (so
// the checksummed bytes stay canonical; "%a" text has several, e.g. 0x1p+0 and 0x2p-1) and
// needs no locale (strtod reads "%a" text with the locale's radix character). Any language
// decodes it; Python: struct.unpack(">d", bytes.fromhex(s))[0].
std::string EncodeDouble(double value);
// The double whose bit pattern `text` spells; kInvalidArgument unless it is exactly 16
// lowercase hex digits. NaN and infinities decode; the fields' readers refuse them.
StatusOr<double> DecodeDouble(std::string_view text);

rapidjson::Value DoubleValue(double value, JsonAllocator& allocator);
rapidjson::Value StringValue(std::string_view text, JsonAllocator& allocator);

// kDataLoss "<path>: invalid value <value as JSON> (expected <expected>)".
Status Malformed(std::string_view path, const rapidjson::Value& value, std::string_view expected);

// Element readers for arrays (pairs of a time and a double, bucket index and weight).
StatusOr<int64_t> ReadInt(const rapidjson::Value& value, const std::string& path, int64_t lo,
                          int64_t hi);
StatusOr<int64_t> ReadTime(const rapidjson::Value& value, const std::string& path);
// A finite double >= `min`.
StatusOr<double> ReadDouble(const rapidjson::Value& value, const std::string& path,
                            double min = -HUGE_VAL);
// The two elements of `value`, which must be an array of exactly two.
StatusOr<std::pair<const rapidjson::Value*, const rapidjson::Value*>> ReadPair(
    const rapidjson::Value& value, const std::string& path);

// Reads the members of one JSON object of a state; every error is kDataLoss naming the
// member's path. The object must outlive the reader.
class StateReader {
 public:
  // kDataLoss unless `value` is an object.
  static StatusOr<StateReader> Of(const rapidjson::Value& value, std::string path);

  const std::string& path() const { return path_; }
  const rapidjson::Value& value() const { return *value_; }
  std::string PathOf(std::string_view name) const;
  bool Has(const char* name) const { return Find(name) != nullptr; }

  Status Bool(const char* name, bool* out) const;
  Status Int(const char* name, int64_t lo, int64_t hi, int64_t* out) const;
  Status Time(const char* name, int64_t* out) const;
  Status Double(const char* name, double* out, double min = -HUGE_VAL) const;
  StatusOr<std::string> String(const char* name) const;
  StatusOr<StateReader> Object(const char* name) const;
  StatusOr<const rapidjson::Value*> Array(const char* name) const;
  // kDataLoss unless every member's name is one of `names` (a state is read in full: a
  // member nobody reads is a writer this build does not know).
  Status OnlyMembers(std::initializer_list<std::string_view> names) const;

 private:
  StateReader(const rapidjson::Value& value, std::string path)
      : value_(&value), path_(std::move(path)) {}
  const rapidjson::Value* Find(const char* name) const;
  StatusOr<const rapidjson::Value*> Get(const char* name) const;

  const rapidjson::Value* value_;
  std::string path_;
};

// A new state object for `model`: {"model": model}.
rapidjson::Value NewState(std::string_view model, JsonAllocator& allocator);
// Opens `state` as the state of `model` (its "model" member must say so).
StatusOr<StateReader> OpenState(const rapidjson::Value& state, std::string_view model);

// The options a state was learned under, and their check on restore: kFailedPrecondition
// "<path>.<option>: the checkpoint has X, this model Y (the configuration changed)".
Status SameOption(const StateReader& options, const char* name, double current);
Status SameOption(const StateReader& options, const char* name, int64_t current);

// What shapes a histogram's weights: the bucket layout, the half-life and the weight below
// which a bucket counts as empty.
rapidjson::Value SaveHistogramOptions(const HistogramOptions& options, JsonAllocator& allocator);
// Checks member `name` of `options` (the state's "options" object) against `current`.
Status CheckHistogramOptions(const StateReader& options, const char* name,
                             const HistogramOptions& current);

// A histogram: {"reference", "total", "buckets": [[index, weight], ...]} with only the
// non-empty buckets, so that a file stays small (a pod's usage fills a few of 158); {} for a
// histogram that has never been added to.
rapidjson::Value SaveHistogram(const DecayedHistogram& histogram, JsonAllocator& allocator);
// Restores member `name` of `in` into `out`, a fresh histogram built with the options the
// state was checked against.
Status RestoreHistogram(const StateReader& state, const char* name, DecayedHistogram& out);

// Moments: {"reference", "weight", "sum", "sum_squares"}; {} when never added to.
rapidjson::Value SaveMoments(const DecayedMoments& moments, JsonAllocator& allocator);
Status RestoreMoments(const StateReader& state, const char* name, DecayedMoments& out);

// Calls `decode(uid, reader)` for each member of the object `name` (pods by uid) and returns
// the first error; a uid that appears twice is kDataLoss.
Status ForEachPod(const StateReader& in, const char* name,
                  const std::function<Status(const std::string&, const StateReader&)>& decode);

}  // namespace qrm::advisor
