// The rules the whole-line-path and state harnesses run: every kind of rule
// (alert with `when`, hysteresis and resolve, keyed throttle, JSON fields),
// [[settings.input]] entries that turn on multi-line events and JSON input
// for some input names, and a small max_keys so that eviction happens. The
// text is written once per process to a file of its own, because the program
// loads rules from files (app::load_generation).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace swthrottle::fuzz {

inline constexpr const char* kFixedRules = R"toml(
[settings]
time     = "log"
timezone = "UTC"
max_keys = 8
buckets  = 4

[[settings.input]]
path      = "java*"
multiline = "java"

[[settings.input]]
path      = "*.json"
format    = "json"
timestamp = { field = "ts" }

[[settings.input]]
path      = "syslog*"
timestamp = "syslog"
timezone  = "+02:00"

[[rule]]
name      = "errors"
kind      = "throttle"
threshold = "2 per 10s"
key       = "{src}"
ignore    = 'healthcheck'
  [[rule.event]]
  name  = "error"
  match = '\bERROR\b(?: (?P<src>\w+))?'

[[rule]]
name         = "ratio"
kind         = "alert"
window       = "1m"
when         = "error / request > 0.2 and request >= 3 or fail * 2 - 1 >= 4"
resolve_when = "request < 1"
cooldown     = "5s"
message      = "{count} {event} in {window}: {line:.40}"
  [[rule.event]]
  name  = "request"
  match = '"(?:GET|POST) \S+ HTTP/[\d.]+" \d{3}'
  [[rule.event]]
  name  = "error"
  match = '"(?:GET|POST) \S+ HTTP/[\d.]+" 5\d\d'
  [[rule.event]]
  name  = "fail"
  match = '(?i)fail(?:ed|ure)? (?:for )?(?P<user>\w+)'

[[rule]]
name      = "users"
kind      = "alert"
threshold = "3 per 30s"
key       = "{user}"
resolve   = true
message   = "{user:>10} x{count} (suppressed {suppressed})"
  [[rule.event]]
  name  = "login"
  match = 'login failed user=(?P<user>\S+)'

[[rule]]
name      = "json-5xx"
kind      = "throttle"
threshold = "1 per 5s"
key       = "{.service.name}/{code}"
  [[rule.event]]
  name   = "e5xx"
  fields = { "level" = "error", "http.status" = { match = '^(?P<code>5\d\d)$' } }

[[rule]]
name      = "stack"
kind      = "alert"
threshold = "2 per 1m"
  [[rule.event]]
  name  = "exception"
  match = 'Exception'
)toml";

// The path of a file holding kFixedRules, written on the first call and
// removed at exit.
inline const std::string& fixed_rules_path() {
  static const std::string path = [] {
    const char* tmp = getenv("TMPDIR");
    std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/swthrottle-fuzz-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) {
      std::perror("swthrottle fuzz: mkdtemp");
      std::abort();
    }
    static std::string dir_to_remove = dir;
    std::string file = dir + "/rules.toml";
    std::FILE* f = std::fopen(file.c_str(), "w");
    if (f == nullptr || std::fputs(kFixedRules, f) < 0 || std::fclose(f) != 0) {
      std::perror("swthrottle fuzz: writing the fixed rules");
      std::abort();
    }
    static std::string file_to_remove = file;
    std::atexit([] {
      ::unlink(file_to_remove.c_str());
      ::rmdir(dir_to_remove.c_str());
    });
    return file;
  }();
  return path;
}

}  // namespace swthrottle::fuzz
