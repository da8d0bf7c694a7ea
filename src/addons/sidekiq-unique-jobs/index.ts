// sidekiq-unique-jobs for Node: the gem's digests, locks and conflict
// strategies on a Node client and worker (gem 8 and 9 key layouts).
export { uniqueJobsClient, prepareJob, type UniqueJobsClientOptions } from "./client.js";
export type { UniqueJobsOptions } from "./config.js";
export { lockDigest, DEFAULT_LOCK_PREFIX, type DigestInput, type DigestAlgorithm, type JsonFloats } from "./digest.js";
export { deleteByDigest } from "./digests.js";
export { UniqueJobsConflict, UnknownLockError, UniqueJobsLockError } from "./errors.js";
export { LOCK_TYPES } from "./lock-config.js";
export { isUniqueJobsMiddleware } from "./marker.js";
export { uniqueJobs, type UniqueJobs } from "./server.js";
