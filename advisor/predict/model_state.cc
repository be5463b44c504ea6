#include "advisor/predict/model_state.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "common/json_string.h"
#include "common/quote.h"

namespace qrm::advisor {
namespace {

constexpr size_t kDoubleDigits = 16;
constexpr size_t kMaxShownChars = 64;

// A value for an error message: a string quoted (escaped, cut at 128 bytes), anything else as
// its JSON text, cut short.
std::string Shown(const rapidjson::Value& value) {
  if (value.IsString()) return Quote(JsonStringView(value));
  std::string text = JsonText(value);
  if (text.size() > kMaxShownChars) text = text.substr(0, kMaxShownChars) + "...";
  return text;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string AtLeast(double min) {
  return std::isinf(min) ? std::string() : fmt::format(" >= {}", min);
}

}  // namespace

std::string EncodeDouble(double value) {
  return fmt::format("{:016x}", std::bit_cast<uint64_t>(value));
}

StatusOr<double> DecodeDouble(std::string_view text) {
  if (text.size() != kDoubleDigits) {
    return InvalidArgumentError(
        fmt::format("{}: not 16 hex digits", Quote(text.substr(0, kMaxShownChars))));
  }
  uint64_t bits = 0;
  for (char c : text) {
    const int digit = HexDigit(c);
    if (digit < 0) return InvalidArgumentError(fmt::format("{}: not lowercase hex", Quote(text)));
    bits = bits << 4 | static_cast<uint64_t>(digit);
  }
  return std::bit_cast<double>(bits);
}

rapidjson::Value DoubleValue(double value, JsonAllocator& allocator) {
  return StringValue(EncodeDouble(value), allocator);
}

rapidjson::Value StringValue(std::string_view text, JsonAllocator& allocator) {
  return rapidjson::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), allocator);
}

Status Malformed(std::string_view path, const rapidjson::Value& value, std::string_view expected) {
  return DataLossError(
      fmt::format("{}: invalid value {} (expected {})", path, Shown(value), expected));
}

StatusOr<int64_t> ReadInt(const rapidjson::Value& value, const std::string& path, int64_t lo,
                          int64_t hi) {
  if (!value.IsInt64() || value.GetInt64() < lo || value.GetInt64() > hi) {
    return Malformed(path, value, fmt::format("an integer from {} to {}", lo, hi));
  }
  return value.GetInt64();
}

StatusOr<int64_t> ReadTime(const rapidjson::Value& value, const std::string& path) {
  if (!value.IsInt64() || value.GetInt64() < -kMaxStateSeconds ||
      value.GetInt64() > kMaxStateSeconds) {
    return Malformed(path, value, "a time in whole seconds within +-2^40");
  }
  return value.GetInt64();
}

StatusOr<double> ReadDouble(const rapidjson::Value& value, const std::string& path, double min) {
  constexpr std::string_view kExpected = "16 lowercase hex digits: the bit pattern of a double";
  if (!value.IsString()) return Malformed(path, value, kExpected);
  StatusOr<double> decoded = DecodeDouble(JsonStringView(value));
  if (!decoded.ok()) return Malformed(path, value, kExpected);
  if (!std::isfinite(*decoded) || !(*decoded >= min)) {
    return DataLossError(fmt::format("{}: invalid value {} ({}; expected a finite number{})", path,
                                     Shown(value), *decoded, AtLeast(min)));
  }
  return *decoded;
}

StatusOr<std::pair<const rapidjson::Value*, const rapidjson::Value*>> ReadPair(
    const rapidjson::Value& value, const std::string& path) {
  if (!value.IsArray() || value.Size() != 2) return Malformed(path, value, "an array of two");
  return std::pair{&value[0], &value[1]};
}

StatusOr<StateReader> StateReader::Of(const rapidjson::Value& value, std::string path) {
  if (!value.IsObject()) return Malformed(path, value, "a JSON object");
  return StateReader(value, std::move(path));
}

std::string StateReader::PathOf(std::string_view name) const {
  return fmt::format("{}.{}", path_, name);
}

const rapidjson::Value* StateReader::Find(const char* name) const {
  const auto it = value_->FindMember(name);
  return it == value_->MemberEnd() ? nullptr : &it->value;
}

StatusOr<const rapidjson::Value*> StateReader::Get(const char* name) const {
  const rapidjson::Value* v = Find(name);
  if (v == nullptr) return DataLossError(fmt::format("{}: missing", PathOf(name)));
  return v;
}

Status StateReader::Bool(const char* name, bool* out) const {
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* v, Get(name));
  if (!v->IsBool()) return Malformed(PathOf(name), *v, "true or false");
  *out = v->GetBool();
  return Status::Ok();
}

Status StateReader::Int(const char* name, int64_t lo, int64_t hi, int64_t* out) const {
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* v, Get(name));
  QRM_ASSIGN_OR_RETURN(*out, ReadInt(*v, PathOf(name), lo, hi));
  return Status::Ok();
}

Status StateReader::Time(const char* name, int64_t* out) const {
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* v, Get(name));
  QRM_ASSIGN_OR_RETURN(*out, ReadTime(*v, PathOf(name)));
  return Status::Ok();
}

Status StateReader::Double(const char* name, double* out, double min) const {
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* v, Get(name));
  QRM_ASSIGN_OR_RETURN(*out, ReadDouble(*v, PathOf(name), min));
  return Status::Ok();
}

StatusOr<std::string> StateReader::String(const char* name) const {
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* v, Get(name));
  if (!v->IsString()) return Malformed(PathOf(name), *v, "a string");
  return JsonString(*v);
}

StatusOr<StateReader> StateReader::Object(const char* name) const {
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* v, Get(name));
  return Of(*v, PathOf(name));
}

StatusOr<const rapidjson::Value*> StateReader::Array(const char* name) const {
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* v, Get(name));
  if (!v->IsArray()) return Malformed(PathOf(name), *v, "an array");
  return v;
}

Status StateReader::OnlyMembers(std::initializer_list<std::string_view> names) const {
  for (const auto& member : value_->GetObject()) {
    const std::string_view name = JsonStringView(member.name);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return DataLossError(fmt::format("{}: unexpected member {}", path_, Quote(name)));
    }
  }
  return Status::Ok();
}

rapidjson::Value NewState(std::string_view model, JsonAllocator& allocator) {
  rapidjson::Value state(rapidjson::kObjectType);
  state.AddMember("model", StringValue(model, allocator), allocator);
  return state;
}

StatusOr<StateReader> OpenState(const rapidjson::Value& state, std::string_view model) {
  QRM_ASSIGN_OR_RETURN(StateReader in, StateReader::Of(state, std::string(model)));
  QRM_ASSIGN_OR_RETURN(const std::string saved, in.String("model"));
  if (saved != model) {
    return Malformed(in.PathOf("model"), state["model"],
                     fmt::format("{}: the state of another model", Quote(model)));
  }
  return in;
}

Status SameOption(const StateReader& options, const char* name, double current) {
  double saved = 0;
  QRM_RETURN_IF_ERROR(options.Double(name, &saved));
  if (saved == current) return Status::Ok();
  return FailedPreconditionError(
      fmt::format("{}: the checkpoint has {}, this model {} (the configuration changed)",
                  options.PathOf(name), saved, current));
}

Status SameOption(const StateReader& options, const char* name, int64_t current) {
  int64_t saved = 0;
  QRM_RETURN_IF_ERROR(options.Int(name, INT64_MIN, INT64_MAX, &saved));
  if (saved == current) return Status::Ok();
  return FailedPreconditionError(
      fmt::format("{}: the checkpoint has {}, this model {} (the configuration changed)",
                  options.PathOf(name), saved, current));
}

Status ForEachPod(const StateReader& in, const char* name,
                  const std::function<Status(const std::string&, const StateReader&)>& decode) {
  QRM_ASSIGN_OR_RETURN(const StateReader pods, in.Object(name));
  std::set<std::string> seen;
  for (const auto& member : pods.value().GetObject()) {
    const std::string uid = JsonString(member.name);
    const std::string path = fmt::format("{}[{}]", pods.path(), Quote(uid));
    if (!seen.insert(uid).second) return DataLossError(path + ": the pod appears twice");
    QRM_ASSIGN_OR_RETURN(const StateReader pod, StateReader::Of(member.value, path));
    QRM_RETURN_IF_ERROR(decode(uid, pod));
  }
  return Status::Ok();
}

}  // namespace qrm::advisor
