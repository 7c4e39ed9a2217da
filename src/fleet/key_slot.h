// The Redis Cluster slot of a key (DESIGN.md §8.3): CRC16 (XMODEM: poly
// 0x1021, no reflection, initial value 0) of the key's hash tag, modulo
// 16384. The hash tag is what stands between the first '{' and the first '}'
// after it, when that is not empty; else the whole key. Every fleet window
// is swt:{<namespace>:<rule>:<defhash>:<key>}, so all of a window's keys
// would share a slot. Pure; tested against the server's CLUSTER KEYSLOT.
#pragma once

#include <cstdint>
#include <string_view>

namespace swthrottle::fleet {

inline constexpr uint16_t kClusterSlots = 16384;

uint16_t crc16_xmodem(std::string_view bytes);
uint16_t key_slot(std::string_view key);

}  // namespace swthrottle::fleet
