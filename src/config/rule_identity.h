// When is a rule "the same rule" as before? Two questions, asked in two
// places, with two deliberately different answers:
//
//  fingerprint(rule)              --state (DESIGN.md §6: "a rule whose definition
//    changed starts fresh"). Engine::load_state() loads a rule's saved
//    windows only when the fingerprint saved with them equals the rule's
//    fingerprint now. It covers kind, events (names and patterns), ignore,
//    window, buckets, mode and the condition (threshold, or `when` with
//    whitespace normalised, and `resolve_when` when the rule has one), and
//    `distinct`, `new` and `learn` when set. It is text because it is written into the state
//    file and compared by a later run.
//
//  windows_carry_over(old, new)   SIGHUP reload (DESIGN.md §6: keep "the windows
//    of rules whose events, window and buckets did not change").
//    Engine::adopt() keeps a rule's windows when its kind, events (names and
//    patterns), window and buckets are the same (and whether they keep the
//    previous window, and their `distinct` or `new` template), and it still has a key or
//    still has none: the kind because a throttle counts passed lines and an
//    alert counts events, the key because keyed and unkeyed rules hold their
//    windows differently; and it is still watched, or a sequence, or neither
//    (config/watch_parser.h), because those keep state of their own beside
//    each window. Nothing is persisted, so it is a comparison.
//
// Why they differ: a reload is looser. A changed condition (`when` or
// `resolve_when`: a kept firing episode then ends by the new one), ignore pattern
// or mode does not make the kept counts wrong, only the decisions still to
// come different, and adopt() carries a changed mode into windows of the new
// mode itself. A state file is trusted only by an unchanged rule.
#pragma once

#include <string>

namespace swthrottle::config {

struct Rule;

// The --state identity of a rule as it is now (after --mode overrides, say).
std::string fingerprint(const Rule& rule);

// The SIGHUP identity: true when `after` (the reloaded rule of the same name)
// may keep the windows of `before`.
bool windows_carry_over(const Rule& before, const Rule& after);

// The fleet identity (man page: FLEET): what hosts must agree on to share a
// fleet rule's windows in Redis: what the counts mean, the window, the
// condition and the cooldown of the alert claim. Hosts whose identities
// differ count in different Redis keys, never in each other's.
std::string fleet_identity(const Rule& rule);

}  // namespace swthrottle::config
