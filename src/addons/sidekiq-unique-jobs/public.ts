// sidekiq-bridge/sidekiq-unique-jobs: the gem's locks, taken and released by
// Node as the gem does (docs/MIGRATION.md, sidekiq-unique-jobs).
export {
  uniqueJobs,
  uniqueJobsClient,
  lockDigest,
  deleteByDigest,
  UniqueJobsConflict,
  UnknownLockError,
  UniqueJobsLockError,
  type UniqueJobsOptions,
  type UniqueJobsClientOptions,
  type DigestInput,
} from "./index.js";
