// strata-moe: info, dequant, run, demo, bench, support.
#include <CLI/CLI.hpp>
#include <signal.h>

#include <cstdlib>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "strata_moe.h"
#include "common/error.hpp"
#include "common/text.hpp"
#include "io/files.hpp"

namespace {

// 2 for what the caller got wrong, 1 for everything else that failed.
int exit_status_for(strata::Status status) {
  return status == strata::Status::kInvalidArgument ? 2 : 1;
}

// Every failure is this one line on stderr, whatever it came from.
void print_error(std::string_view message) {
  std::string line = strata::printable(message);
  std::fprintf(stderr, "strata-moe: error: %s\n", line.c_str());
}

// CLI11's messages say "A subcommand is required" for a misspelt one; name it instead.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e, int argc,
                                char** argv) {
  bool any_parsed = false;
  for (const CLI::App* sub : app.get_subcommands({})) any_parsed = any_parsed || sub->parsed();
  if (!any_parsed && argc > 1 && argv[1][0] != '-') {
    std::string known;
    for (const CLI::App* sub : app.get_subcommands({}))
      known += (known.empty() ? "" : ", ") + sub->get_name();
    return std::string("unknown subcommand '") + argv[1] + "' (known: " + known + ")";
  }
  std::string message = e.what();
  // CLI11 appends a second line on some errors; the first one carries the reason.
  if (const size_t newline = message.find('\n'); newline != std::string::npos)
    message.resize(newline);
  if (!any_parsed && argc <= 1) message += " (known: info, dequant, run, demo, bench, support)";
  return message;
}

// A run cut short by a signal, or ended by exit() inside a library (libgomp does when it cannot
// start its threads), leaves no temporary output behind: the handler removes them, then lets the
// signal take its default course.
// Every signal whose default action ends the process (SIGKILL and SIGSTOP cannot be caught;
// SIGPROF is left to profilers).
constexpr int kCleanedUpSignals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE,   SIGSEGV,
                                     SIGBUS,  SIGFPE,  SIGILL,  SIGABRT, SIGXFSZ,   SIGXCPU,
                                     SIGUSR1, SIGUSR2, SIGALRM, SIGSYS,  SIGVTALRM};

void on_fatal_signal(int signal_number) {
  // Every file is removed before the default action is restored: a second signal (timeout(1)
  // sends one to the process and one to its group) then finds nothing left to do.
  strata::io::remove_unfinished_outputs();
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);  // delivered when the handler returns (the mask blocks it until then)
}

void remove_unfinished_outputs_at_exit() { strata::io::remove_unfinished_outputs(); }

void clean_up_outputs_on_abnormal_ends() {
  static char alternate_stack[1 << 16];  // a stack overflow's SIGSEGV still finds a stack
  stack_t ss{};
  ss.ss_sp = alternate_stack;
  ss.ss_size = sizeof alternate_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  action.sa_flags = SA_ONSTACK;
  ::sigemptyset(&action.sa_mask);
  for (const int s : kCleanedUpSignals) ::sigaddset(&action.sa_mask, s);
  for (const int s : kCleanedUpSignals) {
    struct sigaction inherited {};
    // A signal ignored by whoever started the command (nohup, a background job) stays ignored.
    if (::sigaction(s, nullptr, &inherited) == 0 && inherited.sa_handler == SIG_IGN) continue;
    ::sigaction(s, &action, nullptr);
  }
  std::atexit(remove_unfinished_outputs_at_exit);
}

}  // namespace

int main(int argc, char** argv) {
  clean_up_outputs_on_abnormal_ends();
  CLI::App app{
      "strata-moe: quantised MoE expert layers on exact integer arithmetic (int8 and fp16 tensor "
      "cores)"};
  const std::string commit = strata_moe_git_commit();
  app.set_version_flag("--version", std::string("strata-moe ") + strata_moe_version() +
                                        (commit.empty() ? "" : " (" + commit.substr(0, 12) + ")"));
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, strata::cli::Runner>> commands;
  const auto add = [&](strata::cli::Runner (*adder)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    strata::cli::Runner runner = adder(app);
    commands.emplace_back(app.get_subcommands({}).at(before), std::move(runner));
  };
  add(&strata::cli::add_info_command);
  add(&strata::cli::add_dequant_command);
  add(&strata::cli::add_run_command);
  add(&strata::cli::add_demo_command);
  add(&strata::cli::add_bench_command);
  add(&strata::cli::add_support_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    print_error(parse_error_message(app, e, argc, argv));
    return 2;
  }
  try {
    for (auto& [sub, runner] : commands)
      if (sub->parsed()) return runner();
  } catch (const strata::Error& e) {
    print_error(e.what());
    return exit_status_for(e.status());
  } catch (const std::bad_alloc&) {
    // Sizes from options and files are checked before they allocate; this is the fallback.
    print_error("out of memory (an allocation failed)");
    return 1;
  } catch (const std::exception& e) {
    print_error(e.what());
    return 1;
  }
  return 0;
}
