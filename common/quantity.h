// Kubernetes resource quantities ("500m", "2Gi", "1e3"): k8s.io/apimachinery's
// resource.Quantity, read and written as the API server and the kubelet do.
//
// A quantity is an exact decimal: its digits are kept as text with a power of ten, never as a
// double, so nothing is rounded but what upstream rounds, and 123456789012345678901234567890
// stays what it says. Parse accepts exactly what upstream's ParseQuantity accepts (its quirks
// included: "Mi", "+" and "." are zero) and rounds the same way (up, away from zero, to whole
// nanos; BinarySI is capped at 2^63-1); ToString writes what upstream's String()/MarshalJSON write,
// including the input text itself in the cases upstream keeps it. docs/kubernetes-api.md lists the
// rules and where we follow upstream fixes that are newer than the released modules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm {

// How a quantity is written: 12M (12 * 10^6), 12Mi (12 * 2^20), 12e6.
enum class QuantityFormat { kDecimalSI, kBinarySI, kDecimalExponent };

// "DecimalSI", "BinarySI", "DecimalExponent": upstream's names.
std::string_view QuantityFormatName(QuantityFormat format);

class Quantity {
 public:
  Quantity() = default;  // zero, DecimalSI

  // milli / 1000 (resource.NewMilliQuantity); BinarySI keeps the format but values below 1024
  // or with a fraction are written as DecimalSI, as upstream does.
  static Quantity FromMilli(int64_t milli, QuantityFormat f = QuantityFormat::kDecimalSI);
  // value (resource.NewQuantity).
  static Quantity FromInt(int64_t value, QuantityFormat f = QuantityFormat::kBinarySI);

  // resource.ParseQuantity. kInvalidArgument naming the text: quantity "1 Mi": ...
  static StatusOr<Quantity> Parse(std::string_view text);

  // The text upstream's String() and MarshalJSON write: "1500m", "2Gi", "1536Mi", "100M",
  // "1e3", "0". Parse(ToString()) gives an equal quantity.
  std::string ToString() const;

  // ceil(value * 1000) and ceil(value), rounded away from zero; past the int64 range they
  // saturate at INT64_MAX / INT64_MIN (upstream returns a wrapped or zero value there).
  int64_t MilliValue() const;
  int64_t Value() const;

  // The nearest double (infinite past the double range).
  double AsDouble() const;

  QuantityFormat format() const { return format_; }

  // The same amount, whatever the format or the text: 1Ki == 1024 == 1.024k.
  bool operator==(const Quantity& other) const {
    return negative_ == other.negative_ && digits_ == other.digits_ && exponent_ == other.exponent_;
  }

 private:
  friend struct QuantityBuilder;

  bool negative_ = false;
  std::string digits_;    // significant digits, no leading or trailing zero; "" for zero
  int64_t exponent_ = 0;  // the amount is digits_ * 10^exponent_
  QuantityFormat format_ = QuantityFormat::kDecimalSI;
  std::string text_;  // the parsed text when upstream keeps it as the output; "" otherwise
};

// A quantity where only a plain, non-negative amount makes sense (a resource request in an
// annotation), as a number: what Quantity::Parse accepts, less a sign or a missing number
// (upstream reads "m" and "Mi" as zero, which here is a typo rather than a request for nothing).
// kInvalidArgument `<what>="<text>": <reason>`, so `what` names the source ("pod annotation
// qrm.io/cpu-request").
StatusOr<double> ParseAmount(std::string_view what, std::string_view text);

}  // namespace qrm
