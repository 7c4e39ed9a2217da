// A small PNG decoder for the screenshot tests: what headless Chromium
// writes (8-bit RGB or RGBA, not interlaced) and the other 8-bit colour
// types, read into RGBA pixels that a test can look at.
//
// PNG is a signature, then chunks (length, type, data, CRC-32); the pixels
// are the IDAT chunks' data, concatenated and zlib-deflated: one filter byte
// per scanline (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth) then its bytes,
// each filtered against the pixel to its left, the one above, or both.
// Not supported (a runtime_error, never a wrong picture): bit depths other
// than 8, Adam7 interlacing.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace swthrottle::test {

struct Rgba {
  uint8_t r = 0, g = 0, b = 0, a = 255;
  bool operator==(const Rgba&) const = default;
};

struct Image {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<Rgba> pixels;  // row by row, width * height

  const Rgba& at(uint32_t x, uint32_t y) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
};

// Decodes a whole PNG file. Throws std::runtime_error with the reason when
// the bytes are not a PNG this decoder reads (bad signature, a chunk's CRC,
// truncated or corrupt data, an unsupported format).
Image decode_png(std::string_view bytes);

}  // namespace swthrottle::test
