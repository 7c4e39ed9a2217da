// The rules file (DESIGN.md §1): TOML text -> a validated, compiled RuleSet.
//
// Everything that can be wrong with a rules file is found here, at load, with
// `FILE:LINE:COL: what` (DESIGN.md §7); nothing in a RuleSet can fail later.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/expr.h"
#include "config/rule_identity.h"
#include "config/template.h"
#include "util/result.h"
#include "window/mode.h"

namespace swthrottle::config {

// The window core's enum (window/mode.h), with its to_string().
using Mode = window::Mode;

enum class RuleKind { Alert, Throttle };
constexpr std::string_view to_string(RuleKind k) { return k == RuleKind::Alert ? "alert" : "throttle"; }

enum class TimeSource { Arrival, Log };
constexpr std::string_view to_string(TimeSource t) { return t == TimeSource::Arrival ? "arrival" : "log"; }

struct TimestampSpec {
  // YmdSlash: "2026/01/01 19:00:00"; IsoBasic: "20260101T190000Z"; JsonEpoch:
  // epoch numbers in JSON fields ({"ts":1767294000.5}).
  enum class Form { Auto, Rfc3339, Syslog, Epoch, Clf, Strptime, YmdSlash, IsoBasic, JsonEpoch };
  Form form = Form::Auto;
  std::string format;  // Form::Strptime: the strptime format
  std::string match;   // optional RE2 pattern; its first capture group holds the timestamp
  // { field = "ts" }: the stamp is the text of this field of a JSON line
  // (dotted path): RFC 3339, or epoch s/ms/µs/ns by digit count.
  std::string field;
  std::string text;  // as written, for --check and messages
  std::string file;  // where it was written (empty: the default)
  int line = 0;
  int col = 0;
};

struct TimezoneSpec {
  bool local = true;       // "local": the machine's zone (TZ)
  int offset_minutes = 0;  // when !local and no name: "UTC" = 0, "+02:00" = 120
  std::string text = "local";
  // An IANA zone ("Europe/Berlin"), checked against the tz database at load;
  // empty: local or a fixed offset.
  std::string name{};
};

// How an input's lines are read (DESIGN.md §1 `format`): text; JSON objects
// (a line that is not one is counted and read as text); a container
// runtime's log, whose envelope is taken off and whose payload is read as
// auto reads a line (cri: "TIME STREAM P|F TEXT", containerd and CRI-O;
// docker: dockerd's json-file, {"log":"TEXT\n","stream":..,"time":..}); or
// auto, which recognises both envelopes by an input's first line, and reads
// as JSON the lines that start with '{' after blanks.
enum class InputFormat { Auto, Text, Json, Cri, Docker };
constexpr std::string_view to_string(InputFormat f) {
  switch (f) {
    case InputFormat::Auto: return "auto";
    case InputFormat::Text: return "text";
    case InputFormat::Json: return "json";
    case InputFormat::Cri: return "cri";
    case InputFormat::Docker: return "docker";
  }
  return "auto";
}

// The fields a container runtime's envelope gives each of its lines
// (match/envelope_fields.h): never read from the payload there, so they
// give the prefilter no literal of the line.
inline constexpr std::string_view kEnvelopePaths[] = {"stream", "k8s.namespace", "k8s.pod", "k8s.container"};
constexpr bool is_envelope_path(std::string_view path) {
  for (std::string_view p : kEnvelopePaths)
    if (p == path) return true;
  return false;
}
// `multiline` (input/event_grouper.h): how lines are grouped into events.
// Off: every line is an event of its own (the default).
struct MultilineSpec {
  static constexpr uint32_t kDefaultMaxLines = 500;
  static constexpr uint64_t kDefaultMaxBytes = 64 << 10;
  enum class Kind { Off, Java, Python, Start, Continue } kind = Kind::Off;
  std::string pattern;  // Start, Continue: the RE2 pattern (checked at load)
  std::string text;     // as given, for --check
  // The caps of an event: a line that would pass one starts a new event.
  uint32_t max_lines = kDefaultMaxLines;
  uint64_t max_bytes = kDefaultMaxBytes;
};

// [[settings.input]]: the timestamp (and zone) of the inputs whose name
// matches `path`, an fnmatch(3) pattern matched against the input name as
// the command line gives it ("-": standard input). The first entry that
// matches wins; an input none matches takes [settings]. Unset: [settings]'s.
struct InputTime {
  std::string path;
  std::optional<TimestampSpec> timestamp;
  std::optional<TimezoneSpec> timezone;
  std::optional<InputFormat> format;
  std::optional<MultilineSpec> multiline;
};

// Fleet windows (man page: FLEET): a rule with `fleet` shares its windows
// with every host that runs it, through one Redis. The [fleet] table says
// where that Redis is and what a host does when it cannot reach it.
enum class FleetMode { Off, Exact, Batched };
constexpr std::string_view to_string(FleetMode m) {
  return m == FleetMode::Off ? "off" : m == FleetMode::Exact ? "exact" : "batched";
}
// on_unreachable: decide on the host's own window (local); pass every
// throttled line and raise no fleet alert (open); suppress every throttled
// line and raise no fleet alert (closed).
enum class Unreachable { Local, Open, Closed };
constexpr std::string_view to_string(Unreachable u) {
  return u == Unreachable::Local ? "local" : u == Unreachable::Open ? "open" : "closed";
}

// A byte that may stand in a fleet name (`namespace`, `host`): they go into
// Redis keys and episode ids, so no blank, control byte, ':' or braces.
bool is_fleet_name_char(unsigned char c);
// 1 to 64 such bytes.
bool is_fleet_name(std::string_view s);

struct FleetSettings {
  bool given = false;  // a [fleet] table was read
  std::string redis;   // redis://HOST[:PORT][/DB] or unix:PATH ("" until given)
  std::string namespace_name = "default";
  std::string host;          // "" : the machine's host name
  int64_t sync_ms = 250;     // fleet = "batched": the flush interval
  int64_t timeout_ms = 200;  // the longest a line waits for Redis
  Unreachable on_unreachable = Unreachable::Local;
  std::string file;  // where [fleet] was written, for errors found later
  int line = 0;
  int col = 0;
};

// [delivery] (man page: DELIVERY): where records go besides stdout, and how
// hard to try.
struct DeliverySettings {
  bool given = false;
  std::vector<std::string> webhooks;                        // every rule's alert, resolved and summary records
  std::vector<std::string> alertmanagers;                   // every alert rule's alerts
  int64_t timeout_ms = 10'000;                              // one request
  int64_t retry_for_ms = 2 * 86'400'000;                    // then dead-lettered
  std::size_t batch = 1;                                    // webhook records per POST
  std::string token_file;                                   // "Authorization: Bearer <its text>" for webhooks
  std::string basic_auth_file;                              // "user:password" for webhooks
  std::vector<std::pair<std::string, std::string>> labels;  // extra Alertmanager labels
  int64_t repost_ms = 60'000;                               // a firing alert, posted again
  std::size_t outbox_max = 10'000;                          // --state: records waiting, at most
  bool outbox_drop_oldest = false;                          // when full: drop the oldest (else the input waits)
  int64_t drain_ms = 30'000;                                // at exit: how long to keep trying
  std::string file;
  int line = 0;
  int col = 0;
};

struct Settings {
  Mode mode = Mode::Efficient;
  uint32_t buckets = 10;
  TimeSource time = TimeSource::Arrival;
  TimestampSpec timestamp;
  TimezoneSpec timezone;
  InputFormat format = InputFormat::Auto;  // how lines are read (JSON or text)
  int year = 0;                            // 0: infer (DESIGN.md §4)
  uint64_t max_keys = 100000;
  // Trusted time (DESIGN.md §4, time = log): a stamp more than max_future_ms ahead
  // of the wall clock, or a lone one more than max_jump_ms ahead of its
  // input's newest trusted time, is not trusted. -1: off ("off").
  int64_t max_future_ms = 60'000;
  int64_t max_jump_ms = 86'400'000;
  // time = log, followed inputs: how long an input must have been quiet at
  // its end before its log time moves on with the wall clock (DESIGN.md §4;
  // pipeline/quiet_time.h). -1: off ("off").
  int64_t quiet_after_ms = 5000;
  std::vector<InputTime> inputs;  // [[settings.input]], in file order
  MultilineSpec multiline;        // for inputs whose [[settings.input]] sets none
  FleetSettings fleet;            // [fleet]
  DeliverySettings delivery;      // [delivery]
  // --input journal (set by app::load_generation, never by a rules file):
  // arrays of bytes are text, and `match`/`ignore` apply to MESSAGE.
  bool journal = false;
};

// Field ids of templates. Captures follow kFieldFirstCapture in the order of
// Rule::capture_names. A capture name that starts with "." is the text of a
// JSON field ("{.service.name}" in a template), never a regex group.
enum Field : int {
  kFieldRule = 0,
  kFieldEvent,
  kFieldCount,
  kFieldThreshold,
  kFieldWindow,
  kFieldKey,
  kFieldLine,
  kFieldSuppressed,
  kFieldFirstCapture,
};

// One entry of an event's `fields` (DESIGN.md §1): a condition on a field of a
// JSON line, named by a dotted path ("service.name" is {"service":{"name":..}}).
struct FieldCondition {
  std::string path;                   // as written
  bool regex = false;                 // { match = '...' }: RE2 search; else equality
  std::string value;                  // the text to equal, or the RE2 pattern
  std::vector<std::string> captures;  // named groups of the pattern, in group order
};

struct Event {
  std::string name;
  std::string match;                     // RE2 pattern as written; "" when only `fields` is given
  std::vector<std::string> captures;     // named groups of `match`, then of each field's pattern
  std::vector<FieldCondition> fields{};  // all must hold on the line's JSON; empty: none
  // What the RE2 set searches the raw line for when `match` is empty: a
  // pattern every line whose fields can hold matches (see line_pattern()).
  std::string stand_in{};
};

// The pattern the matcher and the prefilter run on the raw line for `e`.
inline const std::string& line_pattern(const Event& e) { return e.match.empty() ? e.stand_in : e.match; }

struct Rule {
  std::string name;
  RuleKind kind = RuleKind::Alert;
  std::vector<Event> events;               // >= 1
  std::vector<std::string> event_names;    // events[i].name, for Expr and records
  std::vector<std::string> capture_names;  // union of the events' named groups, first appearance order

  int64_t window_ms = 0;
  std::string window_text;  // X as written ("1m")
  uint32_t buckets = 10;
  Mode mode = Mode::Efficient;
  bool mode_set = false;  // the rule itself set `mode` (then --mode does not override it)
  uint64_t max_keys = 100000;

  std::optional<uint64_t> threshold;  // Y when `threshold` was given
  std::string when_text;              // `when` as written ("" with threshold)
  Expr when;                          // compiled; for a threshold: sum >= Y

  std::optional<Template> key;      // fields: rule, event, captures
  std::optional<Template> message;  // fields: all
  int64_t cooldown_ms = 0;          // alert: default = window_ms
  bool cooldown_set = false;        // the rule set `cooldown` (else it follows the window)
  bool resolve = false;             // alert only
  // alert only: the clear condition of a firing episode (hysteresis). Without
  // it an episode ends when `when` stops holding; with it, only once `when`
  // is false and resolve_when holds (`when` wins where both hold).
  std::optional<Expr> resolve_when;
  std::string resolve_when_text;           // as written ("" without resolve_when)
  std::vector<std::string> exec;           // argv, empty = none
  std::vector<std::string> webhooks;       // this rule's records also go here
  std::vector<std::string> alertmanagers;  // this rule's alerts also go here
  std::string ignore;                      // RE2 pattern, empty = none
  FleetMode fleet = FleetMode::Off;        // shared through [fleet]'s Redis
  // Where `ignore` looks: "" the raw line; else the text of this JSON field
  // (--input journal: "MESSAGE"; see use_journal()).
  std::string ignore_field;

  std::string file;  // where the rule was defined
  int line = 0;

  // `swthrottle backtest`: a candidate copy of rule `matched_as` (another
  // threshold or window) that the Matcher gives that rule's hits instead
  // of matching it again (match/matcher.h). Never set by a rules file.
  std::optional<uint32_t> matched_as;

  // fingerprint(*this) (config/rule_identity.h): the --state identity. A
  // SIGHUP reload does not use it (see windows_carry_over() there).
  std::string fingerprint;
};

struct RuleSet {
  Settings settings;
  std::vector<Rule> rules;  // file order; across files, in the order given
};

// Does any rule share its windows with the fleet (`fleet = ...`)?
bool uses_fleet(const RuleSet& rules);

// Parses one rules file's text. `file_name` is used in error messages.
Result<RuleSet> parse_rules(std::string_view toml_text, std::string_view file_name);

// The largest rules file load_rules() reads: 16 MiB.
inline constexpr std::size_t kMaxRulesFileBytes = std::size_t{16} << 20;

// Reads and parses every file and merges them: rules are appended in order,
// a directory standing for its *.toml files in name order (rules_dir.h),
// rule names must stay unique across files, and a setting given in more than
// one file must have the same value everywhere. A file larger than
// kMaxRulesFileBytes, or that is a device or a socket rather than a regular
// file or a pipe, is an error.
Result<RuleSet> load_rules(std::span<const std::string> paths);

// The stand-in of an event (Event::stand_in): the longest value its
// `fields` need verbatim in the raw line, or "\\u00" (an escape may spell
// it otherwise); under journal input also "[" (a field may be an array of
// bytes). "" when no field gives one, or when the event has a `match`.
std::string make_stand_in(const Event& e, bool journal);

// --input journal (DESIGN.md §1): settings.journal is set, each event's `match`
// becomes a condition on the MESSAGE field (its decoded text), each rule's
// `ignore` looks at MESSAGE, and the stand-ins allow arrays of bytes.
// What the rules files say (fingerprints, --explain) is kept as written.
void use_journal(RuleSet& rules);

}  // namespace swthrottle::config
