// swthrottle's entry point: the command line, the rules, the inputs, then
// the app (app/app.h) runs. The only place that maps errors to exit
// statuses (DESIGN.md §6).
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "app/app.h"
#include "app/check_inputs.h"
#include "app/inputs.h"
#include "app/load_generation.h"
#include "backtest/backtest_command.h"
#include "cli/options.h"
#include "cli/report.h"
#include "config/duration.h"
#include "metrics/metrics_server.h"
#include "output/fd_sink.h"
#include "util/clock.h"
#include "util/stderr.h"

namespace sw = swthrottle;

namespace {

// A SWTHROTTLE_NO_* switch is on when set to any non-empty value. They turn
// off a speed-up; the records are the same, so they are for comparing and
// debugging:
// - SWTHROTTLE_NO_PREFILTER: every line is matched with RE2 alone;
// - SWTHROTTLE_NO_MMAP: files are read with read(2), never mapped
//   (input/mapped_file.h).
bool switched_off(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

// What --help, --version and --check print must have reached stdout: a full
// disk or a closed pipe is an error (exit 2), as for grep or ls.
int written(int status) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  const int err = errno;
  sw::print_message(std::string("standard output: ") + std::strerror(err != 0 ? err : EIO));
  return 2;
}

// Each input (and each followed file's watch) takes descriptors: the soft
// limit goes up to the hard one, as systemd advises for programs that do
// not use select(2). Lowering the hard limit (`ulimit -n`) still bounds it.
void raise_open_files_limit() {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max) return;
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);
}

// `swthrottle help [backtest]`: the --help of the program or of the subcommand.
int help_main(int argc, char** argv) {
  const bool backtest = argc > 2 && std::string_view(argv[2]) == "backtest";
  if (argc > 3 || (argc == 3 && !backtest)) {
    sw::print_message(std::string("help: no help on \"") + argv[2] +
                      "\" (try: swthrottle help, swthrottle help backtest)");
    return 2;
  }
  const char* args[] = {backtest ? "backtest" : "swthrottle", "--help", nullptr};
  if (backtest) return sw::backtest::backtest_main(2, args);
  sw::cli::Parsed parsed = sw::cli::parse_options(2, args);
  std::fputs(parsed.text.c_str(), stdout);
  return written(0);
}

// A first argument that no file has and that is close to a subcommand
// ("backtst") is a typo: said, rather than "backtst: No such file".
int subcommand_typo(std::string_view arg) {
  const std::string meant = sw::cli::subcommand_meant(arg);
  if (meant.empty()) return 0;
  struct stat st {};
  if (::stat(std::string(arg).c_str(), &st) == 0) return 0;
  sw::print_message(std::string(arg) + ": not a file, nor a command (did you mean \"swthrottle " + meant + "\"?)");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // `swthrottle backtest ...`: history through the engine, reported (man page: BACKTEST).
  if (argc > 1 && std::string_view(argv[1]) == "backtest") return sw::backtest::backtest_main(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "help") return help_main(argc, argv);
  if (argc > 1) {
    if (const int status = subcommand_typo(argv[1]); status != 0) return status;
  }
  sw::cli::Parsed parsed = sw::cli::parse_options(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.text.c_str(), parsed.exit_status == 0 ? stdout : stderr);
    return parsed.exit_status == 0 ? written(0) : parsed.exit_status;
  }
  const sw::cli::Options& opt = *parsed.options;

  auto first = sw::app::load_generation(opt);
  if (!first) {
    sw::print_message(first.error().str());
    return 2;
  }
  if (opt.check) {
    std::fputs(sw::cli::check_summary(*(*first)->rules).c_str(), stdout);
    if (!opt.metrics_listen.empty()) std::fputs(sw::metrics::listen_note(opt.metrics_listen).c_str(), stdout);
    if (opt.inputs.empty()) return written(0);
    // With files: what the timestamp setting reads of them (app/check_inputs.h).
    const auto checked = sw::app::check_inputs((*first)->rules->settings, opt.inputs, sw::system_clock().wall_ms());
    std::fputs(checked.text.c_str(), stdout);
    return written(checked.failed ? 2 : 0);
  }
  raise_open_files_limit();
  auto inputs = sw::app::open_inputs(opt);
  if (!inputs) {
    sw::print_message(inputs.error().str());
    return 2;
  }

  ::signal(SIGPIPE, SIG_IGN);  // a closed output is seen as EPIPE and ends the run quietly
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGHUP}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by every thread started below

  sw::app::AppOptions app_options;
  app_options.state_save_every_ms = *sw::config::parse_duration(opt.state_interval);  // checked by parse_options
  app_options.prefilter = !switched_off("SWTHROTTLE_NO_PREFILTER");
  app_options.map_files = !switched_off("SWTHROTTLE_NO_MMAP");
  // Never destroyed: the signal thread may still be waking up when main
  // returns (SIGTERM just as the input ends), and must not find them gone.
  // Held by statics so that LeakSanitizer sees them as reachable.
  static sw::output::FdSink* sink =
      new sw::output::FdSink(1, opt.format, [](const std::string& m) { sw::print_message(m); });
  static sw::app::App* app = new sw::app::App(opt, app_options, std::move(*first), *sink, sw::system_clock());
  if (!app->start()) return app->start_status();
  std::thread signals([set] { app->signal_loop(set); });
  signals.detach();  // it ends with the process
  return app->run(std::move(*inputs));
}
