#include "support/png.h"

#include <zlib.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace swthrottle::test {

namespace {

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error("png: " + why); }

uint32_t be32(std::string_view b, std::size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[at])) << 24 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 1])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 2])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 3]));
}

// The predictor of filter 4 (PNG spec 9.4): whichever of left, above and
// upper-left is closest to left + above - upper-left; ties in that order.
uint8_t paeth(uint8_t a, uint8_t b, uint8_t c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  if (pb <= pc) return b;
  return c;
}

std::string inflate_all(std::string_view data, std::size_t expected) {
  std::string out(expected, '\0');
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) fail("inflateInit");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int r = inflate(&zs, Z_FINISH);
  const std::size_t got = zs.total_out;
  inflateEnd(&zs);
  if (r != Z_STREAM_END) fail("image data: zlib error " + std::to_string(r) + " (corrupt, truncated or too long)");
  if (got != expected) fail("image data: " + std::to_string(got) + " bytes, not " + std::to_string(expected));
  return out;
}

}  // namespace

Image decode_png(std::string_view bytes) {
  constexpr std::string_view kSignature = "\x89PNG\r\n\x1a\n";
  if (!bytes.starts_with(kSignature)) fail("no PNG signature");

  uint32_t width = 0, height = 0;
  int color_type = -1;
  std::string idat;
  std::string palette;        // PLTE: RGB triples
  std::string palette_alpha;  // tRNS of a palette image: one alpha per entry, the rest opaque
  bool ended = false;
  for (std::size_t at = kSignature.size(); !ended;) {
    if (bytes.size() - at < 12) fail("truncated chunk");
    const uint32_t length = be32(bytes, at);
    if (bytes.size() - at - 12 < length) fail("truncated chunk");
    const std::string_view type = bytes.substr(at + 4, 4);
    const std::string_view data = bytes.substr(at + 8, length);
    const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(bytes.data() + at + 4), length + 4);
    if (crc != be32(bytes, at + 8 + length)) fail("bad CRC in chunk " + std::string(type));
    at += 12 + length;

    if (type == "IHDR") {
      if (length != 13) fail("IHDR of " + std::to_string(length) + " bytes");
      width = be32(data, 0);
      height = be32(data, 4);
      const int depth = static_cast<unsigned char>(data[8]);
      color_type = static_cast<unsigned char>(data[9]);
      if (depth != 8) fail("bit depth " + std::to_string(depth) + " (only 8 is read)");
      if (color_type != 0 && color_type != 2 && color_type != 3 && color_type != 4 && color_type != 6)
        fail("colour type " + std::to_string(color_type));
      if (data[10] != 0 || data[11] != 0) fail("unknown compression or filter method");
      if (data[12] != 0) fail("interlaced (not read)");
      if (width == 0 || height == 0 || width > 1u << 14 || height > 1u << 14) fail("size out of range");
    } else if (type == "PLTE") {
      palette = data;
    } else if (type == "tRNS") {
      if (color_type == 3) palette_alpha = data;
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      ended = true;
    } else if ((static_cast<unsigned char>(type[0]) & 0x20) == 0) {
      fail("unknown critical chunk " + std::string(type));
    }
  }
  if (color_type < 0) fail("no IHDR");
  if (color_type == 3 && palette.empty()) fail("palette image without PLTE");

  const std::size_t channels = color_type == 0   ? 1
                               : color_type == 2 ? 3
                               : color_type == 3 ? 1
                               : color_type == 4 ? 2
                                                 : 4;
  const std::size_t stride = width * channels;  // bytes of one unfiltered scanline
  std::string raw = inflate_all(idat, height * (stride + 1));

  // Unfilter in place: line y's bytes at raw[y * (stride + 1) + 1 ...], the
  // line above already unfiltered; "left" is one pixel (channels bytes) back.
  Image img;
  img.width = width;
  img.height = height;
  img.pixels.resize(static_cast<std::size_t>(width) * height);
  auto* p = reinterpret_cast<uint8_t*>(raw.data());
  for (std::size_t y = 0; y < height; ++y) {
    uint8_t* line = p + y * (stride + 1) + 1;
    const uint8_t* up = y > 0 ? line - (stride + 1) : nullptr;
    const int filter = line[-1];
    for (std::size_t i = 0; i < stride; ++i) {
      const uint8_t a = i >= channels ? line[i - channels] : 0;
      const uint8_t b = up ? up[i] : 0;
      const uint8_t c = up && i >= channels ? up[i - channels] : 0;
      switch (filter) {
        case 0: break;
        case 1: line[i] = static_cast<uint8_t>(line[i] + a); break;
        case 2: line[i] = static_cast<uint8_t>(line[i] + b); break;
        case 3: line[i] = static_cast<uint8_t>(line[i] + (a + b) / 2); break;
        case 4: line[i] = static_cast<uint8_t>(line[i] + paeth(a, b, c)); break;
        default: fail("filter type " + std::to_string(filter) + " on line " + std::to_string(y));
      }
    }
    for (std::size_t x = 0; x < width; ++x) {
      const uint8_t* s = line + x * channels;
      Rgba& px = img.pixels[y * width + x];
      switch (color_type) {
        case 0: px = {s[0], s[0], s[0], 255}; break;
        case 2: px = {s[0], s[1], s[2], 255}; break;
        case 4: px = {s[0], s[0], s[0], s[1]}; break;
        case 6: px = {s[0], s[1], s[2], s[3]}; break;
        case 3: {
          const std::size_t k = s[0];
          if (3 * k + 2 >= palette.size()) fail("palette index out of range");
          const auto ch = [&](std::size_t i) { return static_cast<uint8_t>(palette[3 * k + i]); };
          px = {ch(0), ch(1), ch(2), k < palette_alpha.size() ? static_cast<uint8_t>(palette_alpha[k]) : uint8_t{255}};
          break;
        }
      }
    }
  }
  return img;
}

}  // namespace swthrottle::test
