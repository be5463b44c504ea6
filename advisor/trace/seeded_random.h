// Random numbers that are the same on every platform for a seed: std::mt19937_64's sequence
// is fixed by the standard, but std::normal_distribution and std::uniform_real_distribution
// are not (libstdc++ and libc++ draw differently), so the conversions are our own.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

namespace qrm::advisor::trace_internal {

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : engine_(seed) {}

  // Uniform in (0, 1]: the top 53 bits of one draw, never 0 so that log() is finite.
  double Uniform() {
    constexpr double kUnit = 1.0 / 9007199254740992.0;  // 2^-53
    return static_cast<double>((engine_() >> 11) + 1) * kUnit;
  }

  // Uniform in [low, high).
  double Uniform(double low, double high) { return low + (high - low) * (1.0 - Uniform()); }

  // Standard normal, by Box-Muller: each pair of uniforms gives two independent normals.
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2.0 * std::log(Uniform()));
    const double angle = 2.0 * std::numbers::pi * Uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

  // Exponential with the given mean (the gaps of a Poisson process).
  double Exponential(double mean) { return -mean * std::log(Uniform()); }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace qrm::advisor::trace_internal
