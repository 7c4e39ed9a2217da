// Preset: what kind of place a delivery destination is (man page: DELIVERY),
// which says what its requests look like. `preset` in [[delivery.destination]].
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace swthrottle::config {

enum class Preset { Webhook, Alertmanager, Slack, Discord, Teams, PagerDuty, Opsgenie };

inline constexpr std::array<std::string_view, 7> kPresetNames = {"webhook", "alertmanager", "slack",   "discord",
                                                                 "teams",   "pagerduty",    "opsgenie"};

constexpr std::string_view to_string(Preset p) { return kPresetNames[static_cast<std::size_t>(p)]; }

constexpr std::optional<Preset> preset_named(std::string_view name) {
  for (std::size_t i = 0; i < kPresetNames.size(); ++i)
    if (kPresetNames[i] == name) return static_cast<Preset>(i);
  return std::nullopt;
}

}  // namespace swthrottle::config
