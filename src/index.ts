// sidekiq-bridge: Node.js in a Ruby Sidekiq fleet, on the same Redis.
//
// The package's public API: every name here is a promise kept across minor
// releases (see CHANGELOG.md). Each is listed by name, never `export *`, so an
// internal module can change without breaking users. docs/API.md is generated
// from this file (npm run api:docs); a unit test fails when they differ, or
// when this entry holds more than 90 names.
//
// A name is here when a user calls or constructs it, catches it with
// `instanceof`, or writes it as a type in their own code: a constructor's
// options, a handler, middleware or logger they implement and the context it
// gets. A type reached only through another one (a nested option, what a
// method returns) stays internal: `ClientOptions["contract"]` or inference
// reach it. The wire codec is its own entry point, "sidekiq-bridge/wire"; the
// web dashboard is "sidekiq-bridge/web".

// Client: enqueue from Node, for Ruby (or Node) workers.
export { Client } from "./core/client/client.js";
export type { ClientOptions } from "./core/client/client-options.js";
export { ContractError } from "./core/contract/checker.js";
export { readContractFile, parseContract, type JobContract } from "./tools/contract/document.js";
export type { ContractTypes } from "./core/contract/types.js";
export type { BulkItem } from "./core/client/client-types.js";
export type { PushItem, JobOptions } from "./core/client/normalize.js";
export type { ClientMiddleware, ClientMiddlewareContext } from "./core/client/middleware.js";
export {
  aj,
  AjValue,
  type AjKwargs,
  ActiveJobSerializationError,
  type ActiveJobOptions,
} from "./core/client/activejob.js";
export {
  SidekiqArgumentError,
  DialectDetectionError,
  BulkPushError,
  PushUncertainError,
} from "./core/client/errors.js";
export type { RedisSource } from "./core/redis/connection.js";
export { RedisUnavailableError, RedisOutOfMemoryError } from "./core/redis/availability.js";
export { RedisPermissionError, BRIDGE_COMMANDS, bridgeAclRules } from "./core/redis/acl.js";

// Worker: process Sidekiq jobs in Node.
export { Worker, type WorkerOptions } from "./assembly/worker.js";
export {
  JobRetrySkip,
  type JobContext,
  type JobHandler,
  type HandlerOptions,
  type DeathHandler,
} from "./core/server/types.js";
export { UnknownJobClassError, type ServerMiddleware, type ServerMiddlewareContext } from "./core/server/processor.js";
export { consoleLogger, type Logger } from "./core/logging/logger.js";
export { GlobalIdRef, AjSerialized, AjDuration, AjRange, AjModule } from "./core/wire/activejob-values.js";
export {
  arrayEnumerator,
  type IterableJob,
  type IterableOptions,
  type IterationContext,
} from "./core/iterable/iterable.js";
export { cancelIterableJob, iterationProgress, IterationStateError } from "./core/iterable/iterable-state.js";

// API: Sidekiq's Ruby API (Sidekiq::Stats, Queue, sets, processes, metrics) for Node.
export { SidekiqApi, type ApiOptions } from "./core/api/sidekiq-api.js";
export { Queue, type QueueEntry } from "./core/api/queue.js";
export type { JobView } from "./core/api/job-entry.js";
export { SortedJobSet } from "./core/api/sorted-set.js";
export { ScheduledSet, RetrySet, DeadSet } from "./core/api/job-sets.js";
export { JobSetError, type SortedEntry } from "./core/api/sorted-entry.js";
export { BulkActionError } from "./core/api/bulk-action.js";
export { ProcessSet } from "./core/api/process-set.js";
export {
  ProcessNotFoundError,
  EmbeddedProcessError,
  type ProcessInfo,
  type ProcessSide,
} from "./core/api/process-hash.js";
