#include "config/expr.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <limits>
#include <optional>
#include <utility>

#include "util/suggest.h"
#include "util/utf8.h"

namespace swthrottle::config {
namespace {

// The evaluation stack is a fixed array so that eval() never allocates;
// parse() rejects what would not fit.
constexpr std::size_t kStackSize = 64;
// Bounds the parser's recursion: levels of "(", "not" and unary "-".
constexpr int kMaxNesting = 64;

// Values on the stack are doubles; true/false are 1 and 0. A division by zero
// pushes NaN, which every arithmetic operation carries along and which makes
// every comparison false (IEEE 754; `!=` is special-cased below). This needs
// IEEE semantics: do not build this file with -ffast-math.
enum Code : uint8_t {
  kPushNum,    // num
  kPushEvent,  // arg = event index
  kNeg,
  kAdd,
  kSub,
  kMul,
  kDiv,
  // Comparisons: arg = 1 in a chain (`a < b < c`) that continues: the result
  // goes below and the right operand stays on top for the next comparison.
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kAnd,
  kOr,
  kNot,
  // Threshold: arg = number of events, num = Y as bit_cast uint64, so that
  // the count is compared exactly even beyond 2^53.
  kSumGe,
};

bool truthy(double x) { return x != 0 && x == x; }

enum class Tok {
  End,
  Num,
  Ident,
  And,
  Or,
  Not,
  LParen,
  RParen,
  Plus,
  Minus,
  Star,
  Slash,
  Lt,
  Le,
  Gt,
  Ge,
  EqEq,
  Ne,
  Bad,  // a lexical error; `bad` holds the message
};

struct Token {
  Tok kind = Tok::End;
  std::size_t pos = 0;  // 0-based offset in the text
  std::string_view text;
  double num = 0;
  std::string bad;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// One character as written; a whole UTF-8 sequence, so messages stay valid text.
std::string_view char_at(std::string_view s, std::size_t i) {
  std::size_t e = i + 1;
  if (static_cast<unsigned char>(s[i]) >= 0xC0) {
    while (e < s.size() && is_utf8_continuation(static_cast<unsigned char>(s[e]))) ++e;
  }
  return s.substr(i, e - i);
}

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// "AND", "Or": an operator in the wrong case, worth its own hint.
bool is_keyword_in_other_case(std::string_view w) {
  if (w == "and" || w == "or" || w == "not" || w.size() > 3) return false;
  std::string lower(w);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower == "and" || lower == "or" || lower == "not";
}

// Lexes everything up front; lexing stops at the first bad token, which the
// parser reports only if it gets that far (so the leftmost error wins).
std::vector<Token> lex(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  const std::size_t n = s.size();
  auto add = [&](Tok kind, std::size_t len) {
    out.push_back(Token{kind, i, s.substr(i, len), 0, {}});
    i += len;
  };
  auto bad = [&](std::size_t len, std::string msg) {
    out.push_back(Token{Tok::Bad, i, s.substr(i, len), 0, std::move(msg)});
  };
  while (i < n) {
    const char c = s[i];
    const char next = i + 1 < n ? s[i + 1] : '\0';
    if (is_space(c)) {
      ++i;
    } else if (is_digit(c) || (c == '.' && is_digit(next))) {
      std::size_t e = i;
      while (e < n && (is_ident_char(s[e]) || s[e] == '.')) ++e;
      const std::string_view word = s.substr(i, e - i);
      // Decimal only: digits with an optional fraction ("5", "0.05", ".5", "5.").
      std::size_t d = 0;
      while (d < word.size() && is_digit(word[d])) ++d;
      if (d < word.size() && word[d] == '.') {
        ++d;
        while (d < word.size() && is_digit(word[d])) ++d;
      }
      double v = 0;
      if (d != word.size() || std::from_chars(word.data(), word.data() + word.size(), v).ec != std::errc()) {
        bad(word.size(), "invalid number " + quote(word));
        break;
      }
      out.push_back(Token{Tok::Num, i, word, v, {}});
      i = e;
    } else if (is_ident_start(c)) {
      std::size_t e = i;
      while (e < n && is_ident_char(s[e])) ++e;
      const std::string_view word = s.substr(i, e - i);
      Tok kind = word == "and" ? Tok::And : word == "or" ? Tok::Or : word == "not" ? Tok::Not : Tok::Ident;
      add(kind, e - i);
    } else if (c == '>' || c == '<') {
      if (next == '=') add(c == '>' ? Tok::Ge : Tok::Le, 2);
      else add(c == '>' ? Tok::Gt : Tok::Lt, 1);
    } else if (c == '=') {
      if (next == '=') add(Tok::EqEq, 2);
      else {
        bad(1, "unexpected \"=\" (use == to compare)");
        break;
      }
    } else if (c == '!') {
      if (next == '=') add(Tok::Ne, 2);
      else {
        bad(1, "unexpected \"!\" (use not)");
        break;
      }
    } else if (c == '&' || c == '|') {
      const std::size_t len = next == c ? 2 : 1;
      bad(len, "unexpected " + quote(s.substr(i, len)) + (c == '&' ? " (use and)" : " (use or)"));
      break;
    } else if (c == '(') {
      add(Tok::LParen, 1);
    } else if (c == ')') {
      add(Tok::RParen, 1);
    } else if (c == '+') {
      add(Tok::Plus, 1);
    } else if (c == '-') {
      add(Tok::Minus, 1);
    } else if (c == '*') {
      add(Tok::Star, 1);
    } else if (c == '/') {
      add(Tok::Slash, 1);
    } else {
      const std::string_view ch = char_at(s, i);
      bad(ch.size(), "unexpected " + quote(ch));
      break;
    }
  }
  if (out.empty() || out.back().kind != Tok::Bad) out.push_back(Token{Tok::End, n, {}, 0, {}});
  return out;
}

bool is_comparison(Tok t) {
  return t == Tok::Lt || t == Tok::Le || t == Tok::Gt || t == Tok::Ge || t == Tok::EqEq || t == Tok::Ne;
}

Code comparison_code(Tok t) {
  switch (t) {
    case Tok::Lt: return kLt;
    case Tok::Le: return kLe;
    case Tok::Gt: return kGt;
    case Tok::Ge: return kGe;
    case Tok::EqEq: return kEq;
    default: return kNe;
  }
}

// What a parsed sub-expression yields. A boolean one remembers the operator
// that made it boolean, for the "cannot be used as a number" message.
struct Sub {
  bool boolean = false;
  std::size_t op_pos = 0;
  std::string_view op;
};

class Compiler {
 public:
  Compiler(std::string_view text, const ExprNames& names, std::vector<Expr::Op>& code)
      : names_(names.events), distinct_(names.distinct), toks_(lex(text)), code_(code) {}

  bool used_previous() const { return used_previous_; }
  bool used_distinct() const { return used_distinct_; }

  // On success the code is in `code`, and the stack depth it needs is returned.
  Result<uint32_t> run() {
    if (toks_.front().kind == Tok::End) return error(0, "empty expression");
    std::optional<Sub> s = parse_or();
    if (s) {
      const Token& t = peek();
      if (t.kind == Tok::RParen) fail(t.pos, "unmatched \")\"");
      else if (t.kind != Tok::End) unexpected(t, "expected an operator, \"and\", \"or\" or the end");
    }
    if (err_) return std::move(*err_);
    if (overflow_at_) {
      return error(*overflow_at_, "expression is too deeply nested to evaluate (it needs more than " +
                                      std::to_string(kStackSize) + " stack slots)");
    }
    return static_cast<uint32_t>(max_depth_);
  }

 private:
  const Token& peek() const { return toks_[cur_]; }
  const Token& take() { return toks_[cur_++]; }

  static Error error(std::size_t pos, std::string what) {
    Error e;
    e.col = static_cast<int>(pos) + 1;
    e.what = std::move(what);
    return e;
  }

  // Records the first error; returns nullopt so callers can `return fail(...)`.
  std::nullopt_t fail(std::size_t pos, std::string what) {
    if (!err_) err_ = error(pos, std::move(what));
    return std::nullopt;
  }

  std::nullopt_t unexpected(const Token& t, std::string_view expected) {
    if (t.kind == Tok::Bad) return fail(t.pos, t.bad);
    if (t.kind == Tok::End) return fail(t.pos, "unexpected end (" + std::string(expected) + ")");
    if (t.kind == Tok::Ident && is_keyword_in_other_case(t.text)) {
      return fail(t.pos, "unexpected " + quote(t.text) + " (operators are lowercase: and, or, not)");
    }
    return fail(t.pos, "unexpected " + quote(t.text) + " (" + std::string(expected) + ")");
  }

  bool require_number(const Sub& s) {
    if (!s.boolean) return true;
    fail(s.op_pos, "the result of " + quote(s.op) + " is true or false and cannot be used as a number");
    return false;
  }

  bool enter(const Token& t) {
    if (++nesting_ <= kMaxNesting) return true;
    fail(t.pos, "expression is nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
    return false;
  }

  void emit(Code code, std::size_t pos, uint32_t arg = 0, double num = 0) {
    // Stack effect of each op: pushes +1, unary ops 0, binary ops -1 (a
    // continuing chain comparison keeps its right operand: 0).
    switch (code) {
      case kPushNum:
      case kPushEvent: ++depth_; break;
      case kNeg:
      case kNot: break;
      case kLt:
      case kLe:
      case kGt:
      case kGe:
      case kEq:
      case kNe:
        if (arg == 0) --depth_;
        break;
      default: --depth_; break;
    }
    if (depth_ > max_depth_) max_depth_ = depth_;
    if (depth_ > kStackSize && !overflow_at_) overflow_at_ = pos;
    code_.push_back(Expr::Op{code, arg, num});
  }

  std::optional<Sub> parse_or() {
    std::optional<Sub> l = parse_and();
    while (l && peek().kind == Tok::Or) {
      const Token& op = take();
      if (!parse_and()) return std::nullopt;
      emit(kOr, op.pos);
      l = Sub{true, op.pos, op.text};
    }
    return l;
  }

  std::optional<Sub> parse_and() {
    std::optional<Sub> l = parse_not();
    while (l && peek().kind == Tok::And) {
      const Token& op = take();
      if (!parse_not()) return std::nullopt;
      emit(kAnd, op.pos);
      l = Sub{true, op.pos, op.text};
    }
    return l;
  }

  std::optional<Sub> parse_not() {
    if (peek().kind != Tok::Not) return parse_cmp();
    const Token& op = take();
    if (!enter(op) || !parse_not()) return std::nullopt;
    --nesting_;
    emit(kNot, op.pos);
    return Sub{true, op.pos, op.text};
  }

  // `a < b < c` means `a < b and b < c`, with b computed once.
  std::optional<Sub> parse_cmp() {
    std::optional<Sub> l = parse_sum();
    if (!l || !is_comparison(peek().kind)) return l;
    if (!require_number(*l)) return std::nullopt;
    const Token& first = peek();
    uint32_t comparisons = 0;
    while (is_comparison(peek().kind)) {
      const Token& op = take();
      std::optional<Sub> r = parse_sum();
      if (!r || !require_number(*r)) return std::nullopt;
      const bool chain_goes_on = is_comparison(peek().kind);
      emit(comparison_code(op.kind), op.pos, chain_goes_on ? 1 : 0);
      ++comparisons;
    }
    for (uint32_t i = 1; i < comparisons; ++i) emit(kAnd, first.pos);
    return Sub{true, first.pos, first.text};
  }

  std::optional<Sub> parse_sum() {
    std::optional<Sub> l = parse_prod();
    while (l && (peek().kind == Tok::Plus || peek().kind == Tok::Minus)) {
      if (!require_number(*l)) return std::nullopt;
      const Token& op = take();
      std::optional<Sub> r = parse_prod();
      if (!r || !require_number(*r)) return std::nullopt;
      emit(op.kind == Tok::Plus ? kAdd : kSub, op.pos);
    }
    return l;
  }

  std::optional<Sub> parse_prod() {
    std::optional<Sub> l = parse_unary();
    while (l && (peek().kind == Tok::Star || peek().kind == Tok::Slash)) {
      if (!require_number(*l)) return std::nullopt;
      const Token& op = take();
      std::optional<Sub> r = parse_unary();
      if (!r || !require_number(*r)) return std::nullopt;
      emit(op.kind == Tok::Star ? kMul : kDiv, op.pos);
    }
    return l;
  }

  std::optional<Sub> parse_unary() {
    if (peek().kind != Tok::Minus) return parse_atom();
    const Token& op = take();
    if (!enter(op)) return std::nullopt;
    std::optional<Sub> s = parse_unary();
    if (!s || !require_number(*s)) return std::nullopt;
    --nesting_;
    emit(kNeg, op.pos);
    return Sub{};
  }

  std::optional<Sub> parse_atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Num:
        take();
        emit(kPushNum, t.pos, 0, t.num);
        return Sub{};
      case Tok::Ident: {
        take();
        if (t.text == "previous" && peek().kind == Tok::LParen) return parse_previous(t);
        if (const std::optional<std::size_t> i = event_index(t.text)) {
          emit(kPushEvent, t.pos, static_cast<uint32_t>(*i));
          return Sub{};
        }
        if (distinct_ && t.text == "distinct") {
          emit(kPushEvent, t.pos, static_cast<uint32_t>(names_.size()));
          used_distinct_ = true;
          return Sub{};
        }
        return fail(t.pos, unknown_event(t.text));
      }
      case Tok::LParen: {
        take();
        if (!enter(t)) return std::nullopt;
        std::optional<Sub> s = parse_or();
        if (!s) return std::nullopt;
        const Token& close = peek();
        const std::string opened = "the \"(\" at column " + std::to_string(t.pos + 1);
        if (close.kind == Tok::End) return fail(close.pos, "missing \")\" for " + opened);
        if (close.kind == Tok::Bad) return fail(close.pos, close.bad);
        if (close.kind != Tok::RParen) {
          return fail(close.pos, "expected \")\" for " + opened + ", found " + quote(close.text));
        }
        take();
        --nesting_;
        return s;
      }
      default: return unexpected(t, "expected an event name, a number or \"(\"");
    }
  }

  std::optional<std::size_t> event_index(std::string_view name) const {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == name) return i;
    return std::nullopt;
  }

  // previous(EVENT): the event's count in the window before the current one,
  // at counts[E + i] (expr.h).
  std::optional<Sub> parse_previous(const Token& fn) {
    take();  // "("
    const Token& arg = peek();
    const std::string usage = "previous() takes an event name, e.g. previous(" +
                              (names_.empty() ? std::string("error") : names_.front()) + ")";
    if (arg.kind != Tok::Ident) return unexpected(arg, usage);
    take();
    const std::optional<std::size_t> i = event_index(arg.text);
    if (!i) {
      if (distinct_ && arg.text == "distinct")
        return fail(arg.pos, "previous(distinct): a rule that counts distinct values keeps no previous window");
      return fail(arg.pos, unknown_event(arg.text));
    }
    const Token& close = peek();
    if (close.kind != Tok::RParen)
      return unexpected(close, "expected \")\" to close the previous( at column " + std::to_string(fn.pos + 1));
    take();
    emit(kPushEvent, fn.pos, static_cast<uint32_t>(names_.size() + *i));
    used_previous_ = true;
    return Sub{};
  }

  std::string unknown_event(std::string_view word) const {
    std::string m = "unknown event " + quote(word);
    if (is_keyword_in_other_case(word)) return m + " (operators are lowercase: and, or, not)";
    if (names_.empty()) return m;
    m += " (events: ";
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (i > 0) m += ", ";
      m += names_[i];
    }
    if (distinct_) m += "; or distinct";
    const std::string close = closest_match(word, names_);
    if (!close.empty()) m += "; did you mean " + quote(close) + "?";
    return m + ")";
  }

  std::span<const std::string> names_;
  bool distinct_ = false;
  bool used_previous_ = false;
  bool used_distinct_ = false;
  std::vector<Token> toks_;
  std::size_t cur_ = 0;
  std::vector<Expr::Op>& code_;
  int nesting_ = 0;
  std::size_t depth_ = 0;
  std::size_t max_depth_ = 0;
  std::optional<std::size_t> overflow_at_;
  std::optional<Error> err_;
};

}  // namespace

Result<Expr> Expr::parse(std::string_view text, const ExprNames& names) {
  Expr e;
  Compiler compiler(text, names, e.code_);
  Result<uint32_t> depth = compiler.run();
  if (!depth) return std::move(depth.error());
  e.text_ = std::string(text);
  e.max_stack_ = *depth;
  e.uses_previous_ = compiler.used_previous();
  e.uses_distinct_ = compiler.used_distinct();
  return e;
}

Expr Expr::threshold(uint64_t y, std::size_t events) {
  Expr e;
  e.code_.push_back(Op{kSumGe, static_cast<uint32_t>(events), std::bit_cast<double>(y)});
  e.max_stack_ = 1;
  return e;
}

std::vector<double> Expr::numbers() const {
  std::vector<double> out;
  for (const Op& op : code_) {
    if (op.code == kPushNum) out.push_back(op.num);
    if (op.code == kSumGe) out.push_back(static_cast<double>(std::bit_cast<uint64_t>(op.num)));
  }
  return out;
}

bool Expr::eval(std::span<const uint64_t> counts) const {
  if (code_.empty()) return false;
  std::array<double, kStackSize> st;
  std::size_t sp = 0;  // number of values on the stack
  auto binary = [&](double r) {
    st[sp - 2] = r;
    --sp;
  };
  auto compare = [&](bool r, uint32_t keep) {
    const double right = st[sp - 1];
    st[sp - 2] = r ? 1.0 : 0.0;
    if (keep) st[sp - 1] = right;
    else --sp;
  };
  for (const Op& op : code_) {
    const double a = sp >= 2 ? st[sp - 2] : 0;
    const double b = sp >= 1 ? st[sp - 1] : 0;
    switch (op.code) {
      case kPushNum: st[sp++] = op.num; break;
      case kPushEvent: st[sp++] = op.arg < counts.size() ? static_cast<double>(counts[op.arg]) : 0.0; break;
      case kNeg: st[sp - 1] = -b; break;
      case kAdd: binary(a + b); break;
      case kSub: binary(a - b); break;
      case kMul: binary(a * b); break;
      case kDiv: binary(b == 0 ? std::numeric_limits<double>::quiet_NaN() : a / b); break;
      case kLt: compare(a < b, op.arg); break;
      case kLe: compare(a <= b, op.arg); break;
      case kGt: compare(a > b, op.arg); break;
      case kGe: compare(a >= b, op.arg); break;
      case kEq: compare(a == b, op.arg); break;
      case kNe: compare(a == a && b == b && a != b, op.arg); break;
      case kAnd: binary(truthy(a) && truthy(b) ? 1.0 : 0.0); break;
      case kOr: binary(truthy(a) || truthy(b) ? 1.0 : 0.0); break;
      case kNot: st[sp - 1] = truthy(b) ? 0.0 : 1.0; break;
      case kSumGe: {
        uint64_t sum = 0;
        const std::size_t n = std::min<std::size_t>(op.arg, counts.size());
        for (std::size_t i = 0; i < n; ++i) {
          // Saturate rather than wrap: a wrapped sum would read as "below Y".
          sum = counts[i] > std::numeric_limits<uint64_t>::max() - sum ? std::numeric_limits<uint64_t>::max()
                                                                       : sum + counts[i];
        }
        st[sp++] = sum >= std::bit_cast<uint64_t>(op.num) ? 1.0 : 0.0;
        break;
      }
      default: break;
    }
  }
  return sp > 0 && truthy(st[sp - 1]);
}

}  // namespace swthrottle::config
