#include "input/k8s_path.h"

#include <array>

namespace swthrottle::input {
namespace {

// The last `n` components of `path` (fewer: empty views first).
template <std::size_t N>
std::array<std::string_view, N> last_components(std::string_view path) {
  std::array<std::string_view, N> out{};
  for (std::size_t k = N; k-- > 0 && !path.empty();) {
    const std::size_t slash = path.rfind('/');
    out[k] = slash == std::string_view::npos ? path : path.substr(slash + 1);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
  }
  return out;
}

// "A_B_C" -> {A, B, C}; false unless there are exactly three, none empty.
bool three(std::string_view s, std::array<std::string_view, 3>& parts) {
  const std::size_t a = s.find('_');
  if (a == std::string_view::npos) return false;
  const std::size_t b = s.find('_', a + 1);
  if (b == std::string_view::npos || s.find('_', b + 1) != std::string_view::npos) return false;
  parts = {s.substr(0, a), s.substr(a + 1, b - a - 1), s.substr(b + 1)};
  return !parts[0].empty() && !parts[1].empty() && !parts[2].empty();
}

bool hex_id(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

match::PodOrigin pod_of_path(std::string_view path) {
  const auto [pods, pod_dir, container, file] = last_components<4>(path);
  if (!file.ends_with(".log")) return {};
  const std::string_view stem = file.substr(0, file.size() - 4);
  std::array<std::string_view, 3> parts;
  // /var/log/pods/NAMESPACE_POD_UID/CONTAINER/RESTARTS.log
  if (pods == "pods" && !stem.empty() && stem.find_first_not_of("0123456789") == std::string_view::npos &&
      !container.empty() && three(pod_dir, parts))
    return {std::string(parts[0]), std::string(parts[1]), std::string(container)};
  // /var/log/containers/POD_NAMESPACE_CONTAINER-ID.log
  const std::size_t dash = stem.rfind('-');
  if (container == "containers" && dash != std::string_view::npos && hex_id(stem.substr(dash + 1)) &&
      three(stem.substr(0, dash), parts))
    return {std::string(parts[1]), std::string(parts[0]), std::string(parts[2])};
  return {};
}

}  // namespace swthrottle::input
