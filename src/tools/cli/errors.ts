// The two errors behind the CLI's exit codes: 0 ok, 1 failure (CommandError
// or any other error), 2 usage error (UsageError, with a pointer to --help).
/** Bad flags or arguments: exit code 2, with a pointer to --help. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A failure to report as is (exit code 1). */
export class CommandError extends Error {
  override name = "CommandError";
}
