// Result<T>: a value or an Error, for parsers and loaders in the pure core.
//
// Errors are values here (as in ninja and ccache); only main.cpp turns them
// into exit codes. An Error carries where it happened so that the user sees
// `FILE:LINE:COL: what`.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace swthrottle {

struct Error {
  std::string file;  // empty when the error is not tied to a file
  int line = 0;      // 1-based; 0 = unknown
  int col = 0;       // 1-based; 0 = unknown
  std::string what;

  // "file:line:col: what", leaving out the parts that are unknown.
  std::string str() const {
    std::string s;
    if (!file.empty()) {
      s += file;
      if (line > 0) {
        s += ':' + std::to_string(line);
        if (col > 0) s += ':' + std::to_string(col);
      }
      s += ": ";
    }
    s += what;
    return s;
  }
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }
  T&& operator*() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }

  const Error& error() const { return std::get<1>(v_); }
  Error& error() { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace swthrottle
