#include "advisor/replay/report.h"

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace qrm::advisor {
namespace {

double Percent(double share) {
  return 100 * share;
}

void WriteScore(rapidjson::Writer<rapidjson::StringBuffer>& w, const Score& s) {
  w.StartObject();
  w.Key("windows");
  w.Uint64(s.windows);
  w.Key("missed");
  w.Uint64(s.missed);
  w.Key("violation_rate");
  w.Double(s.ViolationRate());
  w.Key("mean_reclaimable");
  w.Double(s.MeanReclaimable());
  w.Key("miss_p99");
  w.Double(s.MissP99());
  w.EndObject();
}

}  // namespace

std::string ReplayTable(const ReplayResult& result) {
  std::string out = fmt::format("{} machine(s), {} step(s)\n", result.machines, result.steps);
  out += fmt::format("{:<36} {:>8} {:>10} {:>12} {:>9}   {:>8} {:>10} {:>12} {:>9}\n", "MODEL",
                     "WINDOWS", "VIOLATION", "RECLAIMABLE", "MISS_P99", "WARM", "VIOLATION",
                     "RECLAIMABLE", "MISS_P99");
  for (const ModelResult& m : result.models) {
    out += fmt::format(
        "{:<36} {:>8} {:>9.2f}% {:>11.2f}% {:>8.2f}%   {:>8} {:>9.2f}% {:>11.2f}% {:>8.2f}%\n",
        m.model, m.all.windows, Percent(m.all.ViolationRate()), Percent(m.all.MeanReclaimable()),
        Percent(m.all.MissP99()), m.after_warmup.windows, Percent(m.after_warmup.ViolationRate()),
        Percent(m.after_warmup.MeanReclaimable()), Percent(m.after_warmup.MissP99()));
  }
  return out;
}

std::string ReplayJson(const ReplayResult& result) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("machines");
  w.Uint64(result.machines);
  w.Key("steps");
  w.Uint64(result.steps);
  w.Key("models");
  w.StartArray();
  for (const ModelResult& m : result.models) {
    w.StartObject();
    w.Key("model");
    w.String(m.model.c_str(), static_cast<rapidjson::SizeType>(m.model.size()));
    w.Key("all");
    WriteScore(w, m.all);
    w.Key("after_warmup");
    WriteScore(w, m.after_warmup);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace qrm::advisor
