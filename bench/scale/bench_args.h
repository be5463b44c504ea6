// Command-line handling and small statistics shared by the scale benchmarks.
// Benchmark-only code.
#pragma once

#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <vector>

namespace qrm::bench {

// "--name value" pairs (every flag takes a value) plus the repeatable "--only ID" of
// scripts/bench's contract. Unknown flags are an error so a typo does not silently run the
// default configuration.
class BenchArgs {
 public:
  // `ints`: the integer flags this executable accepts, with their defaults.
  BenchArgs(std::map<std::string, int> ints, std::map<std::string, std::string> strings = {})
      : ints_(std::move(ints)), strings_(std::move(strings)) {}

  // Returns an error message, or empty on success.
  std::string Parse(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag.rfind("--", 0) != 0 || i + 1 >= argc) return flag + ": expected --flag VALUE";
      const std::string name = flag.substr(2), value = argv[++i];
      if (name == "only") {
        only_.push_back(value);
      } else if (auto it = ints_.find(name); it != ints_.end()) {
        int parsed = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
        if (ec != std::errc() || end != value.data() + value.size() || parsed < 0) {
          return flag + ": invalid value \"" + value + "\" (expected a non-negative integer)";
        }
        it->second = parsed;
      } else if (auto s = strings_.find(name); s != strings_.end()) {
        s->second = value;
      } else {
        return "unknown flag " + flag;
      }
    }
    return "";
  }

  int Int(const std::string& name) const { return ints_.at(name); }
  const std::string& String(const std::string& name) const { return strings_.at(name); }

  // Whether figure `id` was asked for: no --only, or an --only naming it, its family
  // (P8 selects P8_socket) or a member of it.
  bool Selected(const std::string& id) const {
    if (only_.empty()) return true;
    return std::any_of(only_.begin(), only_.end(), [&](const std::string& o) {
      return id == o || id.rfind(o + "_", 0) == 0 || id.rfind(o + ".", 0) == 0 ||
             o.rfind(id + "_", 0) == 0;
    });
  }

 private:
  std::map<std::string, int> ints_;
  std::map<std::string, std::string> strings_;
  std::vector<std::string> only_;
};

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace qrm::bench
