#include "bench/cri_shim/histogram_deltas.h"

#include <cstdlib>
#include <set>
#include <sstream>

namespace qrm::bench {
namespace {

// "name{labels} value" -> series "name{labels}" (without the suffix) and the value, if the
// sample's name is <histogram>_<suffix> for a histogram declared in `histograms`.
bool SplitSample(const std::string& line, const std::set<std::string>& histograms,
                 const std::string& suffix, std::string* series, double* value) {
  const size_t space = line.rfind(' ');
  if (space == std::string::npos) return false;
  const std::string key = line.substr(0, space);
  const size_t brace = key.find('{');
  const std::string name = key.substr(0, brace);
  if (name.size() <= suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  const std::string family = name.substr(0, name.size() - suffix.size());
  if (!histograms.count(family)) return false;
  *series = family + (brace == std::string::npos ? "" : key.substr(brace));
  *value = std::strtod(line.c_str() + space + 1, nullptr);
  return true;
}

}  // namespace

HistogramTotals ParseHistogramTotals(const std::string& exposition) {
  HistogramTotals totals;
  std::set<std::string> histograms;
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      if (type == "histogram") histograms.insert(name);
      continue;
    }
    std::string series;
    double value = 0;
    if (SplitSample(line, histograms, "_sum", &series, &value)) {
      totals[series].sum = value;
    } else if (SplitSample(line, histograms, "_count", &series, &value)) {
      totals[series].count = value;
    }
  }
  return totals;
}

HistogramTotals Delta(const HistogramTotals& before, const HistogramTotals& after) {
  HistogramTotals delta;
  for (const auto& [series, total] : after) {
    SeriesTotal d = total;
    if (auto it = before.find(series); it != before.end()) {
      d.sum -= it->second.sum;
      d.count -= it->second.count;
    }
    if (d.count > 0) delta[series] = d;
  }
  return delta;
}

}  // namespace qrm::bench
