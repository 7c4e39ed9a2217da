// The screenshot tests' PNG decoder (tests/support/png.h) against PNGs made
// here byte by byte: every filter type, on every line and mixed, for each
// colour type; and the ways a file can be wrong.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/png.h"

using swthrottle::test::decode_png;
using swthrottle::test::Image;
using swthrottle::test::Rgba;

namespace {

void put32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>(v >> shift & 0xFF);
}

void chunk(std::string& out, std::string_view type, std::string_view data) {
  put32(out, static_cast<uint32_t>(data.size()));
  std::string body(type);
  body += data;
  out += body;
  put32(out, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
}

int paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// A PNG of `raw` (height lines of width * channels bytes), line y filtered
// with filters[y % filters.size()]: the encoder side of what the decoder
// undoes, written from the spec on its own.
std::string encode(uint32_t width, uint32_t height, int color_type, std::size_t channels,
                   const std::vector<uint8_t>& raw, const std::vector<int>& filters, std::string_view palette = "",
                   std::string_view trns = "") {
  const std::size_t stride = width * channels;
  std::string filtered;
  for (std::size_t y = 0; y < height; ++y) {
    const int f = filters[y % filters.size()];
    filtered += static_cast<char>(f);
    for (std::size_t i = 0; i < stride; ++i) {
      const int x = raw[y * stride + i];
      const int a = i >= channels ? raw[y * stride + i - channels] : 0;
      const int b = y > 0 ? raw[(y - 1) * stride + i] : 0;
      const int c = y > 0 && i >= channels ? raw[(y - 1) * stride + i - channels] : 0;
      const int pred = f == 0 ? 0 : f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : paeth(a, b, c);
      filtered += static_cast<char>((x - pred) & 0xFF);
    }
  }
  std::string z(compressBound(filtered.size()), '\0');
  uLongf zlen = z.size();
  REQUIRE(compress(reinterpret_cast<Bytef*>(z.data()), &zlen, reinterpret_cast<const Bytef*>(filtered.data()),
                   filtered.size()) == Z_OK);
  z.resize(zlen);

  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  put32(ihdr, width);
  put32(ihdr, height);
  ihdr += std::string{8, static_cast<char>(color_type), 0, 0, 0};
  chunk(png, "IHDR", ihdr);
  chunk(png, "tEXt", std::string("Comment\0made by png_test", 24));  // an ancillary chunk: skipped
  if (!palette.empty()) chunk(png, "PLTE", palette);
  if (!trns.empty()) chunk(png, "tRNS", trns);
  // Split over two IDATs: the decoder must join them.
  chunk(png, "IDAT", std::string_view(z).substr(0, z.size() / 2));
  chunk(png, "IDAT", std::string_view(z).substr(z.size() / 2));
  chunk(png, "IEND", "");
  return png;
}

// Bytes that make every predictor matter: neither constant nor smooth.
std::vector<uint8_t> pattern(std::size_t n) {
  std::vector<uint8_t> v(n);
  uint32_t s = 12345;
  for (auto& b : v) {
    s = s * 1103515245 + 12345;
    b = static_cast<uint8_t>(s >> 16);
  }
  return v;
}

const std::vector<std::vector<int>> kFilterPlans = {{0}, {1}, {2}, {3}, {4}, {4, 3, 2, 1, 0}, {2, 4, 1, 3}};

}  // namespace

TEST_CASE("png: RGBA and RGB under every filter") {
  constexpr uint32_t w = 7, h = 5;
  for (const auto& plan : kFilterPlans) {
    CAPTURE(plan[0]);
    CAPTURE(plan.size());
    const std::vector<uint8_t> rgba = pattern(w * h * 4);
    const Image a = decode_png(encode(w, h, 6, 4, rgba, plan));
    REQUIRE(a.width == w);
    REQUIRE(a.height == h);
    for (uint32_t y = 0; y < h; ++y) {
      for (uint32_t x = 0; x < w; ++x) {
        const uint8_t* s = &rgba[(y * w + x) * 4];
        CHECK(a.at(x, y) == Rgba{s[0], s[1], s[2], s[3]});
      }
    }
    const std::vector<uint8_t> rgb = pattern(w * h * 3);
    const Image b = decode_png(encode(w, h, 2, 3, rgb, plan));
    for (uint32_t y = 0; y < h; ++y) {
      for (uint32_t x = 0; x < w; ++x) {
        const uint8_t* s = &rgb[(y * w + x) * 3];
        CHECK(b.at(x, y) == Rgba{s[0], s[1], s[2], 255});
      }
    }
  }
}

TEST_CASE("png: grey, grey with alpha, palette") {
  const std::vector<uint8_t> grey = {0, 128, 255, 7, 9, 200};
  const Image g = decode_png(encode(3, 2, 0, 1, grey, {4}));
  CHECK(g.at(1, 0) == Rgba{128, 128, 128, 255});
  CHECK(g.at(2, 1) == Rgba{200, 200, 200, 255});

  const std::vector<uint8_t> ga = {10, 20, 30, 40};
  const Image a = decode_png(encode(2, 1, 4, 2, ga, {1}));
  CHECK(a.at(1, 0) == Rgba{30, 30, 30, 40});

  const std::string plte("\xd6\x27\x28\x3b\x6f\xd8\xff\x7f\x0e", 9);
  const std::vector<uint8_t> idx = {0, 1, 2, 2, 1, 0};
  const Image p = decode_png(encode(3, 2, 3, 1, idx, {3}, plte, std::string("\x80", 1)));
  CHECK(p.at(0, 0) == Rgba{0xd6, 0x27, 0x28, 0x80});
  CHECK(p.at(1, 0) == Rgba{0x3b, 0x6f, 0xd8, 255});
  CHECK(p.at(0, 1) == Rgba{0xff, 0x7f, 0x0e, 255});
}

TEST_CASE("png: what is not a PNG it reads is an error, never a picture") {
  const std::vector<uint8_t> rgb = pattern(4 * 3 * 3);
  const std::string good = encode(4, 3, 2, 3, rgb, {0});
  CHECK_NOTHROW(decode_png(good));

  CHECK_THROWS_WITH_AS(decode_png("GIF89a"), "png: no PNG signature", std::runtime_error);
  CHECK_THROWS_AS(decode_png(good.substr(0, good.size() - 20)), std::runtime_error);  // truncated

  std::string bad_crc = good;
  bad_crc[8 + 8 + 13] ^= 1;  // the IHDR's CRC
  CHECK_THROWS_WITH_AS(decode_png(bad_crc), "png: bad CRC in chunk IHDR", std::runtime_error);

  std::string bad_filter = encode(4, 3, 2, 3, rgb, {0, 5});
  CHECK_THROWS_WITH_AS(decode_png(bad_filter), "png: filter type 5 on line 1", std::runtime_error);

  // IHDR fields rewritten, with the CRC made right again.
  const auto with_ihdr = [&](std::size_t field, char value) {
    std::string s = good;
    s[8 + 8 + field] = value;
    const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(s.data() + 12), 17);
    for (int i = 0; i < 4; ++i) s[8 + 8 + 13 + static_cast<std::size_t>(i)] = static_cast<char>(crc >> (24 - 8 * i));
    return s;
  };
  CHECK_NOTHROW(decode_png(with_ihdr(8, 8)));
  CHECK_THROWS_WITH_AS(decode_png(with_ihdr(8, 16)), "png: bit depth 16 (only 8 is read)", std::runtime_error);
  CHECK_THROWS_WITH_AS(decode_png(with_ihdr(12, 1)), "png: interlaced (not read)", std::runtime_error);
  CHECK_THROWS_WITH_AS(decode_png(with_ihdr(9, 5)), "png: colour type 5", std::runtime_error);
  // A height the data does not fill.
  CHECK_THROWS_AS(decode_png(with_ihdr(7, 4)), std::runtime_error);
}
