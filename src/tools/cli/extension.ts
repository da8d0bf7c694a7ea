// What a command an add-on adds to `sidekiq-bridge` builds on: the one module
// of the CLI an add-on imports (docs/ADDONS.md). A command is declared through
// `command` as the CLI's own are, so it parses its flags, writes its help and
// reports bad input as they do; it connects, prints and fails as they do.
// Anything else in src/tools/cli/ may change without an add-on's command
// noticing.
export { command, commandGroup, integer, positive, dialect, type CommandModule, type Flag } from "./command.js";
export { pushFlags, withApi, withClient } from "./connect.js";
export { clip, printJson, printTable } from "./output.js";
export { CommandError, UsageError } from "./errors.js";
