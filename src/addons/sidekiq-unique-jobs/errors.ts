// The gem's errors, named as Ruby names them (a Node job's error_class reads
// the same in the Web UI as a Ruby job's).

/** SidekiqUniqueJobs::Conflict, raised by the `raise` strategy. */
export class UniqueJobsConflict extends Error {
  override name = "SidekiqUniqueJobs::Conflict";
  constructor(readonly digest: string) {
    super(`Item with the key: ${digest} is already scheduled or processing`);
  }
}

/** SidekiqUniqueJobs::UnknownLock: a `lock:` the gem has no class for. */
export class UnknownLockError extends Error {
  override name = "SidekiqUniqueJobs::UnknownLock";
}

/** A lock script failed (e.g. a lock key of the wrong type): the job goes the retry way. */
export class UniqueJobsLockError extends Error {
  override name = "SidekiqUniqueJobs::LockError";
}
