// The one check of a pipeline's or MULTI's replies. ioredis resolves `exec()`
// with one [error, value] pair per command (a failed command does not reject
// the whole), or with null when Redis discarded the transaction (EXEC after a
// WATCHed key changed): both must fail loudly, naming what was being written.

/** What ioredis' `exec()` resolves to. */
export type ExecResult = Array<[Error | null, unknown]> | null;

/** The replies' values; throws the first command's error, or when the transaction was discarded. */
export function execReplies(res: ExecResult, what: string): unknown[] {
  if (res === null) throw new Error(`${what}: the transaction was discarded`);
  return res.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}
