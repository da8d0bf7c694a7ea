// What a command an add-on adds to `sidekiq-bridge` builds on: the one module
// of the CLI an add-on imports (docs/ADDONS.md). A command is a module with
// its summary, help and run; it parses the common flags, connects, prints and
// fails as the CLI's own commands do. Anything else in src/tools/cli/ may
// change without an add-on's command noticing.
export { COMMON_HELP, COMMON_OPTIONS, parseFlags } from "./flags.js";
export { withApi } from "./connect.js";
export { clip, printJson, printTable } from "./output.js";
export { CommandError, UsageError } from "./errors.js";
export { runCommand } from "./run-command.js";

/** A command of `sidekiq-bridge <name>`: a module with its summary, help and run. */
export interface CommandModule {
  summary: string;
  help: string;
  /** The help for these arguments (a command with subcommands: the one named), when not the whole `help`. */
  helpFor?(argv: readonly string[]): string;
  run(argv: string[]): Promise<number>;
}
