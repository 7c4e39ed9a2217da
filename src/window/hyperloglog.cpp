#include "window/hyperloglog.h"

#include <cmath>
#include <limits>

namespace swthrottle::window::hll {
namespace {

// sigma(x) = x + sum_{k >= 1} x^(2^k) 2^(k-1), for the empty registers (Ertl, eq. 37).
double sigma(double x) {
  if (x == 1.0) return std::numeric_limits<double>::infinity();
  double z = x, previous = -1, y = 1;
  while (z != previous) {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  }
  return z;
}

// tau(x) = (1 - x - sum_{k >= 1} (1 - x^(2^-k))^2 2^-k) / 3, for the full ones (Ertl, eq. 40).
double tau(double x) {
  if (x == 0.0 || x == 1.0) return 0.0;
  double z = 1 - x, previous = -1, y = 1;
  while (z != previous) {
    x = std::sqrt(x);
    previous = z;
    y *= 0.5;
    z -= (1 - x) * (1 - x) * y;
  }
  return z / 3;
}

}  // namespace

Histogram histogram_of(std::span<const uint8_t> registers) {
  Histogram h{};
  for (const uint8_t r : registers) ++h[r < kMaxRank ? r : kMaxRank];
  return h;
}

double estimate(const Histogram& h) {
  constexpr double m = static_cast<double>(kRegisters);
  // The improved raw estimator: alpha_inf m^2 / z, z built from the
  // histogram from the top rank down (Ertl, algorithm 6).
  double z = m * tau(1.0 - h[kMaxRank] / m);
  for (int k = kMaxRank - 1; k >= 1; --k) z = 0.5 * (z + h[k]);
  z += m * sigma(h[0] / m);
  constexpr double kAlphaInf = 0.7213475204444817;  // 1 / (2 ln 2)
  return kAlphaInf * m * m / z;
}

}  // namespace swthrottle::window::hll
