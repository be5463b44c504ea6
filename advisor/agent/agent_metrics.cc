#include "advisor/agent/agent_metrics.h"

#include <fmt/format.h>

namespace qrm::advisor {

namespace {

void Family(std::string& out, const char* name, const char* type, const char* help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void Sample(std::string& out, const char* name, double value, const std::string& labels = "") {
  fmt::format_to(std::back_inserter(out), "{}{} {}\n", name,
                 labels.empty() ? "" : "{" + labels + "}", value);
}

void AppendSampling(const SamplerCounters& c, const AgentState& s, std::string& out) {
  Family(out, "qrm_advisor_ticks_total", "counter", "Sampling ticks.");
  Sample(out, "qrm_advisor_ticks_total", static_cast<double>(c.ticks));
  Family(out, "qrm_advisor_containers_sampled", "gauge", "Containers sampled in the last tick.");
  Sample(out, "qrm_advisor_containers_sampled", static_cast<double>(s.last_tick.containers.size()));
  Family(out, "qrm_advisor_samples_skipped_total", "counter",
         "Readings left out: cgroups gone or unreadable, node counters unreadable.");
  Sample(out, "qrm_advisor_samples_skipped_total", static_cast<double>(c.vanished),
         "reason=\"vanished\"");
  Sample(out, "qrm_advisor_samples_skipped_total", static_cast<double>(c.unreadable),
         "reason=\"unreadable\"");
  Sample(out, "qrm_advisor_samples_skipped_total", static_cast<double>(c.node_errors),
         "reason=\"node\"");
  Family(out, "qrm_advisor_cpu_counter_resets_total", "counter",
         "CPU counters that went back (a cgroup recreated); no rate was given for them.");
  Sample(out, "qrm_advisor_cpu_counter_resets_total", static_cast<double>(c.cpu_resets));
  Family(out, "qrm_advisor_series", "gauge", "Series in the metric store.");
  Sample(out, "qrm_advisor_series", static_cast<double>(s.store.series_count()));
}

void AppendPredictions(const AgentState& s, const Predictors& p, std::string& out) {
  Family(out, "qrm_advisor_steps_observed_total", "counter", "Steps the models observed.");
  Sample(out, "qrm_advisor_steps_observed_total", static_cast<double>(p.steps_observed()));
  Family(out, "qrm_advisor_predicted_peak", "gauge",
         "Predicted peak of the protected usage (cores, bytes); absent before the first step.");
  const std::string model = p.options().node_model;
  if (s.cpu.known) {
    Sample(out, "qrm_advisor_predicted_peak", s.cpu.peak,
           fmt::format("resource=\"cpu\",model=\"{}\"", model));
  }
  if (s.memory.known) {
    Sample(out, "qrm_advisor_predicted_peak", s.memory.peak,
           fmt::format("resource=\"memory\",model=\"{}\"", model));
  }
  if (s.pool.known) {
    Sample(out, "qrm_advisor_predicted_peak", s.pool.peak,
           fmt::format("resource=\"pool_cpu\",model=\"{}\"", p.options().pool_model));
  }
}

void AppendPools(const PoolReport& r, std::string& out) {
  if (!r.enabled || r.decided == 0) return;  // no decision yet: no size to report
  Family(out, "qrm_advisor_pool_cpus", "gauge", "The last pool sizes decided.");
  Sample(out, "qrm_advisor_pool_cpus", r.shared, "pool=\"shared\"");
  Sample(out, "qrm_advisor_pool_cpus", r.reclaimed, "pool=\"reclaimed\"");
  Family(out, "qrm_advisor_pool_need_cores", "gauge", "What the shared pool needs (cores).");
  Sample(out, "qrm_advisor_pool_need_cores", r.need_cores);
  Family(out, "qrm_advisor_pool_writes_total", "counter", "Pool control file writes.");
  Sample(out, "qrm_advisor_pool_writes_total", static_cast<double>(r.writes), "result=\"ok\"");
  Sample(out, "qrm_advisor_pool_writes_total", static_cast<double>(r.write_failures),
         "result=\"error\"");
}

}  // namespace

void AppendAgentMetrics(const Agent& agent, std::string& out) {
  agent.Read(
      [&](const AgentState& s, const Predictors& p, const PoolReport& r, const SamplerCounters& c) {
        AppendSampling(c, s, out);
        AppendPredictions(s, p, out);
        AppendPools(r, out);
        return 0;
      });
}

}  // namespace qrm::advisor
