#include "delivery/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <mutex>
#include <string_view>
#include <system_error>

#include "util/civil_date.h"

namespace swthrottle::delivery {

namespace {

constexpr std::size_t kBodyKept = 4096;
constexpr int64_t kDayMs = 86'400'000;

// curl_global_init is not thread-safe and must run before any other libcurl
// call: once for the process, whichever HttpClient comes first. Its result
// is kept so that every client can say why it cannot work.
CURLcode global_init() {
  static std::once_flag once;
  static CURLcode result = CURLE_OK;
  std::call_once(once, [] { result = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return result;
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_space(s.front()) || s.front() == '\r' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// A left-to-right reader of the three HTTP-date forms (RFC 9110 §5.6.7).
// Names are case-sensitive there, and so they are here.
class DateReader {
 public:
  explicit DateReader(std::string_view s) : s_(s) {}

  bool lit(std::string_view t) {
    if (!s_.starts_with(t)) return false;
    s_.remove_prefix(t.size());
    return true;
  }
  // Between min_n and max_n digits.
  bool number(int min_n, int max_n, int& out) {
    int n = 0;
    out = 0;
    while (n < max_n && n < static_cast<int>(s_.size()) && s_[n] >= '0' && s_[n] <= '9') {
      out = out * 10 + (s_[n] - '0');
      ++n;
    }
    if (n < min_n) return false;
    s_.remove_prefix(n);
    return true;
  }
  template <std::size_t N>
  bool one_of(const std::array<std::string_view, N>& names, int& index) {
    for (std::size_t i = 0; i < N; ++i) {
      if (lit(names[i])) {
        index = static_cast<int>(i);
        return true;
      }
    }
    return false;
  }
  // hh:mm:ss
  bool time_of_day(int& h, int& m, int& sec) {
    return number(2, 2, h) && lit(":") && number(2, 2, m) && lit(":") && number(2, 2, sec);
  }
  bool done() const { return s_.empty(); }

 private:
  std::string_view s_;
};

// Long names first where a short one is their prefix does not arise: the
// long names are only tried in the RFC 850 form, on their own.
constexpr std::array<std::string_view, 7> kDays = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                       "Friday", "Saturday", "Sunday"};
constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

struct Civil {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
};

// IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
bool read_imf_fixdate(std::string_view s, Civil& c) {
  DateReader r(s);
  int weekday = 0;
  if (!(r.one_of(kDays, weekday) && r.lit(", ") && r.number(2, 2, c.day) && r.lit(" "))) return false;
  if (!(r.one_of(kMonths, c.month) && r.lit(" ") && r.number(4, 4, c.year) && r.lit(" "))) return false;
  if (!(r.time_of_day(c.hour, c.minute, c.second) && r.lit(" GMT"))) return false;
  ++c.month;
  return r.done();
}

// RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT". The year has two digits: it is
// the one nearest `now_year` the way RFC 9110 says (a year more than 50 years
// ahead is the most recent past one with those digits).
bool read_rfc850(std::string_view s, int now_year, Civil& c) {
  DateReader r(s);
  int weekday = 0, yy = 0;
  if (!(r.one_of(kLongDays, weekday) && r.lit(", ") && r.number(2, 2, c.day) && r.lit("-"))) return false;
  if (!(r.one_of(kMonths, c.month) && r.lit("-") && r.number(2, 2, yy) && r.lit(" "))) return false;
  if (!(r.time_of_day(c.hour, c.minute, c.second) && r.lit(" GMT"))) return false;
  ++c.month;
  c.year = now_year - now_year % 100 + yy;
  if (c.year > now_year + 50) {
    c.year -= 100;
  } else if (c.year <= now_year - 50) {
    c.year += 100;
  }
  return r.done();
}

// asctime: "Sun Nov  6 08:49:37 1994" (a one-digit day is padded with a space).
bool read_asctime(std::string_view s, Civil& c) {
  DateReader r(s);
  int weekday = 0;
  if (!(r.one_of(kDays, weekday) && r.lit(" ") && r.one_of(kMonths, c.month) && r.lit(" "))) return false;
  const bool padded = r.lit(" ");
  if (!r.number(1, padded ? 1 : 2, c.day) || !r.lit(" ")) return false;
  if (!(r.time_of_day(c.hour, c.minute, c.second) && r.lit(" ") && r.number(4, 4, c.year))) return false;
  ++c.month;
  return r.done();
}

bool valid(const Civil& c) {
  // Second 60: a leap second, which an HTTP-date may carry.
  return c.month >= 1 && c.month <= 12 && c.day >= 1 &&
         static_cast<unsigned>(c.day) <= civil::days_in_month(c.year, static_cast<unsigned>(c.month)) && c.hour <= 23 &&
         c.minute <= 59 && c.second <= 60;
}

// What the callbacks fill while one post is under way.
struct Transfer {
  HttpResponse* response = nullptr;
  std::optional<std::string> retry_after;  // the final response's Retry-After, raw
};

}  // namespace

std::optional<int64_t> parse_retry_after(const std::string& value, int64_t now_wall_ms) {
  const std::string_view v = trim(value);
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // delay-seconds. Absurd values saturate rather than wrap: the retry
    // policy caps what it honours anyway.
    constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1000;
    int64_t seconds = 0;
    for (char c : v) {
      seconds = seconds * 10 + (c - '0');
      if (seconds >= kMaxSeconds) return kMaxSeconds * 1000;
    }
    return seconds * 1000;
  }
  const int now_year = static_cast<int>(civil::civil_from_days(civil::floor_div(now_wall_ms, kDayMs)).year);
  Civil c;
  if (!read_imf_fixdate(v, c) && !read_rfc850(v, now_year, c) && !read_asctime(v, c)) return std::nullopt;
  if (!valid(c)) return std::nullopt;
  const int64_t days = civil::days_from_civil(c.year, static_cast<unsigned>(c.month), static_cast<unsigned>(c.day));
  const int64_t at_ms = days * kDayMs + ((c.hour * 60 + c.minute) * 60 + c.second) * int64_t{1000};
  return std::max<int64_t>(at_ms - now_wall_ms, 0);
}

struct HttpClient::Impl {
  CURL* curl = nullptr;  // reused by every post: its connection cache is the keep-alive
  CURLcode init_error = CURLE_OK;
  char errbuf[CURL_ERROR_SIZE] = {};
};

namespace {

size_t on_header(char* buffer, size_t size, size_t nitems, void* userdata) {
  auto* transfer = static_cast<Transfer*>(userdata);
  const size_t n = size * nitems;
  try {
    const std::string_view line(buffer, n);
    // A new status line starts a new response (after a 1xx, or a 401 that
    // libcurl answers itself): only the final response's headers count.
    if (line.starts_with("HTTP/")) {
      transfer->retry_after.reset();
      return n;
    }
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && iequals(trim(line.substr(0, colon)), "Retry-After")) {
      transfer->retry_after = std::string(trim(line.substr(colon + 1)));
    }
  } catch (...) {
    return 0;  // out of memory: abort the transfer rather than throw through C
  }
  return n;
}

size_t on_body(char* buffer, size_t size, size_t nmemb, void* userdata) {
  auto* transfer = static_cast<Transfer*>(userdata);
  const size_t n = size * nmemb;
  try {
    std::string& body = transfer->response->body;
    // Keep the first 4 KiB, but take (and drop) the rest: a short return
    // would abort the transfer and lose the status.
    if (body.size() < kBodyKept) body.append(buffer, std::min(n, kBodyKept - body.size()));
  } catch (...) {
    return 0;
  }
  return n;
}

// "what: detail (system error)" on one line, from curl's code, its error
// buffer and the last errno of the socket calls. libcurl 7.88 says "Couldn't
// connect to server" for a refused connection, a dead host and a firewall
// alike: errno is what tells them apart.
std::string one_line_error(CURLcode code, const char* errbuf, long os_errno) {
  std::string out = curl_easy_strerror(code);
  std::string detail(errbuf, ::strnlen(errbuf, CURL_ERROR_SIZE));
  for (char& c : detail) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  detail = std::string(trim(detail));
  if (!detail.empty() && detail != out) out += ": " + detail;
  if (os_errno != 0) {
    const std::string system = std::error_code(static_cast<int>(os_errno), std::generic_category()).message();
    if (out.find(system) == std::string::npos) out += " (" + system + ")";
  }
  return out;
}

}  // namespace

HttpClient::HttpClient() : impl_(std::make_unique<Impl>()) {
  impl_->init_error = global_init();
  if (impl_->init_error == CURLE_OK) impl_->curl = curl_easy_init();
}

HttpClient::~HttpClient() {
  if (impl_->curl != nullptr) curl_easy_cleanup(impl_->curl);
}

HttpResponse HttpClient::post(const HttpRequest& request, int64_t now_wall_ms) {
  HttpResponse response;
  try {
    Impl& impl = *impl_;
    if (impl.init_error != CURLE_OK) {
      response.error = std::string("curl_global_init: ") + curl_easy_strerror(impl.init_error);
      return response;
    }
    if (impl.curl == nullptr) {
      response.error = "curl_easy_init failed";
      return response;
    }
    CURL* h = impl.curl;
    // Back to the defaults, so nothing of the previous request (its basic
    // auth above all) carries over; the reset keeps the live connections,
    // which is what reusing the handle is for.
    curl_easy_reset(h);
    impl.errbuf[0] = '\0';
    Transfer transfer;
    transfer.response = &response;

    struct SlistFree {
      void operator()(curl_slist* l) const { curl_slist_free_all(l); }
    };
    std::unique_ptr<curl_slist, SlistFree> headers;
    const auto append = [&headers](const char* header) {
      // curl_slist_append returns the list's head (the new node when the
      // list was empty), or nullptr when out of memory (the list intact).
      curl_slist* head = curl_slist_append(headers.get(), header);
      if (head == nullptr) return false;
      (void)headers.release();
      headers.reset(head);
      return true;
    };
    bool appended = true;
    for (const std::string& header : request.headers) appended = appended && append(header.c_str());
    // libcurl sends "Expect: 100-continue" with a large body (over 1 KiB in
    // older versions, 1 MiB in 7.88) and then waits up to a second for the
    // 100 that some receivers never send; an empty Expect turns that off.
    appended = appended && append("Expect:");
    if (!appended) {
      response.error = "out of memory building the request's headers";
      return response;
    }

    // A timeout of 0 would mean "none" to libcurl: a worker must never hang.
    const long timeout_ms = static_cast<long>(std::max<int64_t>(request.timeout.count(), 1));

    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    // Threads: no SIGALRM for DNS timeouts (libcurl's own resolver thread
    // does the timeout instead).
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, impl.errbuf);
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85.0
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(h, CURLOPT_USERAGENT, "swthrottle/" SWTHROTTLE_VERSION);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    // A POST is not followed: a 3xx comes back as it is (retry_policy.h).
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    if (!request.basic_auth.empty()) {
      curl_easy_setopt(h, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
      curl_easy_setopt(h, CURLOPT_USERPWD, request.basic_auth.c_str());
    }
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);

    const CURLcode code = curl_easy_perform(h);
    long status = 0, os_errno = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    // The handle keeps pointers to this call's headers, body and transfer:
    // drop them before those go, as the handle lives on between posts. (The
    // reset also forgets the response code and errno: they were read above.)
    curl_easy_reset(h);
    if (code != CURLE_OK) {
      // Even a status line that came before the failure is no response: the
      // receiver may or may not have taken the request (retry_policy.h).
      response.status = 0;
      response.error = one_line_error(code, impl.errbuf, os_errno);
      return response;
    }
    response.status = status;
    if (status == 0) response.error = "no HTTP status in the response";
    if (transfer.retry_after) response.retry_after_ms = parse_retry_after(*transfer.retry_after, now_wall_ms);
  } catch (...) {
    // Only std::bad_alloc can get here.
    response = HttpResponse{};
    response.error = "out of memory";
  }
  return response;
}

}  // namespace swthrottle::delivery
